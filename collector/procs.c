/* procs: modules and bases of the target processes (see procs.h). */
#include "collector/procs.h"

#include "pathmap/thread_base.h"

#include <elf.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <pthread.h>
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

struct proc {
	uint32_t tgid;
	uint64_t start_stack;
	uint64_t stack_rlimit;      /* the target's RLIMIT_STACK (soft) */
	int start_stack_read;
	struct anon_map *anon;      /* newest last */
	size_t nanon, cap_anon;
	UT_hash_handle hh;
};

struct procs {
	struct sample_set *out;
	struct proc *procs;
	int64_t pt_offset;
};

struct procs *procs_new(struct sample_set *out)
{
	struct procs *p = calloc(1, sizeof(*p));
	if (p) {
		p->out = out;
		p->pt_offset = pt_offset_measure();
	}
	return p;
}

void procs_free(struct procs *p)
{
	struct proc *x, *t;
	if (!p)
		return;
	HASH_ITER(hh, p->procs, x, t) {
		HASH_DEL(p->procs, x);
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
		else if (perms[2] != 'x' && (name[0] == 0 || !strncmp(name, "[stack", 6)))
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
	else if (!(prot & PROT_EXEC) && (!strcmp(filename, "//anon") || filename[0] == 0))
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

uint64_t procs_base(struct procs *p, uint32_t tgid, uint64_t sp, bool *initial_stack)
{
	uint64_t start = procs_start_stack(p, tgid);
	struct proc *x = find(p, tgid);
	*initial_stack = x && icpp_on_initial_stack(start, sp, x->stack_rlimit);
	return *initial_stack ? start : procs_thread_base(p, tgid, sp);
}

static uint64_t anon_end(struct proc *x, uint64_t sp)
{
	for (size_t i = x->nanon; i-- > 0;)
		if (sp >= x->anon[i].start && sp < x->anon[i].end)
			return x->anon[i].end;
	return 0;
}

uint64_t procs_thread_base(struct procs *p, uint32_t tgid, uint64_t sp)
{
	struct proc *x = find(p, tgid);
	if (!x || !p->pt_offset)
		return 0;
	uint64_t end = anon_end(x, sp);
	if (!end) {
		procs_rescan(p, tgid);
		end = anon_end(x, sp);
	}
	return end ? end - (uint64_t)p->pt_offset : 0;
}

/* ---- glibc's struct pthread offset ---- */

static void *pt_probe(void *arg)
{
	int64_t *out = arg;
	pthread_attr_t a;
	void *lo;
	size_t size;
	if (pthread_getattr_np(pthread_self(), &a) == 0) {
		if (pthread_attr_getstack(&a, &lo, &size) == 0)
			*out = (int64_t)((uintptr_t)lo + size - (uintptr_t)pthread_self());
		pthread_attr_destroy(&a);
	}
	return NULL;
}

int64_t pt_offset_measure(void)
{
	static int64_t cached = -1;
	pthread_t t;
	int64_t v = 0;
	if (cached >= 0)
		return cached;
	if (pthread_create(&t, NULL, pt_probe, &v) == 0)
		pthread_join(t, NULL);
	/* pthread_attr_getstack reports the usable stack: its top is the end of
	 * the mapping, where glibc puts struct pthread (and the static TLS
	 * block just below).  Sanity: it is a few KiB at most. */
	if (v <= 0 || v > 1 << 20)
		v = 0;
	cached = v;
	return v;
}
