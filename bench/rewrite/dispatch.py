#!/usr/bin/env python3
"""Run-time cost of clones by dispatch, run by hand:
    python3 bench/rewrite/dispatch.py [BUILD_DIR]      (N=runs per variant, CALLS=hot calls)

bench/rewrite/dispatch.S calls bench_work CALLS times from a hot indirect
callsite and once from each of 129 cold ones.  For K = 1, 2, 4, 8, 16, 32, 128 a
plan written here clones bench_work for the first K cold callsites: every call
then runs the search over K return addresses at bench_work's entry
(rewriter.h section 1), and the hot call matches none of them.  The same with
bench_work in a library and the program's cold calls tagged (rewriter.h
section 1, Tagged calls; K = 1, 8, 32, 128): every call runs the page check, a
read below the return address and the search over K tags' low halves.  One interleaved run times the original, a byte copy of it
(A/A: the noise floor), the K rewrites, the two-module original and its
tagged rewrites; reports the ratio to the original (of its kind) and the cost
per call in nanoseconds ((t_K - t_original) / CALLS).
Writes Markdown to stdout; docs/bench-rewrite.md keeps results.
"""
import os, shutil, subprocess, sys, tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from run import ICPP, ROOT, RUNS, interleaved, run  # noqa: E402

CALLS = int(os.environ.get("CALLS", "200000000"))
KS = (1, 2, 4, 8, 16, 32, 128)
TAG_KS = (1, 8, 32, 128)


def symbols(prog):
    out = subprocess.run(["nm", prog], stdout=subprocess.PIPE, text=True, check=True).stdout
    return {f[2]: int(f[0], 16) for f in (l.split() for l in out.splitlines()) if len(f) == 3}


def build_id(prog):
    out = subprocess.run(["readelf", "-n", prog], stdout=subprocess.PIPE, text=True, check=True).stdout
    return next(l.split()[-1] for l in out.splitlines() if "Build ID" in l)


def write_plan(path, prog, k, lib=None):
    """A plan (docs/plan-format.md) cloning bench_work (of prog, or of lib:
    module 1) for cold callsites 1..k of prog: a callsite is named by its
    return address - 1."""
    sym, work = symbols(prog), symbols(lib or prog)["bench_work"]
    lines = ["icpp-plan 1", "unit functions", f"module 0 {build_id(prog)} {prog}"]
    if lib:
        lines.append(f"module 1 {build_id(lib)} {lib}")
    for c in range(k):
        lines.append(f"clone {c} {1 if lib else 0} {work:#x} 0 {sym[f'bench_site_{c + 1}'] - 1:#x} 0")
    lines.append(f"end {k}")
    with open(path, "w") as f:
        f.write("\n".join(lines) + "\n")


def tagged_variants(work, expect, variants, env):
    """bench_work in a library, cloned there for K cold calls of the program."""
    src = os.path.join(ROOT, "bench/rewrite/dispatch.S")
    lib, prog = os.path.join(work, "libbenchwork.so"), os.path.join(work, "dispatch2")
    subprocess.run(["gcc", "-O2", "-shared", "-fPIC", "-DBENCH_LIB", src, "-o", lib], check=True)
    subprocess.run(["gcc", "-O2", "-DBENCH_MAIN", src, "-L", work, "-lbenchwork",
                    "-Wl,-rpath,$ORIGIN", "-o", prog], check=True)
    run([ICPP, "train", "-q", "-o", "map2", "--", prog, "1000"], work)
    variants["two modules"] = prog
    for k in TAG_KS:
        write_plan(os.path.join(work, f"t{k}.plan"), prog, k, lib)
        out = os.path.join(work, f"t{k}")
        err = run([ICPP, "rewrite", prog, "-m", "map2", "--lib", lib, "--plan", f"t{k}.plan",
                   "-o", out], work)
        if f"{k} functions cloned ({k} by dispatch)" not in err or f"{k} calls tagged" not in err:
            sys.exit(f"bench: tags K={k}: not {k} tagged clones: {err.strip()[-400:]}")
        env[out] = dict(os.environ, LD_LIBRARY_PATH=out + ".libs")
        if output([out, "1000"], work, env[out]) != expect:
            sys.exit(f"bench: tags K={k}: the rewritten program's output differs")
        variants[f"tags K={k}"] = out


def output(cmd, cwd, env=None):
    return subprocess.run(cmd, cwd=cwd, env=env, stdout=subprocess.PIPE, text=True,
                          check=True).stdout


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
        env = {}
        tagged_variants(work, expect, variants, env)
        med = interleaved(variants, lambda v: ([variants[v], str(CALLS)], env.get(variants[v])),
                          work)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    print(f"{CALLS} hot calls, every one searching all K tests; runs per variant: {RUNS} (median), "
          f"interleaved round-robin; machine: {os.cpu_count()} CPUs\n")
    print("| variant | seconds | / original | ns per call over the original |")
    print("|---|---|---|---|")
    for v, t in med.items():
        base = "two modules" if v.startswith("t") else "original"
        t0 = med[base]
        extra = "-" if v == base else f"{1e9 * (t - t0) / CALLS:.2f}"
        print(f"| {v} | {t:.3f} | {t / t0:.3f} | {extra} |")


if __name__ == "__main__":
    main()
