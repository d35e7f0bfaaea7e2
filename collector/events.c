/* events: names -> perf_event_attr, and why perf_event_open failed. */
#include "collector/events.h"

#include <asm/perf_regs.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#define PMU_DIR "/sys/bus/event_source/devices/"

static bool exists(const char *p)
{
	return access(p, F_OK) == 0;
}

static int read_int(const char *path, long *v)
{
	FILE *f = fopen(path, "r");
	if (!f)
		return -1;
	int rc = fscanf(f, "%ld", v) == 1 ? 0 : -1;
	fclose(f);
	return rc;
}

static bool cpu_vendor(const char *vendor)
{
	char line[256];
	bool found = false;
	FILE *f = fopen("/proc/cpuinfo", "r");
	if (!f)
		return false;
	while (fgets(line, sizeof(line), f))
		if (!strncmp(line, "vendor_id", 9)) {
			found = strstr(line, vendor) != NULL;
			break;
		}
	fclose(f);
	return found;
}

/* The core PMU: "cpu" (or "cpu_core" on hybrid Intel). */
static const char *core_pmu(void)
{
	if (exists(PMU_DIR "cpu"))
		return "cpu";
	if (exists(PMU_DIR "cpu_core"))
		return "cpu_core";
	return NULL;
}

static const char no_pmu_hint[] =
	"this machine exposes no hardware PMU (no " PMU_DIR "cpu; a VM without PMU "
	"pass-through?); use -e cpu-clock";

int ev_lookup(const char *name, struct rec_event *ev, char *err, size_t errlen)
{
	memset(ev, 0, sizeof(*ev));
	if (!strcmp(name, "cpu-clock")) {
		ev->name = "cpu-clock";
		ev->type = PERF_TYPE_SOFTWARE;
		ev->config = PERF_COUNT_SW_CPU_CLOCK;
		return 0;
	}
	if (!strcmp(name, "cycles") || !strcmp(name, "cpu-cycles")) {
		ev->name = "cycles";
		ev->type = PERF_TYPE_HARDWARE;
		ev->config = PERF_COUNT_HW_CPU_CYCLES;
		ev->hardware = true;
		if (!core_pmu()) {
			snprintf(err, errlen, "event cycles: %s", no_pmu_hint);
			return -1;
		}
		return 0;
	}
	if (!strcmp(name, "l1d-miss") || !strcmp(name, "mem_load_retired.l1_miss")) {
		const char *pmu = core_pmu();
		char path[256];
		long type;

		ev->name = "mem_load_retired.l1_miss";
		ev->hardware = true;
		if (!pmu) {
			snprintf(err, errlen, "event %s: %s", name, no_pmu_hint);
			return -1;
		}
		if (!cpu_vendor("GenuineIntel")) {
			snprintf(err, errlen, "event %s needs Intel PEBS; on AMD use -e ibs-op "
				 "(precise IP, SP from the interrupt), or -e cpu-clock", name);
			return -1;
		}
		snprintf(path, sizeof(path), PMU_DIR "%s/type", pmu);
		if (read_int(path, &type)) {
			snprintf(err, errlen, "event %s: cannot read %s; use -e cpu-clock", name, path);
			return -1;
		}
		/* MEM_LOAD_RETIRED.L1_MISS: event 0xd1, umask 0x08 (Skylake to
		 * Sapphire Rapids); PEBS, so precise_ip and the record's regs. */
		ev->type = (uint32_t)type;
		ev->config = 0x08d1;
		ev->precise_ip = 2;
		ev->regs_intr = true;
		return 0;
	}
	if (!strcmp(name, "ibs-op")) {
		long type;
		ev->name = "ibs-op";
		ev->hardware = true;
		ev->skid = true;
		if (read_int(PMU_DIR "ibs_op/type", &type)) {
			snprintf(err, errlen, "event ibs-op needs AMD IBS (no " PMU_DIR
				 "ibs_op on this machine); use -e cpu-clock");
			return -1;
		}
		ev->type = (uint32_t)type;
		ev->config = 0;
		return 0;
	}
	snprintf(err, errlen, "unknown event '%s'; known: cpu-clock, cycles, l1d-miss "
		 "(mem_load_retired.l1_miss), ibs-op", name);
	return -1;
}

void ev_attr(const struct rec_event *ev, uint64_t freq, uint64_t period, struct perf_event_attr *a)
{
	memset(a, 0, sizeof(*a));
	a->size = sizeof(*a);
	a->type = ev->type;
	a->config = ev->config;
	if (freq) {
		a->freq = 1;
		a->sample_freq = freq;
	} else {
		a->sample_period = period;
	}
	a->sample_type = PERF_SAMPLE_IP;
	a->precise_ip = ev->precise_ip;
	if (ev->regs_intr) {
		a->sample_type |= PERF_SAMPLE_REGS_INTR;
		a->sample_regs_intr = (1ULL << PERF_REG_X86_IP) | (1ULL << PERF_REG_X86_SP) |
				      (1ULL << PERF_REG_X86_BP);
	}
}

long ev_open(struct perf_event_attr *attr, pid_t pid, int cpu, int group_fd, unsigned long flags)
{
	return syscall(SYS_perf_event_open, attr, pid, cpu, group_fd, flags);
}

void ev_explain(const struct rec_event *ev, int e, const char *what, char *err, size_t errlen)
{
	long paranoid = 2;
	read_int("/proc/sys/kernel/perf_event_paranoid", &paranoid);
	switch (e) {
	case ENOENT:
	case EOPNOTSUPP:
	case ENODEV:
		if (ev->hardware) {
			snprintf(err, errlen, "%s: event %s is not supported here (%s); use -e cpu-clock",
				 what, ev->name, strerror(e));
			return;
		}
		break;
	case EACCES:
	case EPERM:
		snprintf(err, errlen, "%s: %s (kernel.perf_event_paranoid is %ld); run as root, "
			 "or lower it, or use --backend perf on a process of your own", what,
			 strerror(e), paranoid);
		return;
	case EMFILE:
		snprintf(err, errlen, "%s: too many open files; raise 'ulimit -n'", what);
		return;
	case EINVAL:
		if (ev->precise_ip) {
			snprintf(err, errlen, "%s: the kernel refused precise event %s (%s); "
				 "use -e cpu-clock", what, ev->name, strerror(e));
			return;
		}
		break;
	}
	snprintf(err, errlen, "%s: %s", what, strerror(e));
}

int ev_online_cpus(int *cpus, int max)
{
	char buf[4096];
	int n = 0;
	FILE *f = fopen("/sys/devices/system/cpu/online", "r");
	if (!f || !fgets(buf, sizeof(buf), f)) {
		if (f)
			fclose(f);
		long c = sysconf(_SC_NPROCESSORS_ONLN);
		for (long i = 0; i < c && n < max; i++)
			cpus[n++] = (int)i;
		return n;
	}
	fclose(f);
	for (char *tok = strtok(buf, ",\n"); tok; tok = strtok(NULL, ",\n")) {
		int a, b;
		if (sscanf(tok, "%d-%d", &a, &b) == 2) {
			for (int i = a; i <= b && n < max; i++)
				cpus[n++] = i;
		} else if (sscanf(tok, "%d", &a) == 1 && n < max) {
			cpus[n++] = a;
		}
	}
	return n;
}
