/* fx_imports_main.c: calls into fx_imports_lib through the PLT from a frame
 * whose locals lie right above its outgoing arguments (no frame pointer, a
 * large local array), so that its own code bounds none of them. */
#include <stdio.h>
#include <string.h>

long sum10(long, long, long, long, long, long, long, long, long, long);
#define L10 long, long, long, long, long, long, long, long, long, long
long sum50(L10, L10, L10, L10, L10);
long sum2(long, long);
long vsum(int, ...);
long pick(long);

__attribute__((noinline)) static long work(const char *arg)
{
	char buf[1024];        /* more than a trampoline copies (RW_MAX_COPY) */
	long t = 0;
	strncpy(buf, arg, sizeof(buf) - 1);
	buf[sizeof(buf) - 1] = 0;
	for (size_t i = 0; buf[i]; i++) {
		long c = buf[i];
		t += sum10(c, t, 3, 4, 5, 6, c, t, 9, c);
		t += sum2(c, t);
		t += sum50(c, t, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21,
			   22, 23, 24, 25, 26, 27, 28, 29, 30, 31, 32, 33, 34, 35, 36, 37, 38, 39,
			   40, 41, 42, 43, 44, 45, 46, 47, c, t, i);
		t += vsum(6, c, t, 3L, 4L, 5L, 6L, 7L, 8L);
		t += pick(c);
		t %= 1000003;
	}
	return t;
}

int main(int argc, char **argv)
{
	for (int i = 1; i < argc; i++)
		printf("%s %ld\n", argv[i], work(argv[i]));
	return 0;
}
