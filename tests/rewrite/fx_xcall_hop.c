/* fx_xcall_hop.c: the middle library of run_xcall.sh's forwarders to a
 * third module, as libstdc++'s operator delete to libc's free: fx_hop only
 * jumps on to fx_xcall_lib.so's leaf through this library's PLT (its GOT
 * slot filled by the other library), fx_hop_sized only to fx_hop through
 * its own.  After them fx_hop_work, long enough to take an entry patch,
 * and a function aligned to 64 bytes, so that the padding between those
 * two has room for the marker of their page (rewriter.h section 1,
 * Cross-module calls). */
int fx_tag_leaf(int x);
int fx_hop(int x);

__attribute__((noinline)) int fx_hop(int x)
{
	return fx_tag_leaf(x);
}

__attribute__((noinline)) int fx_hop_sized(int x, int size)
{
	(void)size;
	return fx_hop(x);
}

__attribute__((noinline)) int fx_hop_work(int x)
{
	volatile int v = x;
	v += 3;
	v *= 5;
	return v ^ 7;
}

__attribute__((noinline, aligned(64))) int fx_hop_after(int x)
{
	volatile int v = x;
	return v * 3 + 1;
}
