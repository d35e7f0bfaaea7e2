#!/usr/bin/env python3
"""bench/record/run.py BUILD_DIR [ROUNDS]: the recording benchmark (as root).

(a) Per-sample cost of the BPF programs (BPF_ENABLE_STATS run_time_ns /
    run_cnt), same workload, same cpu-clock events at 10 kHz: icpp's sampler,
    icpp's sampler with --validate, a frame-pointer walk (bpf_get_stack + hash
    + count), an 8 KiB user-stack copy (what perf --call-graph dwarf copies
    per sample), and an empty program (dispatch + measurement floor).
(b) End-to-end slowdown of the workload's own work loop at 1 kHz and 10 kHz:
    no profiler, the bare sampling event (an empty BPF program on the same
    system-wide cpu-clock events: what the timer interrupts alone cost), icpp
    (bpf), icpp (perf backend), perf record -g, perf record --call-graph dwarf.  Rounds run the configurations in a random order, each
    run with a random environment size (thesis ch. 4: vary the setup), and each
    configuration is compared with the plain runs by a Mann-Whitney U test.
(c) Report side: CID lookup cost and report throughput at 1M paths
    (bench_lookup).
Prints markdown; docs/bench-record.md holds a run with commentary."""
import os, random, statistics, subprocess, sys, tempfile, math

B = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else "build-record")
ROUNDS = int(sys.argv[2]) if len(sys.argv) > 2 else 8
ICPP = f"{B}/cli/icpp"
WORK = f"{B}/bench/record/bench_workload"
FPWALK = f"{B}/bench/record/bench_fpwalk"
LOOKUP = f"{B}/bench/record/bench_lookup"
DEPTH = "20"
TMP = tempfile.mkdtemp(prefix="icpp-bench-")


def run(cmd, env=None):
    p = subprocess.run(cmd, capture_output=True, text=True, env=env)
    if p.returncode != 0:
        sys.exit(f"failed: {' '.join(cmd)}\n{p.stderr}")
    return p.stdout + p.stderr


def per_run_ns(out):
    for line in out.splitlines():
        if "ns per run" in line:
            return float(line.split("ns per run")[0].split(",")[-1])
    sys.exit("no BPF stats in:\n" + out)


def mann_whitney_p(a, b):
    """Two-sided p-value of the Mann-Whitney U test (normal approximation
    with tie correction; fine for the sample sizes used here)."""
    n1, n2 = len(a), len(b)
    allv = sorted((v, i) for i, v in enumerate(a + b))
    ranks = [0.0] * (n1 + n2)
    i = 0
    ties = 0.0
    while i < len(allv):
        j = i
        while j + 1 < len(allv) and allv[j + 1][0] == allv[i][0]:
            j += 1
        r = (i + j) / 2 + 1
        for k in range(i, j + 1):
            ranks[allv[k][1]] = r
        t = j - i + 1
        ties += t ** 3 - t
        i = j + 1
    r1 = sum(ranks[:n1])
    u = r1 - n1 * (n1 + 1) / 2
    mu = n1 * n2 / 2
    n = n1 + n2
    sigma = math.sqrt(n1 * n2 / 12 * ((n + 1) - ties / (n * (n - 1))))
    if sigma == 0:
        return 1.0
    z = (abs(u - mu) - 0.5) / sigma
    return math.erfc(max(z, 0) / math.sqrt(2))


def part_a():
    print("## (a) Per-sample cost of the BPF program (cpu-clock 10 kHz, call depth %s + 4)\n" % DEPTH)
    reps = 5
    res = {k: [] for k in ["icpp", "icpp --validate", "fp walk", "8 KiB copy", "empty"]}
    wl = [WORK, "1", DEPTH]
    for _ in range(reps):
        res["icpp"].append(per_run_ns(run([ICPP, "record", "-q", "--bpf-stats", "-F", "10000",
                                           "-o", f"{TMP}/a.samples", "--"] + wl)))
        res["icpp --validate"].append(per_run_ns(run([ICPP, "record", "-q", "--validate", "--bpf-stats",
                                                      "-F", "10000", "-o", f"{TMP}/a.samples", "--"] + wl)))
        res["fp walk"].append(per_run_ns(run([FPWALK, "0", "10000"] + wl)))
        res["8 KiB copy"].append(per_run_ns(run([FPWALK, "1", "10000"] + wl)))
        res["empty"].append(per_run_ns(run([FPWALK, "2", "10000"] + wl)))
    med = {k: statistics.median(v) for k, v in res.items()}
    print("| program | ns per sample (median of %d runs) | runs | minus empty | vs fp walk |" % reps)
    print("|---|---|---|---|---|")
    for k, v in res.items():
        extra = med[k] - med["empty"]
        ratio = med[k] / med["fp walk"]
        ratio_x = extra / (med["fp walk"] - med["empty"]) if k != "empty" else float("nan")
        print(f"| {k} | {med[k]:.0f} | {', '.join('%.0f' % x for x in v)} | {extra:.0f} | "
              f"{ratio:.2f} ({ratio_x:.2f} above empty) |")
    print()
    return med


def part_b():
    print("## (b) End-to-end slowdown of the work loop (%d rounds, random order and environment size)\n" % ROUNDS)
    configs = {
        "none": [],
        "event only (empty BPF program)": [FPWALK, "2", "{f}"],
        "icpp bpf": [ICPP, "record", "-q", "--backend", "bpf", "-F", "{f}", "-o", f"{TMP}/b.samples", "--"],
        "icpp perf": [ICPP, "record", "-q", "--backend", "perf", "-F", "{f}", "-o", f"{TMP}/b.samples", "--"],
        "perf -g": ["perf", "record", "-q", "-g", "-F", "{f}", "-o", f"{TMP}/perf.data", "--"],
        "perf dwarf": ["perf", "record", "-q", "--call-graph", "dwarf", "-F", "{f}", "-o", f"{TMP}/perf.data", "--"],
    }
    out = {}
    for f in ["1000", "10000"]:
        times = {k: [] for k in configs}
        for r in range(ROUNDS):
            order = list(configs)
            random.shuffle(order)
            for k in order:
                env = dict(os.environ)
                env["ICPP_BENCH_PAD"] = "x" * random.randint(0, 4096)
                cmd = [c.replace("{f}", f) for c in configs[k]] + [WORK, "1", DEPTH]
                o = run(cmd, env)
                t = [float(l.split()[1]) for l in o.splitlines() if l.startswith("work_seconds")]
                times[k].append(t[0])
        base = statistics.median(times["none"])
        print(f"### {int(f) // 1000} kHz\n")
        print("| profiler | median work s | slowdown | Mann-Whitney p vs none | runs (s) |")
        print("|---|---|---|---|---|")
        for k, v in times.items():
            m = statistics.median(v)
            p = mann_whitney_p(v, times["none"]) if k != "none" else float("nan")
            print(f"| {k} | {m:.4f} | {100 * (m / base - 1):+.2f}% | {p:.3f} | "
                  f"{' '.join('%.3f' % x for x in sorted(v))} |")
        print()
        out[f] = times
    return out


def part_c():
    print("## (c) Report side at 1M paths\n")
    print("```")
    print(run([LOOKUP, "1000000"]).strip())
    print("```\n")


if __name__ == "__main__":
    if os.geteuid() != 0:
        sys.exit("run as root (BPF)")
    random.seed(int.from_bytes(os.urandom(4), "little"))
    print(f"# icpp record benchmark\n\nmachine: {os.uname().release}, {os.cpu_count()} CPUs\n")
    what = sys.argv[3] if len(sys.argv) > 3 else "abc"
    if "a" in what:
        part_a()
    if "b" in what:
        part_b()
    if "c" in what:
        part_c()
