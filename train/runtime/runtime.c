/* The training runtime's cold side: start-up, module discovery, patching.
 *
 * Runs in the constructor and, after each dlopen/dlclose, from the hook on
 * ld.so's r_brk (_dl_debug_state): always with the calling thread marked busy,
 * so the hooked libc functions it calls are not recorded.
 */
#include "train/runtime/runtime.h"

#include <cpuid.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <link.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "x86/reloc.h"

#define MAX_NODES (1ull << 24)
#define ARENA_SIZE (1ull << 36)
#define MAX_SEGMENTS 8

/* What the runtime keeps about a module beside its record-file slot. */
struct module_local {
	int present;                     /* seen in the latest scan */
	uint32_t nsegs;
	struct { uint64_t start, end; int prot; } segs[MAX_SEGMENTS];   /* PT_LOADs */
};

static struct module_local locals[REC_MAX_MODULES];
static char socket_path[sizeof(((struct sockaddr_un *)0)->sun_path)];
static char exe_path[TRAIN_PATH_MAX];
static char self_path[TRAIN_PATH_MAX], capstone_path[TRAIN_PATH_MAX];
static csh cs;

static void warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void warn(const char *fmt, ...)
{
	char buf[512];
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(buf, sizeof(buf) - 1, fmt, ap);
	va_end(ap);
	if (n < 0)
		return;
	if (n > (int)sizeof(buf) - 2)
		n = sizeof(buf) - 2;
	buf[n++] = '\n';
	if (write(2, buf, (size_t)n) < 0)
		return;
}

/* ---- start-up ---- */

/* mm->start_stack: field 28 of /proc/self/stat (method.md). */
static int read_start_stack(int64_t *out)
{
	char buf[2048];
	int fd = open("/proc/self/stat", O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	ssize_t n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return -1;
	buf[n] = 0;
	char *p = strrchr(buf, ')');     /* the command name may hold spaces */
	if (!p)
		return -1;
	for (int field = 2; field < 28 && p; field++)
		p = strchr(p + 1, ' ');
	if (!p)
		return -1;
	*out = strtoll(p + 1, NULL, 10);
	return *out ? 0 : -1;
}

static int open_record(const char *dir)
{
	size_t size = REC_NODES_OFFSET + MAX_NODES * sizeof(struct rec_node);
	char path[TRAIN_PATH_MAX];
	int fd = -1;
	for (int seq = 0; fd < 0 && seq < 1000; seq++) {
		snprintf(path, sizeof(path), "%s/proc.%d.%d", dir, (int)getpid(), seq);
		fd = open(path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
		if (fd < 0 && errno != EEXIST)
			break;
	}
	if (fd < 0 || ftruncate(fd, (off_t)size) < 0) {
		warn("icpp: cannot create a record file in %s: %s", dir, strerror(errno));
		if (fd >= 0)
			close(fd);
		return -1;
	}
	char *map = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	close(fd);
	if (map == MAP_FAILED) {
		warn("icpp: cannot map the record file %s: %s", path, strerror(errno));
		return -1;
	}
	rt.hdr = (struct rec_header *)map;
	rt.modules = (struct rec_module *)(map + REC_MODULES_OFFSET);
	rt.nodes = (struct rec_node *)(map + REC_NODES_OFFSET);
	memcpy(rt.hdr->magic, REC_MAGIC, 8);
	rt.hdr->header_size = sizeof(struct rec_header);
	rt.hdr->module_size = sizeof(struct rec_module);
	rt.hdr->node_size = sizeof(struct rec_node);
	rt.hdr->pid = (uint32_t)getpid();
	rt.hdr->start_stack = (uint64_t)rt.start_stack;
	rt.hdr->max_nodes = MAX_NODES;
	return 0;
}

static int reserve_private(void)
{
	void *arena = mmap(NULL, ARENA_SIZE, PROT_READ | PROT_WRITE,
			   MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (arena == MAP_FAILED) {
		warn("icpp: cannot reserve memory for training: %s", strerror(errno));
		return -1;
	}
	rt.arena = rt.arena_next = arena;
	rt.arena_end = rt.arena + ARENA_SIZE;
	return 0;
}

static void module_of(const void *sym, char *out)
{
	Dl_info info;
	if (dladdr(sym, &info) && info.dli_fname)
		snprintf(out, TRAIN_PATH_MAX, "%s", info.dli_fname);
}

/* ---- asking the parent ---- */

/* The runtime keeps off the program's heap: what it allocated there, in
 * amounts that depend on the module (its sites, their decoding), changed
 * the heap the program's malloc sees, and with it the paths malloc takes: a
 * rewritten program, with more functions to hook, took other paths inside
 * malloc than the original had in training. */
static struct train_site *sites_alloc(uint32_t n)
{
	void *p = mmap(NULL, (n + 1) * sizeof(struct train_site), PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	return p == MAP_FAILED ? NULL : p;
}

static void sites_free(struct train_site *sites, uint32_t n)
{
	munmap(sites, (n + 1) * sizeof(struct train_site));
}

/* One connection per question: the program may close file descriptors it
 * does not know about, so none is kept open. */
static struct train_site *ask_parent(const char *path, struct train_reply *rep)
{
	struct sockaddr_un addr = {.sun_family = AF_UNIX};
	memcpy(addr.sun_path, socket_path, sizeof(socket_path));
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	struct train_request req = {.magic = TRAIN_REQ_MAGIC, .path_len = (uint32_t)strlen(path)};
	struct train_site *sites = NULL;
	if (fd < 0 || connect(fd, (struct sockaddr *)&addr, sizeof(addr)) < 0 ||
	    train_write_full(fd, &req, sizeof(req)) < 0 || train_write_full(fd, path, req.path_len) < 0 ||
	    train_read_full(fd, rep, sizeof(*rep), -1) < 0) {
		warn("icpp: lost contact with 'icpp train' (%s); %s is not trained",
		     strerror(errno), path);
		goto out;
	}
	if (rep->status != 0) {
		rep->error[sizeof(rep->error) - 1] = 0;
		warn("icpp: %s", rep->error);
		goto out;
	}
	sites = sites_alloc(rep->nsites);
	if (sites && train_read_full(fd, sites, rep->nsites * sizeof(*sites), -1) < 0) {
		sites_free(sites, rep->nsites);
		sites = NULL;
	}
out:
	if (fd >= 0)
		close(fd);
	return sites;
}

/* ---- patching ---- */

#define STUB_HEAD 20                 /* push r11; movabs meta,r11; call *slot(%rip); pop r11 */
#define STUB_MAX (STUB_HEAD + 5 * X86_RELOC_MAX_INSN + 5)
#define SITE_INSNS 5                 /* whole instructions covering 5 bytes, at most */

/* Decoding buffers, static: the runtime's use of the program's heap is the
 * handle cs_open allocates, once, the same in every process (see
 * sites_alloc).  The last one decodes an island's padding. */
static cs_detail site_details[SITE_INSNS + 1];
static cs_insn site_insns[SITE_INSNS + 1];

static bool open_capstone(void)
{
	for (int i = 0; i <= SITE_INSNS; i++)
		site_insns[i].detail = &site_details[i];
	return x86_open(&cs);
}

/* An executable region within rel32 reach of the whole module. */
static uint8_t *alloc_near(uint64_t start, uint64_t end, size_t size)
{
	const uint64_t reach = (1ull << 31) - (1ull << 20);
	for (int below = 1; below >= 0; below--) {
		for (uint64_t step = 1; step < 2048; step++) {
			uint64_t at = below ? ((start - size) & ~0xfffull) - (step - 1) * (1ull << 20)
					    : ((end + 0xfffull) & ~0xfffull) + (step - 1) * (1ull << 20);
			if ((below && (at > start || end - at > reach)) ||
			    (!below && at + size - start > reach))
				break;
			/* Executable at once: libc functions hooked a moment ago
			 * already run through their stubs while we patch. */
			void *p = mmap((void *)at, size, PROT_READ | PROT_WRITE | PROT_EXEC,
				       MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
			if (p == (void *)at)
				return p;
			if (p != MAP_FAILED)
				munmap(p, size);
		}
	}
	return NULL;
}

static int set_text_writable(const struct module_local *ml, int writable)
{
	for (uint32_t i = 0; i < ml->nsegs; i++) {
		if (!(ml->segs[i].prot & PROT_EXEC))
			continue;
		uint64_t lo = ml->segs[i].start & ~0xfffull, hi = (ml->segs[i].end + 0xfff) & ~0xfffull;
		int prot = writable ? PROT_READ | PROT_WRITE | PROT_EXEC : ml->segs[i].prot;
		if (mprotect((void *)lo, hi - lo, prot) < 0)
			return -1;
	}
	return 0;
}

/* The address of the 5-byte jmp to the stub: the patch, or its island. */
static uint64_t jmp_addr(const struct train_site *s, uint64_t entry)
{
	uint64_t patch_at = entry + s->patch_off;
	return s->flags & SITE_ISLAND ? patch_at + (uint64_t)(int64_t)s->island : patch_at;
}

/* Decode the displaced bytes (into site_insns) as they are in memory now and
 * check they are what the parent analysed in the file; with an island, that
 * from the island to the entry is padding, as it was in the file. */
static int check_site(const struct train_site *s, uint64_t entry, size_t *n)
{
	if (s->patch_off && s->patch_off != x86_endbr64_len((const uint8_t *)entry, 4))
		return -1;
	uint64_t at = entry + s->patch_off, island = jmp_addr(s, entry);
	const uint8_t *code = (const uint8_t *)at;
	size_t left = s->patch_len;
	*n = 0;
	while (left && *n < SITE_INSNS && x86_disasm_iter(cs, &code, &left, &at, &site_insns[*n]))
		(*n)++;
	if (left)
		return -1;
	/* f's entry may jump to the rewriter's island (x86_padding_insn) */
	const cs_insn *first = &site_insns[0];
	uint64_t theirs = *n && first->id == X86_INS_JMP && first->size == 2 ? x86_branch_target(first)
									     : 0;
	return !(s->flags & SITE_ISLAND) ||
			       x86_is_padding_in(cs, &site_insns[SITE_INSNS], (const uint8_t *)island,
						 entry - island, island, theirs)
		       ? 0 : -1;
}

/* Write the stub for one function at `stub`; returns its size or -1. */
static int build_stub(uint8_t *stub, uint8_t *common_slot, const struct fn_meta *meta,
		      const cs_insn *insns, size_t n, uint64_t resume)
{
	uint8_t *p = stub;
	*p++ = 0x41, *p++ = 0x53;                        /* push %r11 */
	*p++ = 0x49, *p++ = 0xbb;                        /* movabs $meta, %r11 */
	memcpy(p, &meta, 8), p += 8;
	*p++ = 0xff, *p++ = 0x15;                        /* call *slot(%rip) */
	int32_t rel = (int32_t)(common_slot - (p + 4));
	memcpy(p, &rel, 4), p += 4;
	*p++ = 0x41, *p++ = 0x5b;                        /* pop %r11 */
	for (size_t i = 0; i < n; i++) {
		const char *why;
		int len = x86_relocate_insn(&insns[i], (uint64_t)p, p, &why);
		if (len < 0)
			return -1;
		p += len;
	}
	if (x86_encode_jmp((uint64_t)p, resume, p) < 0)
		return -1;
	return (int)(p + 5 - stub);
}

static int hook_site(uint32_t slot, const struct train_site *s, struct fn_meta *meta,
		     uint8_t *stub, uint8_t *common_slot, size_t *used)
{
	struct rec_module *m = &rt.modules[slot];
	uint64_t entry = m->bias + s->addr;
	size_t n;
	if (check_site(s, entry, &n) < 0) {
		m->skipped[SKIP_CODE_MISMATCH]++;
		return -1;
	}
	meta->module = slot;
	meta->vaddr = s->addr;
	meta->cfa_offset = s->cfa_offset;
	meta->flags = (entry == (uint64_t)_r_debug.r_brk ? FN_RESCAN : 0) |
		      (s->flags & SITE_REALIGN ? FN_REALIGN : 0) |
		      (s->flags & SITE_CFA_RBP ? FN_CFA_RBP : 0) |
		      (s->flags & SITE_FRAGMENT ? FN_FRAGMENT : 0);
	uint64_t patch_at = entry + s->patch_off, jmp_at = jmp_addr(s, entry);
	int len = build_stub(stub, common_slot, meta, site_insns, n, patch_at + s->patch_len);
	uint8_t jmp[5];
	if (len < 0 || x86_encode_jmp(jmp_at, (uint64_t)stub, jmp) < 0) {
		m->skipped[SKIP_UNRELOCATABLE]++;
		return -1;
	}
	memcpy((void *)jmp_at, jmp, 5);
	/* with an island, a jmp rel8 to it at the patch */
	uint16_t written = 5;
	if (s->flags & SITE_ISLAND) {
		uint8_t near[2] = {0xeb, (uint8_t)(int8_t)(jmp_at - (patch_at + 2))};
		memcpy((void *)patch_at, near, 2);
		written = 2;
	}
	if (s->patch_len > written)
		memset((void *)(patch_at + written), 0xcc, s->patch_len - written);
	*used = (size_t)len;
	m->functions_hooked++;
	return 0;
}

static void hook_module(uint32_t slot)
{
	struct rec_module *m = &rt.modules[slot];
	if (m->own)
		return;                  /* the runtime does not trace itself */
	struct train_reply rep;
	struct train_site *sites = ask_parent(m->path, &rep);
	if (!sites)
		return;
	m->functions_found = rep.functions_found;
	if (rep.sigtramp_hi > rep.sigtramp_lo && rt.nsigtramps < 4) {
		rt.sigtramps[rt.nsigtramps].lo = m->bias + rep.sigtramp_lo;
		rt.sigtramps[rt.nsigtramps].hi = m->bias + rep.sigtramp_hi;
		__atomic_store_n(&rt.nsigtramps, rt.nsigtramps + 1, __ATOMIC_RELEASE);
	}
	memcpy(m->skipped, rep.skipped, sizeof(m->skipped));
	size_t size = 16 + (size_t)rep.nsites * STUB_MAX;
	size = (size + 0xfff) & ~(size_t)0xfff;
	uint8_t *region = rep.nsites ? alloc_near(m->start, m->end, size) : NULL;
	struct fn_meta *metas = rt_alloc(rep.nsites * sizeof(*metas) + 1);
	if (!region || set_text_writable(&locals[slot], 1) < 0) {
		if (rep.nsites)
			m->skipped[SKIP_NO_TRAMPOLINE_SPACE] += rep.nsites;
		sites_free(sites, rep.nsites);
		return;
	}
	void (*common)(void) = icpp_common;
	memcpy(region, &common, 8);
	size_t off = 16;
	for (uint32_t i = 0; i < rep.nsites; i++) {
		size_t used = 0;
		if (hook_site(slot, &sites[i], &metas[i], region + off, region, &used) == 0)
			off += used;
	}
	set_text_writable(&locals[slot], 0);
	mprotect(region, size, PROT_READ | PROT_EXEC);
	sites_free(sites, rep.nsites);
}

/* ---- module discovery ---- */

static uint32_t find_slot(const char *path, uint64_t bias)
{
	for (uint32_t i = 0; i < rt.hdr->nmodules; i++)
		if (!rt.modules[i].unloaded && rt.modules[i].bias == bias &&
		    !strcmp(rt.modules[i].path, path))
			return i;
	return REC_NONE;
}

static int add_module(struct dl_phdr_info *info, size_t size, void *data)
{
	uint32_t *added = data;
	const char *path = info->dlpi_name && *info->dlpi_name ? info->dlpi_name : exe_path;
	char real[PATH_MAX];
	if (path[0] != '/') {
		/* A library found through a relative LD_LIBRARY_PATH entry has a
		 * relative name; the vDSO's names no file at all. */
		if (!strchr(path, '/') || !realpath(path, real))
			return 0;
		path = real;
	}
	uint32_t slot = find_slot(path, info->dlpi_addr);
	if (slot != REC_NONE) {
		locals[slot].present = 1;
		return 0;
	}
	if (rt.hdr->nmodules >= REC_MAX_MODULES || strlen(path) >= TRAIN_PATH_MAX)
		return 0;
	slot = rt.hdr->nmodules;
	struct rec_module *m = &rt.modules[slot];
	struct module_local *ml = &locals[slot];
	snprintf(m->path, sizeof(m->path), "%s", path);
	m->bias = info->dlpi_addr;
	m->own = !strcmp(path, self_path) || !strcmp(path, capstone_path);
	m->start = UINT64_MAX;
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		if (ph->p_type != PT_LOAD || ml->nsegs == MAX_SEGMENTS)
			continue;
		uint64_t lo = info->dlpi_addr + ph->p_vaddr, hi = lo + ph->p_memsz;
		ml->segs[ml->nsegs].start = lo;
		ml->segs[ml->nsegs].end = hi;
		ml->segs[ml->nsegs].prot = (ph->p_flags & PF_R ? PROT_READ : 0) |
					   (ph->p_flags & PF_W ? PROT_WRITE : 0) |
					   (ph->p_flags & PF_X ? PROT_EXEC : 0);
		ml->nsegs++;
		m->start = lo < m->start ? lo : m->start;
		m->end = hi > m->end ? hi : m->end;
	}
	ml->present = 1;
	__atomic_store_n(&rt.hdr->nmodules, slot + 1, __ATOMIC_RELEASE);
	added[slot] = 1;
	return 0;
}

static void scan_modules(void)
{
	static uint32_t added[REC_MAX_MODULES];
	uint32_t before = rt.hdr->nmodules;
	for (uint32_t i = 0; i < before; i++)
		locals[i].present = 0;
	memset(added, 0, sizeof(added));
	dl_iterate_phdr(add_module, added);
	for (uint32_t i = 0; i < before; i++)
		if (!locals[i].present)
			rt.modules[i].unloaded = 1;
	for (uint32_t i = before; i < rt.hdr->nmodules; i++)
		if (added[i])
			hook_module(i);
}

/* Called on every entry to ld.so's r_brk: after a dlopen or dlclose, the
 * list is consistent again and new modules are hooked before their
 * constructors run. */
void rt_rescan(void)
{
	if (_r_debug.r_state == RT_CONSISTENT)
		scan_modules();
}

static void measure_xsave(void)
{
	unsigned a, b, c, d;
	rt_xsave_size = 4096;
	if (__get_cpuid_count(0xd, 0, &a, &b, &c, &d) && b)
		rt_xsave_size = b + 64;
}

__attribute__((constructor(101))) static void rt_init(void)
{
	const char *dir = getenv(ICPP_ENV_DIR), *sock = getenv(ICPP_ENV_SOCKET);
	if (!dir || !sock)
		return;                  /* preloaded outside `icpp train`: stay inert */
	if (strlen(sock) >= sizeof(socket_path) ||
	    readlink("/proc/self/exe", exe_path, sizeof(exe_path) - 1) < 0 ||
	    read_start_stack(&rt.start_stack) < 0) {
		warn("icpp: cannot set up training in process %d", (int)getpid());
		return;
	}
	memcpy(socket_path, sock, strlen(sock) + 1);
	struct rlimit lim;             /* for pathmap/thread_base.h */
	rt.stack_limit = getrlimit(RLIMIT_STACK, &lim) == 0 ? lim.rlim_cur : RLIM_INFINITY;
	if (open_record(dir) < 0 || reserve_private() < 0 || !open_capstone())
		return;
	measure_xsave();
	module_of((const void *)rt_init, self_path);
	module_of((const void *)cs_open, capstone_path);
	if (rt_enter_runtime() != 0)
		return;
	pthread_atfork(rt_before_fork, NULL, rt_after_fork);
	scan_modules();
	rt_leave_runtime();
}
