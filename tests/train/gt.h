/* gt.h: ground truth for training tests, recorded by the test programs
 * themselves, without icpp.
 *
 * Every test function starts with GT_ENTER().  It records, into a
 * preallocated buffer and without calling anything:
 *   - a PC inside the function (the checker maps it to the function start),
 *   - the return address (callsite = return address - 1),
 *   - CFA = __builtin_dwarf_cfa() (SP just before the call: entry SP + 8),
 *   - base (method.md): main thread = mm->start_stack (/proc/self/stat field
 *     28, read once at start), other threads = fs base (%fs:0),
 *   - in frame-pointer builds (GT_FP=1) the rbp chain: for every caller frame
 *     its CFA (rbp + 16) and its return address.  The chain is walked while
 *     rbp stays inside [rbp, base); the checker cuts it where a caller is not
 *     a test function of a frame-pointer module.
 * It also checks, per entry, that *(CFA - 8) is the return address (so CFA is
 * SP before the call) and, in FP builds, that CFA == rbp + 16.
 *
 * GT_ENTER also puts the PC into the section gt_funcs, so the module knows
 * all of its test functions, entered or not.
 *
 * Records are written, with addresses as (module, ELF vaddr), to
 * $ICPP_GT/gt.<pid>.<n>.txt at exit (a destructor), by gt_flush() (call it
 * before exec) and never on the hot path.  After fork the child writes only
 * what it recorded itself.  Include this header in exactly one translation
 * unit per module (executable or shared object): its state is static.
 *
 * File format (one line each, addresses in hex, heights in decimal):
 *   icpp-gt 1
 *   pid PID
 *   fp 0|1
 *   m IDX PATH            a module; PATH as the loader saw it
 *   self IDX              the module that recorded this file
 *   f VADDR               a PC inside a test function of `self`
 *   bad_ret N             entries where *(CFA-8) != return address
 *   bad_fp N              FP builds: entries where CFA != rbp + 16
 *   overflow N            entries lost because the buffer was full
 *   e PC MOD CS H [; MOD CS H]...
 *       an entry: PC in `self`, callsite (MOD, CS), height H; then, in FP
 *       builds, the caller frames innermost first: the function of frame k
 *       is the one containing the callsite of frame k-1.  Distinct lines only.
 */
#ifndef ICPP_TESTS_GT_H
#define ICPP_TESTS_GT_H

#ifndef _GNU_SOURCE
#error "gt.h needs _GNU_SOURCE (dladdr1) before any include"
#endif
#include <dlfcn.h>
#include <fcntl.h>
#include <inttypes.h>
#include <link.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#ifndef GT_FP
#define GT_FP 0
#endif

/* Test functions: never inlined, cloned or analysed across calls, so the
 * call tree is what the source says. */
#define GT_FN __attribute__((noinline, noipa, used))

#define GT_WORDS (1u << 22)       /* 32 MiB of bss, touched only when used */
#define GT_MAXCHAIN 40            /* caller frames kept per entry */

/* Record word 0: number of words | flags. */
#define GT_F_BADRET (1ull << 32)
#define GT_F_BADFP (1ull << 33)

static uint64_t gt_buf[GT_WORDS];
static uint64_t gt_n;             /* words reserved (atomic) */
static uint64_t gt_start;         /* first word this process still has to write */
static uint64_t gt_overflow;      /* entries lost (atomic) */
static uintptr_t gt_start_stack;  /* main thread's base */
static uintptr_t gt_main_fs;      /* main thread's fs base */

extern char __start_gt_funcs[] __attribute__((visibility("hidden")));
extern char __stop_gt_funcs[] __attribute__((visibility("hidden")));

static inline __attribute__((always_inline)) uintptr_t gt_fs(void)
{
	uintptr_t fs;
	__asm__("mov %%fs:0, %0" : "=r"(fs));
	return fs;
}

static inline __attribute__((always_inline)) void gt_record(uintptr_t pc, uintptr_t ret,
							     uintptr_t cfa, uintptr_t rbp)
{
	uintptr_t fs = gt_fs();
	uintptr_t base = fs == gt_main_fs ? gt_start_stack : fs;
	uint64_t flags = 0, k = 0;

	if (*(uintptr_t *)(cfa - 8) != ret)
		flags |= GT_F_BADRET;
	if (GT_FP && cfa != rbp + 16)
		flags |= GT_F_BADFP;
	/* Caller frames (FP builds): rbp -> the caller's saved rbp.  Counted
	 * first, then copied, so no local array grows the frame. */
	for (uintptr_t fp = rbp; GT_FP && k < GT_MAXCHAIN; k++) {
		uintptr_t next = *(uintptr_t *)fp;
		if (next <= fp || next + 16 > base || (next & 7))
			break;
		fp = next;
	}
	uint64_t words = 5 + 2 * k;
	uint64_t at = __atomic_fetch_add(&gt_n, words, __ATOMIC_RELAXED);
	if (at + words > GT_WORDS) {
		__atomic_fetch_add(&gt_overflow, 1, __ATOMIC_RELAXED);
		return;
	}
	uint64_t *r = gt_buf + at;
	r[1] = pc;
	r[2] = ret;
	r[3] = cfa;
	r[4] = base;
	uintptr_t fp = rbp;
	for (uint64_t i = 0; i < k; i++) {
		fp = *(uintptr_t *)fp;
		r[5 + 2 * i] = fp + 16;                      /* caller's CFA */
		r[6 + 2 * i] = *(uintptr_t *)(fp + 8);       /* its return address */
	}
	r[0] = words | flags;
}

#if GT_FP
#define GT_RBP() ((uintptr_t)__builtin_frame_address(0))
#else
#define GT_RBP() ((uintptr_t)0)
#endif

/* The PC of this point, also registered in gt_funcs.  "memory" keeps the
 * compiler from moving it, or the record, past anything else. */
#define GT_ENTER()                                                                 \
	do {                                                                       \
		uintptr_t gt_pc_;                                                  \
		__asm__ volatile("1: lea 1b(%%rip), %0\n\t"                        \
				 ".pushsection gt_funcs,\"aw\"\n\t"                \
				 ".balign 8\n\t.quad 1b\n\t.popsection"            \
				 : "=r"(gt_pc_) : : "memory");                     \
		gt_record(gt_pc_, (uintptr_t)__builtin_return_address(0),          \
			  (uintptr_t)__builtin_dwarf_cfa(), GT_RBP());             \
	} while (0)

/* ---- Everything below runs at start, at exit or before exec. ---- */

struct gt_mod {
	const void *lm;
	char path[4096];
};

struct gt_writer {
	FILE *f;
	struct gt_mod mods[64];
	int nmods;
};

/* Loaded objects as gt_modules_snapshot() last saw them: addresses of an
 * object dlclose'd before exit are resolved with these. */
struct gt_seg {
	uintptr_t start, end, bias;
	char path[512];
};
static struct gt_seg gt_segs[256];
static int gt_nsegs;

static void gt_object_path(const char *name, char *out, size_t len)
{
	if (name && name[0]) {
		snprintf(out, len, "%s", name);
	} else {   /* the executable */
		ssize_t n = readlink("/proc/self/exe", out, len - 1);
		out[n > 0 ? n : 0] = 0;
	}
}

static int gt_snapshot_one(struct dl_phdr_info *info, size_t size, void *data)
{
	(void)size;
	(void)data;
	for (int i = 0; i < info->dlpi_phnum && gt_nsegs < 256; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		if (ph->p_type != PT_LOAD)
			continue;
		struct gt_seg *s = &gt_segs[gt_nsegs++];
		s->start = info->dlpi_addr + ph->p_vaddr;
		s->end = s->start + ph->p_memsz;
		s->bias = info->dlpi_addr;
		gt_object_path(info->dlpi_name, s->path, sizeof s->path);
	}
	return 0;
}

/* Call before dlclose when the program recorded callsites in that object. */
static void __attribute__((used)) gt_modules_snapshot(void)
{
	gt_nsegs = 0;
	dl_iterate_phdr(gt_snapshot_one, NULL);
}

static int gt_mod_index(struct gt_writer *w, const void *key, const char *path)
{
	for (int i = 0; i < w->nmods; i++)
		if (!strcmp(w->mods[i].path, path))
			return i;
	if (w->nmods == (int)(sizeof w->mods / sizeof w->mods[0]))
		return -1;
	struct gt_mod *m = &w->mods[w->nmods];
	m->lm = key;
	snprintf(m->path, sizeof m->path, "%s", path);
	fprintf(w->f, "m %d %s\n", w->nmods, m->path);
	return w->nmods++;
}

/* (module index, vaddr) of a runtime address; -1 when in no module. */
static int gt_where(struct gt_writer *w, uintptr_t a, uint64_t *vaddr)
{
	Dl_info info;
	struct link_map *lm = NULL;

	*vaddr = a;
	if (dladdr1((void *)a, &info, (void **)&lm, RTLD_DL_LINKMAP) && lm) {
		char path[4096];
		*vaddr = a - lm->l_addr;
		for (int i = 0; i < w->nmods; i++)
			if (w->mods[i].lm == lm)
				return i;
		gt_object_path(lm->l_name, path, sizeof path);
		return gt_mod_index(w, lm, path);
	}
	for (int i = 0; i < gt_nsegs; i++)
		if (a >= gt_segs[i].start && a < gt_segs[i].end) {
			*vaddr = a - gt_segs[i].bias;
			return gt_mod_index(w, &gt_segs[i], gt_segs[i].path);
		}
	return -1;
}

static uint64_t gt_hash(const uint64_t *r, uint64_t words)
{
	uint64_t h = 1469598103934665603ull;
	for (uint64_t i = 1; i < words; i++)
		h = (h ^ r[i]) * 1099511628211ull;
	return h;
}

static void gt_write_range(uint64_t from, uint64_t to)
{
	const char *dir = getenv("ICPP_GT");
	char name[4200];
	int fd = -1;
	struct gt_writer *w;
	uint64_t self_vaddr, bad_ret = 0, bad_fp = 0;

	if (!dir || !*dir)
		return;
	for (int seq = 0; seq < 1000 && fd < 0; seq++) {
		snprintf(name, sizeof name, "%s/gt.%d.%d.txt", dir, (int)getpid(), seq);
		fd = open(name, O_WRONLY | O_CREAT | O_EXCL, 0644);
	}
	w = (struct gt_writer *)calloc(1, sizeof *w);
	if (fd < 0 || !w || !(w->f = fdopen(fd, "w"))) {
		fprintf(stderr, "gt: cannot write %s\n", name);
		abort();
	}
	fprintf(w->f, "icpp-gt 1\npid %d\nfp %d\n", (int)getpid(), GT_FP);
	int self = gt_where(w, (uintptr_t)&gt_write_range, &self_vaddr);
	fprintf(w->f, "self %d\n", self);
	for (uint64_t *p = (uint64_t *)__start_gt_funcs; p < (uint64_t *)__stop_gt_funcs; p++) {
		uint64_t v;
		gt_where(w, *p, &v);
		fprintf(w->f, "f %" PRIx64 "\n", v);
	}

	/* Distinct records only: open addressing on the record's words. */
	uint64_t cap = 1024;
	while (cap < 2 * (to - from) / 5 + 2)
		cap *= 2;
	uint64_t *seen = (uint64_t *)calloc(cap, sizeof *seen);   /* word index + 1 */
	if (!seen)
		abort();
	for (uint64_t at = from; at < to && at < GT_WORDS;) {
		uint64_t *r = gt_buf + at, words = r[0] & 0xffffffffu;
		if (words < 5) {    /* reserved, never written: the one that overflowed */
			if (__atomic_load_n(&gt_overflow, __ATOMIC_RELAXED))
				break;
			fprintf(stderr, "gt: torn record at word %" PRIu64 "\n", at);
			abort();
		}
		bad_ret += !!(r[0] & GT_F_BADRET);
		bad_fp += !!(r[0] & GT_F_BADFP);
		uint64_t h = gt_hash(r, words) & (cap - 1), dup = 0;
		for (; seen[h]; h = (h + 1) & (cap - 1)) {
			uint64_t *o = gt_buf + seen[h] - 1;
			if ((o[0] & 0xffffffffu) == words &&
			    !memcmp(o + 1, r + 1, (words - 1) * sizeof *r)) {
				dup = 1;
				break;
			}
		}
		if (!dup) {
			/* Resolve first: gt_where may print an "m" line. */
			char line[64 * (GT_MAXCHAIN + 1)];
			uint64_t pcv, csv;
			int len;
			seen[h] = at + 1;
			gt_where(w, r[1], &pcv);
			int csm = gt_where(w, r[2] - 1, &csv);
			len = snprintf(line, sizeof line, "e %" PRIx64 " %d %" PRIx64 " %" PRId64,
				       pcv, csm, csv, (int64_t)(r[4] - r[3]));
			for (uint64_t i = 5; i + 1 < words; i += 2) {
				csm = gt_where(w, r[i + 1] - 1, &csv);
				len += snprintf(line + len, sizeof line - len,
						" ; %d %" PRIx64 " %" PRId64, csm, csv,
						(int64_t)(r[4] - r[i]));
			}
			fprintf(w->f, "%s\n", line);
		}
		at += words;
	}
	fprintf(w->f, "bad_ret %" PRIu64 "\nbad_fp %" PRIu64 "\noverflow %" PRIu64 "\n", bad_ret,
		bad_fp, __atomic_load_n(&gt_overflow, __ATOMIC_RELAXED));
	if (fclose(w->f)) {
		fprintf(stderr, "gt: error writing %s\n", name);
		abort();
	}
	free(seen);
	free(w);
}

/* Write what this process recorded since the last flush (call before exec). */
static void __attribute__((used)) gt_flush(void)
{
	uint64_t to = __atomic_load_n(&gt_n, __ATOMIC_ACQUIRE);
	gt_write_range(gt_start, to);
	gt_start = to;
}

static void gt_atfork_child(void)
{
	gt_start = __atomic_load_n(&gt_n, __ATOMIC_RELAXED);
	__atomic_store_n(&gt_overflow, 0, __ATOMIC_RELAXED);
}

static void __attribute__((constructor(101))) gt_init(void)
{
	char buf[4096];
	int fd = open("/proc/self/stat", O_RDONLY);
	ssize_t len = fd >= 0 ? read(fd, buf, sizeof buf - 1) : -1;
	if (fd >= 0)
		close(fd);
	if (len <= 0) {
		fprintf(stderr, "gt: cannot read /proc/self/stat\n");
		abort();
	}
	buf[len] = 0;
	/* Field 2 (comm) may hold spaces: count from the last ')', field 3 on. */
	char *p = strrchr(buf, ')');
	for (int field = 2; p && field < 28; field++)
		p = strchr(p + 1, ' ');
	if (!p || syscall(SYS_gettid) != getpid()) {
		fprintf(stderr, "gt: no start_stack, or not loaded by the main thread\n");
		abort();
	}
	gt_start_stack = strtoull(p + 1, NULL, 10);
	gt_main_fs = gt_fs();
	pthread_atfork(NULL, NULL, gt_atfork_child);
}

static void __attribute__((destructor(101))) gt_fini(void)
{
	gt_flush();
}

#endif
