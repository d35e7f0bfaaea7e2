// SPDX-License-Identifier: GPL-2.0
/* fpwalk.bpf.c: what other BPF profilers do per sample, for the benchmark
 * against bpf/sample.bpf.c (same target filter, same perf events):
 *   mode 0  walk the user stack with frame pointers (bpf_get_stack), hash it
 *           and count it (a bcc-style user-stack profiler);
 *   mode 1  copy 8 KiB of user stack at SP, as perf record --call-graph dwarf
 *           does per sample (the copy only: no unwinding in the kernel);
 *   mode 2  the filter alone (cost of an empty perf_event program). */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

char LICENSE[] SEC("license") = "GPL";

const volatile int mode = 0;

#define DEPTH 127
#define COPY (8 * 1024)

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 64);
	__type(key, __u32);
	__type(value, __u8);
} targets SEC(".maps");

struct fkey {
	__u32 tgid;
	__u32 depth;
	__u64 hash;
};

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 65536);
	__type(key, struct fkey);
	__type(value, __u64);
} counts SEC(".maps");

struct scratch {
	__u64 ips[DEPTH];
	__u8 stack[COPY];
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct scratch);
} buf SEC(".maps");

SEC("perf_event")
int fpwalk(struct bpf_perf_event_data *ctx)
{
	__u32 tgid = bpf_get_current_pid_tgid() >> 32, zero = 0;
	if (!bpf_map_lookup_elem(&targets, &tgid))
		return 0;
	struct scratch *s = bpf_map_lookup_elem(&buf, &zero);
	if (!s || mode == 2)
		return 0;
	if (mode == 1) {
		bpf_probe_read_user(s->stack, COPY, (void *)ctx->regs.sp);
		return 0;
	}
	long n = bpf_get_stack(ctx, s->ips, sizeof(s->ips), BPF_F_USER_STACK);
	if (n <= 0)
		return 0;
	struct fkey k = {.tgid = tgid, .depth = (__u32)(n / 8)};
	__u64 h = 14695981039346656037ull;
	for (int i = 0; i < DEPTH; i++) {
		if (i >= k.depth)
			break;
		h = (h ^ s->ips[i]) * 1099511628211ull;
	}
	k.hash = h;
	__u64 one = 1, *v = bpf_map_lookup_elem(&counts, &k);
	if (v)
		__sync_fetch_and_add(v, 1);
	else
		bpf_map_update_elem(&counts, &k, &one, BPF_NOEXIST);
	return 0;
}
