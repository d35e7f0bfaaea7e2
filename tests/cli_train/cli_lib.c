/* A shared library for run_cli.sh: loaded through LD_LIBRARY_PATH=. its name
 * is relative ("./libcli_lib.so"), and training must still hook it. */
static volatile int lib_sink;

__attribute__((noinline)) int lib_work(int n)
{
	for (int i = 0; i < n; i++)
		lib_sink += i;
	return 2 * n;
}
