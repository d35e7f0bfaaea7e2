/* fpwalk: run a command under fpwalk.bpf.c (mode 0 frame-pointer walk, 1
 * 8 KiB stack copy, 2 empty) on one cpu-clock event per CPU at FREQ Hz and
 * print the program's run time per run (BPF_ENABLE_STATS).
 * usage: fpwalk MODE FREQ CMD ARGS... */
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <linux/perf_event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "fpwalk.skel.h"

int main(int argc, char **argv)
{
	if (argc < 4) {
		fprintf(stderr, "usage: fpwalk MODE FREQ CMD ARGS...\n");
		return 2;
	}
	int mode = atoi(argv[1]);
	long freq = atol(argv[2]);
	struct fpwalk_bpf *skel = fpwalk_bpf__open();
	if (!skel)
		return 1;
	skel->rodata->mode = mode;
	int stats = bpf_enable_stats(BPF_STATS_RUN_TIME);
	if (fpwalk_bpf__load(skel)) {
		fprintf(stderr, "fpwalk: cannot load\n");
		return 1;
	}
	int go[2];
	if (pipe(go))
		return 1;
	pid_t pid = fork();
	if (pid == 0) {
		char c;
		close(go[1]);
		if (read(go[0], &c, 1) != 1)
			_exit(127);
		execvp(argv[3], argv + 3);
		_exit(127);
	}
	close(go[0]);
	__u32 tgid = (__u32)pid;
	__u8 one = 1;
	bpf_map__update_elem(skel->maps.targets, &tgid, sizeof(tgid), &one, 1, BPF_ANY);
	int ncpu = libbpf_num_possible_cpus();
	for (int c = 0; c < ncpu; c++) {
		struct perf_event_attr a;
		memset(&a, 0, sizeof(a));
		a.size = sizeof(a);
		a.type = PERF_TYPE_SOFTWARE;
		a.config = PERF_COUNT_SW_CPU_CLOCK;
		a.freq = 1;
		a.sample_freq = (unsigned long long)freq;
		int fd = (int)syscall(SYS_perf_event_open, &a, -1, c, -1, PERF_FLAG_FD_CLOEXEC);
		if (fd < 0 || !bpf_program__attach_perf_event(skel->progs.fpwalk, fd)) {
			fprintf(stderr, "fpwalk: cannot attach on CPU %d\n", c);
			return 1;
		}
	}
	if (write(go[1], "x", 1) != 1)
		return 1;
	int status;
	waitpid(pid, &status, 0);
	struct bpf_prog_info info;
	__u32 len = sizeof(info);
	memset(&info, 0, sizeof(info));
	bpf_obj_get_info_by_fd(bpf_program__fd(skel->progs.fpwalk), &info, &len);
	printf("fpwalk mode %d: %llu runs, %.1f ns per run\n", mode, (unsigned long long)info.run_cnt,
	       info.run_cnt ? (double)info.run_time_ns / (double)info.run_cnt : 0.0);
	close(stats);
	fpwalk_bpf__destroy(skel);
	return 0;
}
