/* procs: modules and bases of the target processes (see procs.h). */
#include "collector/procs.h"

#include "collector/thread_pointer.h"
#include "pathmap/thread_base.h"

#include <dirent.h>
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <inttypes.h>
#include <libelf.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <uthash.h>
#include <unistd.h>

/* ---- ELF facts, cached by path ---- */

#define MAX_LOADS 32

struct elf_facts {
	char *path;
	int ok;
	uint32_t build_id_len;
	uint8_t build_id[SF_BUILD_ID_MAX];
	int nload;
	struct { uint64_t off, vaddr, filesz; } load[MAX_LOADS];
	UT_hash_handle hh;
};

static struct elf_facts *elf_cache;

static void read_build_id(Elf *e, struct elf_facts *f)
{
	size_t nph;
	if (elf_getphdrnum(e, &nph))
		return;
	for (size_t i = 0; i < nph; i++) {
		GElf_Phdr ph;
		if (!gelf_getphdr(e, (int)i, &ph) || ph.p_type != PT_NOTE)
			continue;
		Elf_Data *d = elf_getdata_rawchunk(e, ph.p_offset, ph.p_filesz, ELF_T_NHDR);
		if (!d)
			continue;
		size_t off = 0, noff, doff;
		GElf_Nhdr nh;
		while ((off = gelf_getnote(d, off, &nh, &noff, &doff)) > 0) {
			if (nh.n_type == NT_GNU_BUILD_ID && nh.n_namesz == 4 &&
			    !memcmp((char *)d->d_buf + noff, "GNU", 4) && nh.n_descsz > 0 &&
			    nh.n_descsz <= SF_BUILD_ID_MAX) {
				memcpy(f->build_id, (char *)d->d_buf + doff, nh.n_descsz);
				f->build_id_len = nh.n_descsz;
				return;
			}
		}
	}
}

static struct elf_facts *elf_facts(const char *path)
{
	struct elf_facts *f;

	HASH_FIND_STR(elf_cache, path, f);
	if (f)
		return f;
	f = calloc(1, sizeof(*f));
	if (!f)
		return NULL;
	f->path = strdup(path);
	if (!f->path) {
		free(f);
		return NULL;
	}
	HASH_ADD_KEYPTR(hh, elf_cache, f->path, strlen(f->path), f);

	elf_version(EV_CURRENT);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return f;
	Elf *e = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	GElf_Ehdr eh;
	size_t nph;
	if (e && elf_kind(e) == ELF_K_ELF && gelf_getehdr(e, &eh) && !elf_getphdrnum(e, &nph)) {
		for (size_t i = 0; i < nph && f->nload < MAX_LOADS; i++) {
			GElf_Phdr ph;
			if (!gelf_getphdr(e, (int)i, &ph) || ph.p_type != PT_LOAD)
				continue;
			f->load[f->nload].off = ph.p_offset;
			f->load[f->nload].vaddr = ph.p_vaddr;
			f->load[f->nload].filesz = ph.p_filesz;
			f->nload++;
		}
		read_build_id(e, f);
		f->ok = f->nload > 0;
	}
	if (e)
		elf_end(e);
	close(fd);
	return f;
}

int elf_mapping_info(const char *path, uint64_t start, uint64_t pgoff, uint64_t *bias,
		     uint8_t *build_id, uint32_t *build_id_len)
{
	struct elf_facts *f = elf_facts(path);
	if (!f || !f->ok)
		return -1;
	memcpy(build_id, f->build_id, f->build_id_len);
	*build_id_len = f->build_id_len;
	/* The PT_LOAD that holds file offset pgoff (segments are mapped from
	 * their page-aligned offset, and p_vaddr == p_offset modulo the page
	 * size): ELF vaddr of that offset = p_vaddr - p_offset + pgoff. */
	long page = sysconf(_SC_PAGESIZE);
	for (int i = 0; i < f->nload; i++) {
		uint64_t lo = f->load[i].off & ~(uint64_t)(page - 1);
		uint64_t hi = f->load[i].off + f->load[i].filesz;
		if (pgoff >= lo && (pgoff < hi || (pgoff == lo && f->load[i].filesz == 0))) {
			*bias = start - (f->load[i].vaddr - f->load[i].off + pgoff);
			return 0;
		}
	}
	return -1;
}

/* ---- processes ---- */

struct anon_map {
	uint64_t start, end;
};

struct thread {
	uint32_t tid;
	uint64_t fs_base;           /* 0: could not be read */
	UT_hash_handle hh;
};

struct proc {
	uint32_t tgid;
	uint64_t start_stack;
	uint64_t stack_rlimit;      /* the target's RLIMIT_STACK (soft) */
	int start_stack_read;
	struct anon_map *anon;      /* writable anonymous mappings (stacks), newest last */
	size_t nanon, cap_anon;
	struct thread *threads;     /* fs bases read so far, by tid */
	uint64_t tp_offset;         /* end of a glibc thread's stack mapping - its fs
	                             * base; 0 until a thread is read */
	uint32_t tp_flags;          /* SF_P_*: what reading fs bases met */
	uint32_t tp_said;           /* SF_P_* already explained on stderr */
	UT_hash_handle hh;
};

struct procs {
	struct sample_set *out;
	struct proc *procs;
};

struct procs *procs_new(struct sample_set *out)
{
	struct procs *p = calloc(1, sizeof(*p));
	if (p)
		p->out = out;
	return p;
}

static void forget_threads(struct proc *x)
{
	struct thread *t, *tmp;
	HASH_ITER(hh, x->threads, t, tmp) {
		HASH_DEL(x->threads, t);
		free(t);
	}
}

void procs_free(struct procs *p)
{
	struct proc *x, *t;
	if (!p)
		return;
	HASH_ITER(hh, p->procs, x, t) {
		HASH_DEL(p->procs, x);
		forget_threads(x);
		free(x->anon);
		free(x);
	}
	free(p);
}

static struct proc *find(const struct procs *p, uint32_t tgid)
{
	struct proc *x;
	HASH_FIND(hh, p->procs, &tgid, sizeof(tgid), x);
	return x;
}

bool procs_has(const struct procs *p, uint32_t tgid)
{
	return find(p, tgid) != NULL;
}

static void read_comm(uint32_t tgid, char *buf, size_t len)
{
	char path[64];
	snprintf(path, sizeof(path), "/proc/%u/comm", tgid);
	buf[0] = 0;
	FILE *f = fopen(path, "r");
	if (!f)
		return;
	if (fgets(buf, (int)len, f))
		buf[strcspn(buf, "\n")] = 0;
	fclose(f);
}

/* The target's soft RLIMIT_STACK; Linux's default 8 MiB when unreadable. */
static uint64_t read_stack_rlimit(uint32_t tgid)
{
	struct rlimit lim;
	if (prlimit((pid_t)tgid, RLIMIT_STACK, NULL, &lim) < 0)
		return 8ull << 20;
	return lim.rlim_cur;
}

/* /proc/PID/stat field 28 (start_stack); 0 when unreadable. */
static uint64_t read_start_stack(uint32_t tgid)
{
	char path[64], buf[2048];
	snprintf(path, sizeof(path), "/proc/%u/stat", tgid);
	FILE *f = fopen(path, "r");
	if (!f)
		return 0;
	size_t n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = 0;
	char *s = strrchr(buf, ')');
	if (!s)
		return 0;
	s++;
	/* After ')' comes field 3; field 28 is the 26th from there. */
	unsigned long long v = 0;
	for (int field = 3; field <= 28; field++) {
		while (*s == ' ')
			s++;
		if (!*s)
			return 0;
		if (field == 28) {
			v = strtoull(s, NULL, 10);
			break;
		}
		while (*s && *s != ' ')
			s++;
	}
	return v;
}

static void add_anon(struct proc *x, uint64_t start, uint64_t end)
{
	for (size_t i = 0; i < x->nanon; i++)
		if (x->anon[i].start == start && x->anon[i].end == end)
			return;
	if (x->nanon == x->cap_anon) {
		size_t nc = x->cap_anon ? x->cap_anon * 2 : 64;
		struct anon_map *a = realloc(x->anon, nc * sizeof(*a));
		if (!a)
			return;
		x->anon = a;
		x->cap_anon = nc;
	}
	x->anon[x->nanon].start = start;
	x->anon[x->nanon].end = end;
	x->nanon++;
}

static void add_module(struct procs *p, uint32_t tgid, uint64_t start, uint64_t end, uint64_t pgoff,
		       const char *path, const uint8_t *bid, uint32_t bid_len)
{
	struct sf_module m = {0};
	m.tgid = tgid;
	m.start = start;
	m.end = end;
	m.pgoff = pgoff;
	m.path = (char *)path;
	uint8_t fbid[SF_BUILD_ID_MAX];
	uint32_t flen = 0;
	if (elf_mapping_info(path, start, pgoff, &m.bias, fbid, &flen) == 0)
		m.bias_known = 1;
	if (bid && bid_len && bid_len <= SF_BUILD_ID_MAX) {
		memcpy(m.build_id, bid, bid_len);
		m.build_id_len = bid_len;
	} else {
		memcpy(m.build_id, fbid, flen);
		m.build_id_len = flen;
	}
	sf_add_module(p->out, &m);
}

void procs_rescan(struct procs *p, uint32_t tgid)
{
	char path[64], line[4608];
	struct proc *x = find(p, tgid);
	if (!x)
		return;
	snprintf(path, sizeof(path), "/proc/%u/maps", tgid);
	FILE *f = fopen(path, "r");
	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		unsigned long long lo, hi, off;
		char perms[8];
		int name_at = 0;
		if (sscanf(line, "%llx-%llx %7s %llx %*s %*s %n", &lo, &hi, perms, &off, &name_at) < 4)
			continue;
		char *name = name_at ? line + name_at : (char *)"";
		name[strcspn(name, "\n")] = 0;
		if (perms[2] == 'x' && name[0] == '/')
			add_module(p, tgid, lo, hi, off, name, NULL, 0);
		else if (perms[1] == 'w' && perms[2] != 'x' && (name[0] == 0 || !strncmp(name, "[stack", 6)))
			add_anon(x, lo, hi);
	}
	fclose(f);
}

/* What pathmap/thread_base.h needs of a process: its start_stack and stack
 * limit (read again after an exec). */
static void read_stack_info(struct proc *x)
{
	x->start_stack = read_start_stack(x->tgid);
	x->stack_rlimit = read_stack_rlimit(x->tgid);
	x->start_stack_read = 1;
}

void procs_add(struct procs *p, uint32_t tgid, uint32_t parent, bool scan)
{
	char comm[64];
	struct proc *x = find(p, tgid);
	if (x)
		return;
	x = calloc(1, sizeof(*x));
	if (!x)
		return;
	x->tgid = tgid;
	HASH_ADD(hh, p->procs, tgid, sizeof(x->tgid), x);
	read_comm(tgid, comm, sizeof(comm));
	sf_add_process(p->out, tgid, parent, comm);
	if (scan) {
		procs_rescan(p, tgid);
		read_stack_info(x);
	}
}

void procs_fork(struct procs *p, uint32_t child, uint32_t parent)
{
	struct proc *pp = find(p, parent), *c;
	if (!pp || find(p, child))
		return;
	procs_add(p, child, parent, false);
	c = find(p, child);
	if (!c)
		return;
	c->start_stack = pp->start_stack;
	c->stack_rlimit = pp->stack_rlimit;
	c->start_stack_read = pp->start_stack_read;
	/* Same image, same static TLS: the parent's offset holds (the child's
	 * only thread, a leader, is never read itself). */
	c->tp_offset = pp->tp_offset;
	c->tp_flags = pp->tp_flags;
	c->tp_said = pp->tp_said;
	uint32_t n = p->out->nmods;
	for (uint32_t i = 0; i < n; i++) {
		if (p->out->mods[i].tgid != parent)
			continue;
		struct sf_module m = p->out->mods[i];
		m.tgid = child;
		sf_add_module(p->out, &m);
	}
}

void procs_exec(struct procs *p, uint32_t tgid, const char *comm)
{
	struct proc *x = find(p, tgid);
	if (!x)
		return;
	if (comm && *comm)
		sf_add_process(p->out, tgid, 0, comm);
	x->nanon = 0;
	forget_threads(x);      /* exec ended the other threads; a new static TLS */
	x->tp_offset = 0;
	x->tp_flags = 0;
	read_stack_info(x);
}

void procs_mmap(struct procs *p, uint32_t tgid, uint64_t start, uint64_t len, uint64_t pgoff,
		uint32_t prot, const char *filename, const uint8_t *build_id, uint32_t build_id_len)
{
	struct proc *x = find(p, tgid);
	if (!x)
		return;
	if ((prot & PROT_EXEC) && filename[0] == '/')
		add_module(p, tgid, start, start + len, pgoff, filename, build_id, build_id_len);
	else if ((prot & (PROT_WRITE | PROT_EXEC)) == PROT_WRITE &&
		 (!strcmp(filename, "//anon") || filename[0] == 0))
		add_anon(x, start, start + len);
}

uint64_t procs_start_stack(struct procs *p, uint32_t tgid)
{
	struct proc *x = find(p, tgid);
	if (!x)
		return 0;
	if (!x->start_stack_read || !x->start_stack)
		read_stack_info(x);
	return x->start_stack;
}

/* ---- fs bases of the threads off the initial stack ---- */

static const struct anon_map *anon_at(struct procs *p, struct proc *x, uint64_t addr)
{
	for (int scan = 0; scan < 2; scan++) {
		for (size_t i = x->nanon; i-- > 0;)
			if (addr >= x->anon[i].start && addr < x->anon[i].end)
				return &x->anon[i];
		if (!scan)
			procs_rescan(p, x->tgid);
	}
	return NULL;
}

/* Say once per process, on stderr, what a flag means for its samples. */
static void note(struct proc *x, uint32_t flag, const char *fmt, ...)
{
	x->tp_flags |= flag;
	if (x->tp_said & flag)
		return;
	x->tp_said |= flag;
	va_list ap;
	va_start(ap, fmt);
	fprintf(stderr, "icpp record: process %u: ", x->tgid);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
}

/* A thread's fs base and SP at one instant give the process's offset: the
 * end of the mapping that holds SP minus the fs base (glibc: struct pthread
 * below the end of the stack mapping, at an alignment that static TLS sets). */
static void learn_offset(struct procs *p, struct proc *x, uint32_t tid, uint64_t fs_base, uint64_t sp)
{
	const struct anon_map *m = anon_at(p, x, sp);
	uint64_t off = m ? m->end - fs_base : 0;
	if (!m || fs_base < m->start || fs_base >= m->end || off >= SF_TP_OFFSET_MAX || off % 8) {
		note(x, SF_P_FOREIGN_STACK, "thread %u runs on a stack glibc did not allocate (fs base "
		     "outside the mapping that holds SP): samples of threads that end before icpp "
		     "reads their fs base get no base", tid);
		return;
	}
	if (!x->tp_offset)
		x->tp_offset = off;
	else if (off != x->tp_offset)
		note(x, SF_P_OFFSET_VARIES, "the distance from a thread's stack end to its fs base "
		     "differs between threads (%" PRIu64 ", %" PRIu64 ": static TLS aligned above a "
		     "page): samples of threads that end before icpp reads their fs base get no base",
		     x->tp_offset, off);
}

static void note_refusal(struct proc *x, uint32_t tid, int err)
{
	if (err == -EBUSY)
		note(x, SF_P_PTRACE_REFUSED, "thread %u is traced by another process, so icpp cannot "
		     "read its threads' fs bases: samples of threads other than the main one get no "
		     "base (reported as missing); record without the debugger, or as root (bpf backend)",
		     tid);
	else
		note(x, SF_P_PTRACE_REFUSED, "ptrace not permitted (%s), so icpp cannot read its "
		     "threads' fs bases: samples of threads other than the main one get no base "
		     "(reported as missing); record as root (bpf backend), or allow ptrace "
		     "(sysctl kernel.yama.ptrace_scope=0, same user)", strerror(-err));
}

static struct thread *read_thread(struct procs *p, struct proc *x, uint32_t tid);

/* The process's offset from any thread of it that lives now, for the
 * samples of those that ended before icpp read them. */
static void learn_from_a_live_thread(struct procs *p, struct proc *x)
{
	char path[64];
	snprintf(path, sizeof(path), "/proc/%u/task", x->tgid);
	DIR *d = opendir(path);
	struct dirent *de;
	while (d && !x->tp_offset && !(x->tp_flags & SF_P_PTRACE_REFUSED) && (de = readdir(d))) {
		uint32_t tid = (uint32_t)strtoul(de->d_name, NULL, 10);
		struct thread *t;
		HASH_FIND(hh, x->threads, &tid, sizeof(tid), t);
		if (tid && tid != x->tgid && !t)
			read_thread(p, x, tid);
	}
	if (d)
		closedir(d);
}

/* Read thread tid's fs base (once: a thread keeps it for life). */
static struct thread *read_thread(struct procs *p, struct proc *x, uint32_t tid)
{
	struct thread *t = calloc(1, sizeof(*t));
	if (!t)
		return NULL;
	t->tid = tid;
	HASH_ADD(hh, x->threads, tid, sizeof(t->tid), t);
	if (x->tp_flags & SF_P_PTRACE_REFUSED)
		return t;
	uint64_t fs_base, sp;
	int rc = thread_pointer_read((pid_t)x->tgid, (pid_t)tid, &fs_base, &sp);
	if (rc == -EPERM || rc == -EBUSY)
		note_refusal(x, tid, rc);
	else if (rc == -ESRCH && !x->tp_offset)
		learn_from_a_live_thread(p, x);
	if (rc || !fs_base)
		return t;
	t->fs_base = fs_base;
	learn_offset(p, x, tid, fs_base, sp);
	return t;
}

/* The base of a thread whose fs base could not be read (it ended before
 * icpp got to it, or it is the leader): the end of the mapping that holds SP
 * minus the process's offset, when that is known to be one for all threads.
 * glibc rounds struct pthread (under a page) down to the static TLS
 * alignment from a page-aligned end: an offset below a page means an
 * alignment below one, hence the same offset in every thread; from a page
 * up it may differ between threads that were not read. */
static uint64_t base_by_offset(struct procs *p, struct proc *x, uint64_t sp)
{
	uint64_t page = (uint64_t)sysconf(_SC_PAGESIZE);
	if (!x->tp_offset || x->tp_offset >= page ||
	    (x->tp_flags & (SF_P_OFFSET_VARIES | SF_P_FOREIGN_STACK | SF_P_PTRACE_REFUSED)))
		return 0;
	const struct anon_map *m = anon_at(p, x, sp);
	if (!m || m->end - x->tp_offset <= sp || m->end - x->tp_offset < m->start)
		return 0;
	return m->end - x->tp_offset;
}

static uint64_t thread_base(struct procs *p, struct proc *x, uint32_t tid, uint64_t sp)
{
	struct thread *t;
	HASH_FIND(hh, x->threads, &tid, sizeof(tid), t);
	if (!t)
		t = read_thread(p, x, tid);
	return t && t->fs_base ? t->fs_base : base_by_offset(p, x, sp);
}

void procs_new_thread(struct procs *p, uint32_t tgid, uint32_t tid)
{
	struct proc *x = find(p, tgid);
	struct thread *t;
	if (!x)
		return;
	HASH_FIND(hh, x->threads, &tid, sizeof(tid), t);
	if (t) {
		/* Read already: its samples came from another CPU's ring first,
		 * or the tid is reused by a new thread.  Read it again; if it
		 * ended, its samples fall back on the process's offset. */
		HASH_DEL(x->threads, t);
		free(t);
		read_thread(p, x, tid);
	} else if (!x->tp_offset) {
		read_thread(p, x, tid);     /* while it lives: an offset for
		                             * the threads that end unread */
	}
}

void procs_store_threads(struct procs *p)
{
	for (uint32_t i = 0; i < p->out->nprocs; i++) {
		struct sf_process *sp = &p->out->procs[i];
		struct proc *x = find(p, sp->tgid);
		if (x) {
			sp->flags = x->tp_flags;
			sp->tp_offset = x->tp_offset;
		}
	}
}

uint64_t procs_base(struct procs *p, uint32_t tgid, uint32_t tid, uint64_t sp, bool *initial_stack)
{
	uint64_t start = procs_start_stack(p, tgid);
	struct proc *x = find(p, tgid);
	*initial_stack = x && icpp_on_initial_stack(start, sp, x->stack_rlimit);
	if (!x || *initial_stack)
		return *initial_stack ? start : 0;
	return thread_base(p, x, tid, sp);
}
