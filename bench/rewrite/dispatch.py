#!/usr/bin/env python3
"""Run-time cost of clones by dispatch, run by hand:
    python3 bench/rewrite/dispatch.py [BUILD_DIR]      (N=runs per variant, CALLS=hot calls)

bench/rewrite/dispatch.S calls bench_work CALLS times from a hot indirect
callsite and once from each of 8 cold ones.  For K = 1, 2, 4, 8 a plan written
here clones bench_work for the first K cold callsites: every call then runs
K tests of the return address at bench_work's entry, and the hot call fails
all of them (the worst case).  One interleaved run times the original, a byte
copy of it (A/A: the noise floor) and the K rewrites; reports the ratio to the
original and the cost per call in nanoseconds ((t_K - t_original) / CALLS).
Writes Markdown to stdout; docs/bench-rewrite.md keeps results.
"""
import os, shutil, subprocess, sys, tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from run import ICPP, ROOT, RUNS, interleaved, run  # noqa: E402

CALLS = int(os.environ.get("CALLS", "200000000"))
KS = (1, 2, 4, 8)


def symbols(prog):
    out = subprocess.run(["nm", prog], stdout=subprocess.PIPE, text=True, check=True).stdout
    return {f[2]: int(f[0], 16) for f in (l.split() for l in out.splitlines()) if len(f) == 3}


def build_id(prog):
    out = subprocess.run(["readelf", "-n", prog], stdout=subprocess.PIPE, text=True, check=True).stdout
    return next(l.split()[-1] for l in out.splitlines() if "Build ID" in l)


def write_plan(path, prog, k):
    """A plan (docs/plan-format.md) cloning bench_work for cold callsites 1..k:
    a callsite is named by its return address - 1."""
    sym = symbols(prog)
    lines = ["icpp-plan 1", "unit functions", f"module 0 {build_id(prog)} {prog}"]
    for c in range(k):
        lines.append(f"clone {c} 0 {sym['bench_work']:#x} 0 {sym[f'bench_site_{c + 1}'] - 1:#x} 0")
    lines.append(f"end {k}")
    with open(path, "w") as f:
        f.write("\n".join(lines) + "\n")


def output(cmd, cwd):
    return subprocess.run(cmd, cwd=cwd, stdout=subprocess.PIPE, text=True, check=True).stdout


def main():
    work = tempfile.mkdtemp(prefix="icpp-bench-dispatch-")
    try:
        prog = os.path.join(work, "dispatch")
        subprocess.run(["gcc", "-O2", os.path.join(ROOT, "bench/rewrite/dispatch.S"), "-o", prog],
                       check=True)
        run([ICPP, "train", "-q", "-o", "map", "--", prog, "1000"], work)
        os.makedirs(os.path.join(work, "copy"))
        variants = {"original": prog, "copy": os.path.join(work, "copy", "dispatch")}
        shutil.copy(prog, variants["copy"])
        expect = output([prog, "1000"], work)
        for k in KS:
            write_plan(os.path.join(work, f"k{k}.plan"), prog, k)
            out = os.path.join(work, f"k{k}")
            err = run([ICPP, "rewrite", prog, "-m", "map", "--plan", f"k{k}.plan", "-o", out], work)
            if f"{k} functions cloned ({k} by dispatch)" not in err:
                sys.exit(f"bench: K={k}: not {k} clones by dispatch: {err.strip()[-400:]}")
            if output([out, "1000"], work) != expect:
                sys.exit(f"bench: K={k}: the rewritten program's output differs")
            variants[f"K={k}"] = out
        med = interleaved(variants, lambda v: ([variants[v], str(CALLS)], None), work)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    t0 = med["original"]
    print(f"{CALLS} hot calls, every one failing all K tests; runs per variant: {RUNS} (median), "
          f"interleaved round-robin; machine: {os.cpu_count()} CPUs\n")
    print("| variant | seconds | / original | ns per call over the original |")
    print("|---|---|---|---|")
    for v, t in med.items():
        extra = "-" if v == "original" else f"{1e9 * (t - t0) / CALLS:.2f}"
        print(f"| {v} | {t:.3f} | {t / t0:.3f} | {extra} |")


if __name__ == "__main__":
    main()
