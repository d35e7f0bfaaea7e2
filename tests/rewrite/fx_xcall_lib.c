/* fx_xcall_lib.c: the library of run_xcall.sh: fx_tag_leaf as fx_tags_lib.c
 * has it, and after it a function aligned to 64 bytes, so that the padding
 * between them has room for the marker of the page (rewriter.h section 1,
 * Cross-module calls), which fx_tags_lib.so lacks. */
__attribute__((noinline)) int fx_tag_leaf(int x)
{
	volatile int v = x;
	return v * 7 + 1;
}

__attribute__((noinline, aligned(64))) int fx_xcall_after(int x)
{
	volatile int v = x;
	return v * 5 + 3;
}

/* a forwarder: only jumps on to the leaf (through the PLT: the leaf may be
 * interposed), so the leaf's frames replace its own */
__attribute__((noinline)) int fx_fwd(int x)
{
	return fx_tag_leaf(x);
}
