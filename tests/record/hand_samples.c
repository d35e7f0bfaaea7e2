/* Sample files and pathmaps made by hand (tests/record/hand_samples.h). */
#include <stdio.h>
#include <string.h>

#include "report/report.h"
#include "tests/record/hand_samples.h"

struct bin_module *hand_open(int argc, char **argv, const char *usage)
{
	char err[512];
	if (argc != 3) {
		fprintf(stderr, "usage: %s\n", usage);
		return NULL;
	}
	struct bin_module *m = bin_open(argv[1], err, sizeof(err));
	if (!m)
		fprintf(stderr, "%s\n", err);
	return m;
}

const struct bin_function *hand_function(struct bin_module *m, const char *name)
{
	size_t n;
	const struct bin_function *f = bin_functions(m, &n);
	for (size_t i = 0; i < n; i++)
		if (f[i].name && !strcmp(f[i].name, name))
			return &f[i];
	return NULL;
}

struct sample_set *hand_samples(struct bin_module *m, const char *path, const char *comm,
				uint64_t nsamples)
{
	struct sample_set *ss = sf_new();
	sf_set_string(&ss->meta.event, "cpu-clock");
	sf_set_string(&ss->meta.command, comm);
	ss->meta.freq = 999;
	ss->meta.backend = SF_BACKEND_PERF;
	ss->meta.ncpus = 1;
	ss->meta.c.samples = nsamples;
	sf_add_process(ss, 100, 0, comm);
	struct sf_module sm;
	memset(&sm, 0, sizeof(sm));
	sm.tgid = 100;
	sm.start = HAND_BIAS;
	sm.end = HAND_BIAS + 0x10000000;
	sm.bias = HAND_BIAS;
	sm.bias_known = 1;
	const uint8_t *id;
	sm.build_id_len = (uint32_t)bin_build_id(m, &id);
	memcpy(sm.build_id, id, sm.build_id_len);
	sm.path = (char *)path;
	if (sf_add_module(ss, &sm) == SF_NONE) {
		sf_free(ss);
		return NULL;
	}
	return ss;
}

bool hand_map(struct sample_set *ss, const char *path, uint64_t start)
{
	struct sf_module sm;
	memset(&sm, 0, sizeof(sm));
	sm.tgid = 100;
	sm.start = start;
	sm.end = start + 0x100000;
	sm.path = (char *)path;
	return sf_add_module(ss, &sm) != SF_NONE;
}

bool hand_sample(struct sample_set *ss, uint64_t vaddr, int64_t sp_off, int64_t bp_off,
		 uint32_t flags, uint64_t count)
{
	struct sf_record r;
	memset(&r, 0, sizeof(r));
	r.tgid = 100;
	r.ip = HAND_BIAS + vaddr;
	r.sp_off = sp_off;
	r.bp_off = bp_off;
	r.flags = flags;
	r.count = count;
	r.stack = SF_NONE;
	return sf_add_record(ss, &r) != SF_NONE;
}

const char *hand_report(struct pathmap *pm, struct sample_set *ss, const char *dir, const char *name,
			enum rp_format format)
{
	static char buf[8192];
	char err[512], map[4096], samples[4096], out[4096];
	snprintf(map, sizeof(map), "%s/%s.icpp", dir, name);
	snprintf(samples, sizeof(samples), "%s/%s.samples", dir, name);
	snprintf(out, sizeof(out), "%s/%s.%s", dir, name, format == RP_FOLDED ? "folded" : "txt");
	struct rp_opts o = {.samples = samples, .pathmap = map, .output = out, .format = format};
	if (pm_write(pm, map, err, sizeof(err)) || sf_write(ss, samples, err, sizeof(err)) ||
	    rp_run(&o, err, sizeof(err))) {
		fprintf(stderr, "hand_report: %s\n", err);
		return NULL;
	}
	FILE *f = fopen(out, "r");
	size_t n = f ? fread(buf, 1, sizeof(buf) - 1, f) : 0;
	buf[n] = 0;
	if (f)
		fclose(f);
	return buf;
}

bool hand_sample_in_frame(struct sample_set *ss, struct bin_module *m, uint64_t vaddr, int64_t h,
			  uint64_t count)
{
	struct bin_cfa rule;
	return bin_cfa_at(m, vaddr, &rule) == 0 && rule.reg == BIN_CFA_RSP &&
	       hand_sample(ss, vaddr, h + rule.offset, 0, 0, count);
}

struct pathmap *hand_clone_map(struct bin_module *m, const char *path,
			       const struct bin_function *f, const struct bin_function *clone,
			       int64_t h_func, int64_t h_clone, int64_t h_both)
{
	struct pathmap *pm = pm_new();
	const uint8_t *id;
	size_t idlen = bin_build_id(m, &id);
	uint32_t mod = pm ? pm_add_module(pm, path, id, (uint32_t)idlen) : PM_NONE;
	uint32_t ff = mod == PM_NONE ? PM_NONE : pm_add_function(pm, mod, f->addr, f->size, "the_func");
	uint32_t fc = ff == PM_NONE ? PM_NONE
		      : pm_add_function(pm, mod, clone->addr, clone->size, "the_clone");
	if (fc == PM_NONE || pm_add_node(pm, PM_NONE, ff, PM_NONE, 0, h_func, 1) == PM_NONE ||
	    pm_add_node(pm, PM_NONE, fc, PM_NONE, 0, h_clone, 1) == PM_NONE ||
	    pm_add_node(pm, PM_NONE, ff, PM_NONE, 0, h_both, 1) == PM_NONE ||
	    pm_add_node(pm, PM_NONE, fc, PM_NONE, 0, h_both, 1) == PM_NONE) {
		pm_free(pm);
		return NULL;
	}
	return pm;
}
