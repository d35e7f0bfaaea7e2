/* test_binary: binary/ against fixtures with known flags (tests/binary/
 * fixtures), their stripped copies, readelf's view of them, bad inputs, and
 * the real Debian binaries this project profiles. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "binary/binary.h"
#include "tests/check.h"

static char err[512];

static struct bin_module *open_ok(const char *path)
{
	struct bin_module *m = bin_open(path, err, sizeof(err));
	if (!m)
		fprintf(stderr, "bin_open: %s\n", err);
	CHECK(m != NULL);
	return m;
}

/* The only function carrying this name (symbol as in the ELF). */
static const struct bin_function *by_name(struct bin_module *m, const char *name)
{
	size_t n;
	const struct bin_function *f = bin_functions(m, &n), *found = NULL;
	for (size_t i = 0; i < n; i++) {
		if (f[i].name && !strcmp(f[i].name, name)) {
			CHECK(found == NULL);
			found = &f[i];
		}
	}
	return found;
}

static int cfa_is(struct bin_module *m, uint64_t pc, enum bin_cfa_reg reg, int64_t off)
{
	struct bin_cfa r;
	if (bin_cfa_at(m, pc, &r) != 0) {
		fprintf(stderr, "no CFA rule at %#" PRIx64 "\n", pc);
		return 0;
	}
	if (r.reg != reg || r.offset != off)
		fprintf(stderr, "CFA at %#" PRIx64 " is r%d+%" PRId64 "\n", pc, r.reg, r.offset);
	return r.reg == reg && r.offset == off;
}

/* ---- readelf as the oracle ------------------------------------------------ */

struct esym {
	uint64_t addr, size;
	char name[256], bind[16];
};

/* FUNC/IFUNC symbols with a size from the .symtab part of `readelf -sW`. */
static size_t readelf_funcs(const char *path, struct esym *out, size_t max)
{
	FILE *f = fopen(path, "r");
	CHECK(f != NULL);
	if (!f)
		return 0;
	char line[1024];
	size_t n = 0;
	int in_symtab = 0;
	while (fgets(line, sizeof(line), f)) {
		if (strstr(line, "Symbol table '"))
			in_symtab = strstr(line, "'.symtab'") != NULL;
		struct esym s;
		char type[16], vis[16], ndx[16];
		if (!in_symtab || sscanf(line, "%*u: %" SCNx64 " %" SCNi64 " %15s %15s %15s %15s %255s",
					 &s.addr, &s.size, type, s.bind, vis, ndx, s.name) != 7)
			continue;
		if ((strcmp(type, "FUNC") && strcmp(type, "IFUNC")) || !s.size || !strcmp(ndx, "UND"))
			continue;
		if (n < max)
			out[n++] = s;
	}
	fclose(f);
	return n;
}

/* Every symtab function is one entry at its address, named by one of the
 * symbols there, as large as the largest but ending where the next symbol
 * starts; nothing else carries a name. */
static void check_symtab_matches(struct bin_module *m, const char *syms_path)
{
	static struct esym e[4096];
	size_t ne = readelf_funcs(syms_path, e, 4096), distinct = 0;
	CHECK(ne > 5);
	for (size_t i = 0; i < ne; i++) {
		const struct bin_function *f = bin_function_at(m, e[i].addr);
		CHECK(f && f->addr == e[i].addr && !f->from_fde && f->name);
		if (!f || !f->name)
			continue;
		int same_name = 0, first = 1;
		uint64_t size = 0, next = UINT64_MAX;
		for (size_t j = 0; j < ne; j++) {
			if (e[j].addr > e[i].addr && e[j].addr < next)
				next = e[j].addr;
			if (e[j].addr != e[i].addr)
				continue;
			same_name |= !strcmp(e[j].name, f->name);
			size = e[j].size > size ? e[j].size : size;
			first &= j >= i;
		}
		if (next - e[i].addr < size)
			size = next - e[i].addr;
		CHECK(same_name);
		CHECK_EQ_INT(f->size, size);
		distinct += first;
	}
	size_t n, named = 0;
	const struct bin_function *f = bin_functions(m, &n);
	for (size_t i = 0; i < n; i++)
		named += f[i].name != NULL;
	CHECK_EQ_INT(named, distinct);
}

static int hexval(int c)
{
	return c <= '9' ? c - '0' : (c | 0x20) - 'a' + 10;
}

static void check_build_id(struct bin_module *m, const char *notes_path)
{
	FILE *f = fopen(notes_path, "r");
	CHECK(f != NULL);
	char line[512], hex[129] = "";
	while (f && fgets(line, sizeof(line), f))
		if (sscanf(line, " Build ID: %128s", hex) == 1)
			break;
	if (f)
		fclose(f);
	const uint8_t *id;
	size_t len = bin_build_id(m, &id);
	CHECK_EQ_INT(len, strlen(hex) / 2);
	CHECK_EQ_INT(len, 20);
	for (size_t i = 0; i < len && i < 64; i++)
		CHECK_EQ_INT(id[i], hexval(hex[2 * i]) * 16 + hexval(hex[2 * i + 1]));
}

/* ---- fixtures --------------------------------------------------------------- */

static void check_layout(struct bin_module *m)
{
	size_t n;
	const struct bin_function *f = bin_functions(m, &n);
	CHECK(n > 0);
	for (size_t i = 0; i < n; i++) {
		CHECK(f[i].size > 0);
		CHECK(i == 0 || f[i - 1].addr + f[i - 1].size <= f[i].addr);
		CHECK(bin_function_at(m, f[i].addr) == &f[i]);
		CHECK(bin_function_at(m, f[i].addr + f[i].size - 1) == &f[i]);
		/* a debug file names functions the file's own symbols do not */
		CHECK(f[i].from_fde == (f[i].name == NULL) || (bin_debug_file(m) && f[i].name));
	}
	CHECK(bin_function_at(m, f[0].addr - 1) == NULL);
	CHECK(bin_function_at(m, f[n - 1].addr + f[n - 1].size) == NULL);
}

/* gcc -O0 -fno-omit-frame-pointer: [endbr64] push %rbp; mov %rsp,%rbp ...
 * pop %rbp (or leave); ret. */
static void check_fp_prologue(struct bin_module *m, const struct bin_function *f)
{
	uint8_t b[8];
	CHECK(bin_read(m, f->addr, b, sizeof(b)) == 0);
	uint64_t at = f->addr + (b[0] == 0xf3 && b[1] == 0x0f && b[2] == 0x1e && b[3] == 0xfa ? 4 : 0);
	CHECK(bin_read(m, at, b, 4) == 0);
	CHECK(b[0] == 0x55 && b[1] == 0x48 && b[2] == 0x89 && b[3] == 0xe5);
	CHECK(cfa_is(m, f->addr, BIN_CFA_RSP, 8));
	CHECK(cfa_is(m, at + 1, BIN_CFA_RSP, 16));
	CHECK(cfa_is(m, at + 4, BIN_CFA_RBP, 16));
	CHECK(bin_read(m, f->addr + f->size - 1, b, 1) == 0);
	CHECK_EQ_INT(b[0], 0xc3);
	CHECK(cfa_is(m, f->addr + f->size - 1, BIN_CFA_RSP, 8));
}

static void check_exec_range(struct bin_module *m, const struct bin_function *f)
{
	uint64_t start, end;
	CHECK(bin_exec_range(m, f->addr, &start, &end) == 0);
	CHECK(start <= f->addr && f->addr + f->size <= end);
	CHECK(bin_exec_range(m, bin_load_base(m), &start, &end) != 0); /* the ELF header */
	uint8_t b;
	CHECK(bin_read(m, end + (1ull << 40), &b, 1) != 0);
	CHECK(bin_read(m, f->addr, &b, (size_t)1 << 40) != 0);
}

/* The source line of the LINE-MARK comment naming fn. */
static int marked_line(const char *fn)
{
	FILE *f = fopen(FX_MAIN_SRC, "r");
	CHECK(f != NULL);
	char line[512], mark[128];
	snprintf(mark, sizeof(mark), "LINE-MARK %s ", fn);
	int n = 0, found = 0;
	while (f && !found && fgets(line, sizeof(line), f)) {
		n++;
		found = strstr(line, mark) != NULL;
	}
	if (f)
		fclose(f);
	return found ? n : -1;
}

static void check_lines(const char *path)
{
	struct bin_module *m = open_ok(path);
	if (!m)
		return;
	const struct bin_function *f = by_name(m, "fx_lined");
	struct bin_symbol s;
	CHECK(f && bin_symbolize(m, f->addr + 3, &s) == 0);
	CHECK_EQ_STR(s.name, "fx_lined");
	CHECK_EQ_INT(s.offset, 3);
	CHECK(s.file && strstr(s.file, "fixtures/fx_main.c"));
	CHECK_EQ_INT(s.line, marked_line("fx_lined"));
	bin_close(m);
}

static void test_o0_fp(void)
{
	struct bin_module *m = open_ok(FX_O0_FP);
	if (!m)
		return;
	CHECK(bin_is_pic(m));
	CHECK(bin_has_interp(m));
	/* its dynamic loader, from the program headers alone too */
	CHECK(bin_interp(m) && strstr(bin_interp(m), "/ld-linux-x86-64.so.2"));
	struct bin_peek peek;
	CHECK(bin_peek(FX_O0_FP, &peek) == 0 && peek.program);
	CHECK(peek.interp && bin_interp(m) && !strcmp(peek.interp, bin_interp(m)));
	free(peek.interp);
	CHECK_EQ_INT(bin_load_base(m), 0);
	check_layout(m);
	check_symtab_matches(m, FX_OUT "/binfx_o0_fp.syms");
	check_build_id(m, FX_OUT "/binfx_o0_fp.notes");
	const struct bin_function *leaf = by_name(m, "fx_fp_leaf");
	CHECK(leaf != NULL);
	CHECK(bin_function_at(m, leaf->addr + 1) == leaf);
	if (leaf) {
		check_fp_prologue(m, leaf);
		check_exec_range(m, leaf);
	}
	CHECK(by_name(m, "fx_w") == NULL); /* weak alias: the global name wins */
	const struct bin_function *big = by_name(m, "fx_big_frame");
	if (big)
		check_fp_prologue(m, big);
	CHECK(by_name(m, "fx_static") != NULL);
	const struct bin_function *outer = by_name(m, "asm_outer"), *inner = by_name(m, "asm_inner");
	CHECK(outer && inner && outer->size == 1 && inner->addr == outer->addr + 1);
	CHECK(inner && inner->size == 2 && bin_function_at(m, inner->addr + 2) == NULL);
	const struct bin_function *alias = by_name(m, "asm_b");
	CHECK(alias && alias->size == 4 && by_name(m, "asm_big") == NULL);
	bin_close(m);
	check_lines(FX_O0_FP);
	check_lines(FX_OUT "/binfx_o0_fp.noaranges");
}

/* Inside a no-frame-pointer function every rule is rsp-based, 8 at entry and
 * at least the array deeper after the allocation. */
static void test_o2_nofp(void)
{
	struct bin_module *m = open_ok(FX_O2_NOFP);
	if (!m)
		return;
	CHECK(!bin_is_pic(m));
	CHECK(bin_has_interp(m));
	CHECK_EQ_INT(bin_load_base(m), 0x400000);
	check_layout(m);
	check_symtab_matches(m, FX_OUT "/binfx_o2_nofp.syms");
	const struct bin_function *big = by_name(m, "fx_big_frame");
	CHECK(big != NULL);
	int64_t deepest = 0;
	for (uint64_t pc = big ? big->addr : 0; big && pc < big->addr + big->size; pc++) {
		struct bin_cfa r;
		CHECK(bin_cfa_at(m, pc, &r) == 0);
		CHECK_EQ_INT(r.reg, BIN_CFA_RSP);
		CHECK_EQ_INT(r.offset % 8, 0);
		deepest = r.offset > deepest ? r.offset : deepest;
	}
	CHECK(big && cfa_is(m, big->addr, BIN_CFA_RSP, 8));
	CHECK(deepest >= 256 * 4 + 8);
	/* The cold part is its own function, next to nothing of its parent. */
	const struct bin_function *hot = by_name(m, "fx_with_cold");
	const struct bin_function *cold = by_name(m, "fx_with_cold.cold");
	CHECK(hot && cold && hot != cold);
	struct bin_symbol s;
	CHECK(cold && bin_symbolize(m, cold->addr, &s) == 0);
	CHECK_EQ_STR(s.name, "fx_with_cold.cold");
	bin_close(m);
}

/* The lazy .plt: stubs of 16 bytes after the resolver's entry, and the CFA
 * binutils describes by an expression of rip (rsp + 8 until the stub has
 * pushed the relocation index at +11, then rsp + 16).  A stripped file has the
 * same. */
static void test_lazy_plt(const char *path)
{
	struct bin_module *m = open_ok(path);
	if (!m)
		return;
	size_t n;
	const struct bin_function *f = bin_functions(m, &n);
	uint64_t lo = 0, hi = 0, s_lo, s_hi;
	for (size_t i = 0; i < n && !hi; i++)
		if (bin_plt_stub(m, f[i].addr, &lo, NULL) && lo == f[i].addr)
			hi = f[i].addr + f[i].size;
	CHECK(hi >= lo + 32);
	for (uint64_t stub = lo + 16; hi && stub < hi; stub += 16) {
		CHECK(bin_plt_stub(m, stub + 7, &s_lo, &s_hi));
		CHECK_EQ_INT(s_lo, stub);
		CHECK_EQ_INT(s_hi, stub + 16);
		CHECK(cfa_is(m, stub, BIN_CFA_RSP, 8));
		CHECK(cfa_is(m, stub + 10, BIN_CFA_RSP, 8));
		CHECK(cfa_is(m, stub + 11, BIN_CFA_RSP, 16));
		CHECK(cfa_is(m, stub + 15, BIN_CFA_RSP, 16));
	}
	/* The resolver's entry: pushed index, then GOT[1]. */
	CHECK(cfa_is(m, lo, BIN_CFA_RSP, 16));
	CHECK(cfa_is(m, lo + 6, BIN_CFA_RSP, 24));
	CHECK(bin_plt_stub(m, lo + 3, &s_lo, &s_hi) && s_lo == lo && s_hi == lo + 16);
	const struct bin_function *big = by_name(m, "fx_big_frame");
	CHECK(!big || !bin_plt_stub(m, big->addr, NULL, NULL));
	bin_close(m);
}

/* Stripped: the same starts and sizes from the FDEs, the same build-id. */
static void test_stripped(const char *full_path, const char *stripped_path)
{
	struct bin_module *full = open_ok(full_path), *str = open_ok(stripped_path);
	if (!full || !str) {
		bin_close(full);
		bin_close(str);
		return;
	}
	check_layout(str);
	size_t nf, ns;
	const struct bin_function *f = bin_functions(full, &nf), *s = bin_functions(str, &ns);
	for (size_t i = 0; i < ns; i++) {
		const struct bin_function *g = bin_function_at(full, s[i].addr);
		CHECK(g && g->addr == s[i].addr);
		CHECK(s[i].from_fde);
	}
	for (size_t i = 0; i < nf; i++) {
		if (!f[i].name || strncmp(f[i].name, "fx_", 3))
			continue;
		const struct bin_function *g = bin_function_at(str, f[i].addr);
		CHECK(g && g->addr == f[i].addr && g->size == f[i].size);
	}
	const uint8_t *id1, *id2;
	size_t l1 = bin_build_id(full, &id1), l2 = bin_build_id(str, &id2);
	CHECK(l1 == 20 && l2 == l1 && !memcmp(id1, id2, l1));
	struct bin_symbol sym;
	CHECK(bin_symbolize(str, s[0].addr + 1, &sym) == 0);
	CHECK(sym.file == NULL);
	char want[64];
	snprintf(want, sizeof(want), "fn@0x%" PRIx64, s[0].addr);
	CHECK_EQ_STR(sym.name, want);
	bin_close(full);
	bin_close(str);
}

/* The exported names survive strip through .dynsym; static ones become
 * FDE-only functions. */
static void test_shared_lib(void)
{
	struct bin_module *m = open_ok(FX_LIB), *str = open_ok(FX_OUT "/libbinfx_lib.stripped.so");
	if (!m || !str) {
		bin_close(m);
		bin_close(str);
		return;
	}
	CHECK(bin_is_pic(m));
	CHECK(!bin_has_interp(m));
	struct bin_peek peek;
	CHECK(!bin_interp(m) && bin_peek(FX_LIB, &peek) == 0 && !peek.interp && !peek.program);
	CHECK(bin_peek(FX_OUT "/does-not-exist", &peek) < 0 && !peek.interp);
	CHECK_EQ_INT(bin_load_base(m), 0);
	const char *names[] = {"fxlib_add", "fxlib_mul", "fxlib_hidden", "fxlib_helper"};
	for (int i = 0; i < 4; i++) {
		const struct bin_function *f = by_name(m, names[i]), *g;
		CHECK(f != NULL);
		if (!f)
			continue;
		g = bin_function_at(str, f->addr);
		CHECK(g && g->addr == f->addr && g->size == f->size);
		CHECK(g && g->from_fde == (i >= 2));
		if (g && i < 2)
			CHECK_EQ_STR(g->name, names[i]);
	}
	bin_close(m);
	bin_close(str);
}

static void test_cxx(void)
{
	struct bin_module *m = open_ok(FX_CXX);
	if (!m)
		return;
	const struct bin_function *f = by_name(m, "_ZN2ns5Klass6methodEi");
	const struct bin_function *t = by_name(m, "_ZN2ns5twiceIlEET_S1_");
	struct bin_symbol s;
	CHECK(f && bin_symbolize(m, f->addr + 2, &s) == 0);
	CHECK_EQ_STR(s.name, "ns::Klass::method(int)");
	CHECK_EQ_INT(s.offset, 2);
	CHECK(s.file && strstr(s.file, "fx_cxx.cpp") && s.line > 0);
	CHECK(t && bin_symbolize(m, t->addr, &s) == 0);
	CHECK_EQ_STR(s.name, "long ns::twice<long>(long)");
	bin_close(m);

	char buf[64];
	CHECK_EQ_STR(bin_demangle("_ZN2ns5Klass6methodEi", buf, sizeof(buf)), "ns::Klass::method(int)");
	CHECK_EQ_STR(bin_demangle("main", buf, sizeof(buf)), "main");
	CHECK_EQ_STR(bin_demangle("_Z_not_mangled", buf, sizeof(buf)), "_Z_not_mangled");
	CHECK_EQ_STR(bin_demangle("_ZN2ns5Klass6methodEi", buf, 8), "ns::Kla");
	CHECK_EQ_STR(bin_demangle("_Z3foov.cold", buf, sizeof(buf)), "foo() [clone .cold]");
}

/* -fno-asynchronous-unwind-tables: the CFA comes from .debug_frame, and is
 * gone with it. */
static void test_debug_frame(void)
{
	struct bin_module *m = open_ok(FX_DBGFRAME), *nd = open_ok(FX_OUT "/binfx_dbgframe.nodebug");
	const struct bin_function *f = m ? by_name(m, "fx_fp_leaf") : NULL;
	CHECK(f != NULL);
	if (f && nd) {
		check_fp_prologue(m, f);
		struct bin_cfa r;
		CHECK(bin_cfa_at(nd, f->addr + 1, &r) != 0);
		CHECK(by_name(nd, "fx_fp_leaf") != NULL);
	}
	bin_close(m);
	bin_close(nd);
}

/* ---- bad input ---------------------------------------------------------------- */

static void *slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	CHECK(f != NULL);
	if (!f)
		return NULL;
	fseek(f, 0, SEEK_END);
	*len = (size_t)ftell(f);
	rewind(f);
	void *buf = malloc(*len);
	CHECK(buf && fread(buf, 1, *len, f) == *len);
	fclose(f);
	return buf;
}

static void spit(const char *path, const void *buf, size_t len)
{
	FILE *f = fopen(path, "wb");
	CHECK(f && fwrite(buf, 1, len, f) == len);
	if (f)
		fclose(f);
}

/* NULL and one line naming the file and containing `why`. */
static void check_rejected(const char *path, const char *why)
{
	struct bin_module *m = bin_open(path, err, sizeof(err));
	CHECK(m == NULL);
	bin_close(m);
	if (!strstr(err, path) || !strstr(err, why) || strchr(err, '\n'))
		fprintf(stderr, "%s: unexpected error \"%s\"\n", path, err);
	CHECK(strstr(err, path) && strstr(err, why) && !strchr(err, '\n'));
}

/* Whatever opens must answer every call without crashing. */
static void exercise(struct bin_module *m)
{
	size_t n;
	const struct bin_function *f = bin_functions(m, &n);
	for (size_t i = 0; i < n; i++) {
		struct bin_cfa r;
		struct bin_symbol s;
		uint64_t lo, hi;
		uint8_t b[16];
		bin_cfa_at(m, f[i].addr + f[i].size / 2, &r);
		bin_symbolize(m, f[i].addr, &s);
		bin_exec_range(m, f[i].addr, &lo, &hi);
		bin_read(m, f[i].addr, b, sizeof(b));
	}
}

static void test_bad_input(void)
{
	const char *tmp = FX_OUT "/bad.elf";
	check_rejected(FX_OUT "/does-not-exist", "No such file");
	check_rejected(FX_OUT, "not a regular file");
	spit(tmp, "#!/bin/sh\necho hello\n", 21);
	check_rejected(tmp, "not an ELF file");
	spit(tmp, "", 0);
	check_rejected(tmp, "not an ELF file");

	size_t len;
	uint8_t *img = slurp(FX_O0_FP, &len), *copy = img ? malloc(len) : NULL;
	if (!copy) {
		free(img);
		return;
	}
	struct { size_t off; uint8_t val; const char *why; } patch[] = {
		{4, 1, "not a 64-bit ELF"},       /* EI_CLASS = ELFCLASS32 */
		{18, 183, "not x86-64"},           /* e_machine = EM_AARCH64 */
		{16, 1, "not an executable or shared object"}, /* ET_REL */
	};
	for (size_t i = 0; i < sizeof(patch) / sizeof(patch[0]); i++) {
		memcpy(copy, img, len);
		copy[patch[i].off] = patch[i].val;
		spit(tmp, copy, len);
		check_rejected(tmp, patch[i].why);
	}
	/* a PT_INTERP whose path does not end within its segment */
	uint64_t phoff;
	uint16_t phentsize, phnum;
	memcpy(&phoff, img + 32, 8);
	memcpy(&phentsize, img + 54, 2);
	memcpy(&phnum, img + 56, 2);
	bool interp_seen = false;
	for (uint16_t i = 0; i < phnum && phoff + (uint64_t)(i + 1) * phentsize <= len; i++) {
		const uint8_t *ph = img + phoff + (uint64_t)i * phentsize;
		uint32_t type;
		uint64_t off, filesz;
		memcpy(&type, ph, 4);
		memcpy(&off, ph + 8, 8);
		memcpy(&filesz, ph + 32, 8);
		if (type != 3 /* PT_INTERP */ || off + filesz > len)
			continue;
		memcpy(copy, img, len);
		memset(copy + off, 'x', filesz);
		spit(tmp, copy, len);
		check_rejected(tmp, "corrupt PT_INTERP");
		struct bin_peek peek;
		CHECK(bin_peek(tmp, &peek) < 0 && !peek.interp);
		interp_seen = true;
	}
	CHECK(interp_seen);
	size_t cuts[] = {4, 16, 63, 64, 200, 1000, len / 2, len - 100, len - 1};
	for (size_t i = 0; i < sizeof(cuts) / sizeof(cuts[0]); i++) {
		spit(tmp, img, cuts[i]);
		check_rejected(tmp, "");
	}
	/* Random byte damage anywhere after the ELF header: no crash. */
	srand(12345);
	for (int round = 0; round < 300; round++) {
		memcpy(copy, img, len);
		for (int k = 0; k < 1 + round % 16; k++)
			copy[64 + (size_t)rand() % (len - 64)] = (uint8_t)rand();
		spit(tmp, copy, len);
		struct bin_module *m = bin_open(tmp, err, sizeof(err));
		if (m)
			exercise(m);
		bin_close(m);
	}
	free(img);
	free(copy);
	remove(tmp);
}

/* ---- the Debian binaries icpp profiles ---------------------------------------- */

static double ms_since(const struct timespec *t0)
{
	struct timespec t1;
	clock_gettime(CLOCK_MONOTONIC, &t1);
	return (double)(t1.tv_sec - t0->tv_sec) * 1e3 + (double)(t1.tv_nsec - t0->tv_nsec) / 1e6;
}

/* Opens in time; n functions or more; every function's entry has a CFA rule
 * (only PLT-like stubs and gcc's .cold parts, which continue their parent's
 * frame, do not start at rsp+8). */
static struct bin_module *check_system(const char *path, size_t min_funcs)
{
	FILE *probe = fopen(path, "rb");
	if (!probe) {
		fprintf(stderr, "skip %s: not installed\n", path);
		return NULL;
	}
	fclose(probe);
	struct timespec t0;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	struct bin_module *m = open_ok(path);
	double ms = ms_since(&t0);
	if (!m)
		return NULL;
	CHECK(ms < 100);
	check_layout(m);
	size_t n, fde = 0, rsp8 = 0;
	const struct bin_function *f = bin_functions(m, &n);
	CHECK(n >= min_funcs);
	for (size_t i = 0; i < n; i++) {
		struct bin_cfa r;
		fde += f[i].from_fde;
		rsp8 += bin_cfa_at(m, f[i].addr, &r) == 0 && r.reg == BIN_CFA_RSP && r.offset == 8;
	}
	CHECK(rsp8 * 100 >= n * 95);
	CHECK(fde > 0);
	const uint8_t *id;
	CHECK_EQ_INT(bin_build_id(m, &id), 20);
	CHECK(bin_is_pic(m));
	return m;
}

static void test_system(void)
{
	struct bin_module *m = check_system("/usr/bin/bzip2", 20);
	if (m) {
		CHECK(bin_has_interp(m));
		size_t n;
		const struct bin_function *f = bin_functions(m, &n);
		for (size_t i = 0; i < n; i++)
			CHECK(f[i].from_fde); /* no .symtab, .dynsym only imports */
	}
	bin_close(m);

	m = check_system("/usr/lib/x86_64-linux-gnu/libc.so.6", 1000);
	if (m) {
		const struct bin_function *f = by_name(m, "malloc");
		CHECK(f && !f->from_fde);
		CHECK(f && cfa_is(m, f->addr, BIN_CFA_RSP, 8));
		struct bin_symbol s;
		CHECK(f && bin_symbolize(m, f->addr + 4, &s) == 0 && !strcmp(s.name, "malloc"));
		size_t n, fde = 0;
		const struct bin_function *all = bin_functions(m, &n);
		for (size_t i = 0; i < n; i++)
			fde += all[i].from_fde;
		CHECK(fde > 500);
	}
	bin_close(m);

	m = check_system("/usr/lib/x86_64-linux-gnu/libbz2.so.1.0", 20);
	CHECK(!m || by_name(m, "BZ2_bzCompress") != NULL);
	bin_close(m);
	bin_close(check_system("/usr/bin/lua5.4", 300));
	m = check_system("/lib64/ld-linux-x86-64.so.2", 100);
	CHECK(!m || !bin_has_interp(m));
	bin_close(m);
}

/* Open path with ICPP_DEBUGINFO_PATH set to path_env (NULL: unset). */
static struct bin_module *open_with_debuginfo(const char *path, const char *path_env)
{
	if (path_env)
		setenv("ICPP_DEBUGINFO_PATH", path_env, 1);
	else
		unsetenv("ICPP_DEBUGINFO_PATH");
	struct bin_module *m = open_ok(path);
	unsetenv("ICPP_DEBUGINFO_PATH");
	return m;
}

/* stripped_path, opened with the debug file path_env leads to (whose path
 * holds debug_in): the functions it has alone, each fx_ one named as in
 * full_path, and fx_lined's source line. */
static void check_debug_file(const char *full_path, const char *stripped_path,
			     const char *path_env, const char *debug_in)
{
	struct bin_module *full = open_ok(full_path);
	struct bin_module *bare = open_with_debuginfo(stripped_path, "/nonexistent");
	struct bin_module *named = open_with_debuginfo(stripped_path, path_env);
	if (!full || !bare || !named)
		goto out;
	CHECK(!bin_debug_file(full) && !bin_debug_file(bare));
	CHECK(bin_debug_file(named) && strstr(bin_debug_file(named), debug_in));
	size_t nb, nn, nf;
	const struct bin_function *b = bin_functions(bare, &nb), *n = bin_functions(named, &nn);
	const struct bin_function *f = bin_functions(full, &nf);
	CHECK_EQ_INT(nn, nb);
	for (size_t i = 0; i < nb && i < nn; i++)
		CHECK(n[i].addr == b[i].addr && n[i].size == b[i].size &&
		      n[i].from_fde == b[i].from_fde);
	size_t checked = 0;
	for (size_t i = 0; i < nf; i++) {
		if (!f[i].name || strncmp(f[i].name, "fx_", 3))
			continue;
		const struct bin_function *g = bin_function_at(named, f[i].addr);
		CHECK(g && g->addr == f[i].addr && g->name && !strcmp(g->name, f[i].name));
		CHECK(!bin_function_at(bare, f[i].addr)->name);
		checked++;
	}
	CHECK(checked >= 5);
	const struct bin_function *lined = by_name(named, "fx_lined");
	struct bin_symbol sym;
	/* the file and line the unstripped file gives (at -O2 fx_lined's
	 * first instruction is its body's line) */
	struct bin_symbol want;
	CHECK(lined && bin_symbolize(named, lined->addr + 3, &sym) == 0);
	CHECK(lined && bin_symbolize(full, lined->addr + 3, &want) == 0);
	CHECK_EQ_STR(sym.name, "fx_lined");
	CHECK(sym.file && want.file && strstr(sym.file, "fixtures/fx_main.c") &&
	      !strcmp(sym.file, want.file));
	CHECK_EQ_INT(sym.line, want.line);
	CHECK(sym.line == marked_line("fx_lined") || sym.line == marked_line("fx_lined") + 1);
	CHECK(lined && bin_symbolize(bare, lined->addr + 3, &sym) == 0 && !sym.file);
out:
	bin_close(full);
	bin_close(bare);
	bin_close(named);
}

/* Separate debug files: found by build-id and by .gnu_debuglink (the
 * directory of the file: the "" element), and refused when they belong to
 * another binary (o0's debug file under o2's build-id). */
static void test_debug_files(void)
{
	check_debug_file(FX_O0_FP, FX_OUT "/binfx_o0_fp.stripped", FX_OUT "/debugroot",
			 "/debugroot/.build-id/");
	check_debug_file(FX_O2_NOFP, FX_OUT "/linked/binfx_o2_nofp.linked", "/nonexistent:",
			 "/linked/binfx_o2_nofp.debug");
	struct bin_module *m = open_with_debuginfo(FX_OUT "/binfx_o2_nofp.stripped",
						   FX_OUT "/wrongroot");
	if (!m)
		return;
	CHECK(!bin_debug_file(m));
	size_t n;
	const struct bin_function *f = bin_functions(m, &n);
	for (size_t i = 0; i < n; i++)
		CHECK(!f[i].name || strncmp(f[i].name, "fx_", 3));
	bin_close(m);
}

int main(void)
{
	test_o0_fp();
	test_o2_nofp();
	test_stripped(FX_O0_FP, FX_OUT "/binfx_o0_fp.stripped");
	test_stripped(FX_O2_NOFP, FX_OUT "/binfx_o2_nofp.stripped");
	test_lazy_plt(FX_O2_NOFP);
	test_lazy_plt(FX_OUT "/binfx_o2_nofp.stripped");
	test_shared_lib();
	test_cxx();
	test_debug_frame();
	test_bad_input();
	test_system();
	test_debug_files();
	return check_exit();
}
