#!/usr/bin/env python3
"""Rewrite benchmark (issue 5), run by hand:  python3 bench/rewrite/run.py [BUILD_DIR]
(N=runs per variant, ONLY=a part of the workloads' names)

For each workload: train the original, rewrite it twice (the solver's plan,
and --everything: every function and callsite the analysis allows, the worst
case), then measure in one interleaved run (round-robin, N runs each, medians)
the original, a byte copy of the original (A/A: the noise floor) and both
rewrites.  A workload may name libraries rewritten with the program by the
same plan (icpp rewrite --lib), found through an environment variable.  Reports run-time ratios against the original, rewrite time, file
growth, what was changed, and precision before -> after as the rewrite
predicts it.  Writes Markdown to stdout; docs/bench-rewrite.md keeps results.

With CG=1 each variant also runs once under cachegrind (--branch-sim=yes
--cache-sim=yes, the host's cache sizes): instructions plus
MISPREDICT_CYCLES per mispredicted branch, L1_MISS_CYCLES per first-level
miss (instruction or data) and LL_MISS_CYCLES per last-level one, against
the original's.  A deterministic estimate of the run time, where the wall
clock of a shared machine spreads by a third; it leaves the return stack
out.  Before session 46 it left the caches out too, and with them what
clones cost most: a rewritten program's hot code grows by its clones'
copies, and the instruction cache misses (docs/bench-disambig.md, "Run time
with the instruction cache").
"""
import os, re, shutil, statistics, subprocess, sys, tempfile, time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, "../.."))
BUILD = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else os.path.join(ROOT, "build"))
ICPP = os.path.join(BUILD, "cli/icpp")
RUNS = int(os.environ.get("N", "7"))
ONLY = os.environ.get("ONLY", "")      # run only the workloads whose name holds this
CG = os.environ.get("CG", "") == "1"   # the cachegrind estimate too
MISPREDICT_CYCLES = 15
L1_MISS_CYCLES = 10
LL_MISS_CYCLES = 100


def run(cmd, cwd, env=None, check=True):
    r = subprocess.run(cmd, cwd=cwd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                       text=True)
    if check and r.returncode != 0:
        sys.exit(f"bench: {' '.join(cmd)} failed: {r.stderr.strip()[-2000:]}")
    return r.stderr


def timed(cmd, cwd, env):
    t = time.perf_counter()
    subprocess.run(cmd, cwd=cwd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return time.perf_counter() - t


def cachegrind(cmd, cwd, env):
    """The cycles of one run as cachegrind counts its events: instructions,
    mispredicted branches, first-level and last-level cache misses."""
    with tempfile.NamedTemporaryFile(prefix="icpp-cg-") as out:
        vg = ["valgrind", "--tool=cachegrind", "--cache-sim=yes", "--branch-sim=yes",
              f"--cachegrind-out-file={out.name}"]
        r = subprocess.run(vg + cmd, cwd=cwd, env=env, stdout=subprocess.DEVNULL,
                           stderr=subprocess.PIPE, text=True)
        text = open(out.name).read()
    ev = re.search(r"^events: (.*)$", text, re.M)
    sm = re.search(r"^summary: (.*)$", text, re.M)
    if r.returncode != 0 or not ev or not sm:
        sys.exit(f"bench: cachegrind of {' '.join(cmd)} failed: {r.stderr.strip()[-500:]}")
    n = dict(zip(ev.group(1).split(), map(int, sm.group(1).split())))
    return (n["Ir"] + MISPREDICT_CYCLES * (n["Bcm"] + n["Bim"]) +
            L1_MISS_CYCLES * (n["I1mr"] + n["D1mr"] + n["D1mw"]) +
            LL_MISS_CYCLES * (n["ILmr"] + n["DLmr"] + n["DLmw"]))


def interleaved(variants, command, cwd):
    """Median seconds of each variant over RUNS round-robin runs (the order
    rotates, so that no variant always runs first); command(v) -> (cmd, env)."""
    samples = {v: [] for v in variants}
    for i in range(RUNS):
        order = list(variants)
        order = order[i % len(order):] + order[:i % len(order)]
        for v in order:
            c, env = command(v)
            samples[v].append(timed(c, cwd, env))
    return {v: statistics.median(s) for v, s in samples.items()}


def workloads(work):
    """name -> (target file, how to run it: list, whether the target is a
    library found through LD_LIBRARY_PATH, (libraries rewritten with it, the
    variable that finds them))"""
    gcc = ["gcc", "-O2", os.path.join(ROOT, "bench/train/callheavy.c")]
    subprocess.run(gcc + ["-fno-omit-frame-pointer", "-o", "callheavy-fp"], cwd=work, check=True)
    subprocess.run(gcc + ["-o", "callheavy-nofp"], cwd=work, check=True)
    shutil.copy(os.path.join(ROOT, "bench/train/bench.lua"), work)
    shutil.copy(os.path.join(ROOT, "bench/disambig/workloads/work.py"), work)
    shutil.copy(os.path.join(ROOT, "bench/disambig/workloads/work.tcl"), work)
    tcl_libs = [l for l in ("/lib/x86_64-linux-gnu/libtcl8.6.so", "/lib/x86_64-linux-gnu/libc.so.6")
                if os.path.exists(l)]
    python = "/usr/bin/python3.11"
    json_mod = subprocess.run([python, "-c", "import _json; print(_json.__file__)"],
                              capture_output=True, text=True).stdout.strip() if os.path.exists(python) else ""
    with open(os.path.join(work, "data"), "wb") as f:
        for p in ("/usr/bin/cmake", "/usr/bin/zstd", "/usr/bin/lua5.4"):
            if os.path.exists(p):
                f.write(open(p, "rb").read()[:6_000_000])
        f.write(b"".join(b"%d\n" % i for i in range(400000)))
    jq = "/usr/bin/jq"
    jq_libs = [l for l in ("/lib/x86_64-linux-gnu/libjq.so.1", "/lib/x86_64-linux-gnu/libonig.so.5",
                           "/lib/x86_64-linux-gnu/libc.so.6") if os.path.exists(l)]
    if os.path.exists(jq):
        with open(os.path.join(work, "data.json"), "w") as f:
            subprocess.run([jq, "-nc", '[range(60000) | {id: ., name: "n\\(.)", '
                            'tags: [range(8) as $k | (. * 7 + $k) % 10], v: (. / 3)}]'],
                           stdout=f, check=True)
    libbz2 = subprocess.run(["sh", "-c", "ldd /usr/bin/bzip2 | sed -n 's/.*libbz2.so.1.0 => \\([^ ]*\\).*/\\1/p'"],
                            capture_output=True, text=True).stdout.strip()
    w = {
        "callheavy (C -O2, frame pointers)": (os.path.join(work, "callheavy-fp"), ["{P}", "30"], False),
        "callheavy (C -O2, Debian default: no frame pointers)": (os.path.join(work, "callheavy-nofp"), ["{P}", "30"], False),
        "lua5.4 bench.lua": ("/usr/bin/lua5.4", ["{P}", "bench.lua"], False),
        "zstd -3, -d (10 MB)": ("/usr/bin/zstd", ["sh", "-c", "{P} -q -3 -c data | {P} -q -dc > /dev/null"], False),
        "bzip2 -9, -d (10 MB; libbz2.so rewritten)": (libbz2, ["sh", "-c", "bzip2 -9 -c data | bzip2 -dc > /dev/null"], True),
        "cppcheck (C++) on rewriter/*.c": ("/usr/bin/cppcheck", ["{P}", "-q", "--enable=warning", "-I", ROOT,
                                            os.path.join(ROOT, "rewriter/analyze.c"),
                                            os.path.join(ROOT, "rewriter/write.c")], False),
        "python3.11 work.py (_json rewritten with it)": (python, ["{P}", "work.py"], False,
                                                          ([json_mod], "PYTHONPATH")),
        "tclsh8.6 work.tcl (libtcl and libc rewritten with it)": (
            "/usr/bin/tclsh8.6", ["{P}", "work.tcl"], False, (tcl_libs, "LD_LIBRARY_PATH")),
        # a call every 21 instructions, most into tiny functions: where a
        # plan's dispatches and trampolines cost the most (session 37)
        "jq filter, sort (60k records; libjq, libonig and libc rewritten with it)": (
            jq, ["{P}", "-c", "[.[] | select(.id % 7 == 0) | {id, s: (.tags | add)}] | "
                 "sort_by(.s) | .[0:5]", "data.json"], False, (jq_libs, "LD_LIBRARY_PATH")),
    }
    return {k: v if len(v) == 4 else v + (([], None),) for k, v in w.items() if os.path.exists(v[0])}


def variant_cmd(cmd, path, lib, work, libs_dir=None, libs_var=None):
    """The command for one variant: the program path substituted, or the
    library directory put on LD_LIBRARY_PATH; libs_dir, the variant's copies
    of the libraries rewritten with it, on libs_var."""
    env = dict(os.environ)
    if libs_dir and libs_var:
        env[libs_var] = libs_dir
    if lib:
        env["LD_LIBRARY_PATH"] = os.path.dirname(path) if path else ""
        return cmd, env
    return [c.replace("{P}", path) for c in cmd], env


def main():
    work = tempfile.mkdtemp(prefix="icpp-bench-rw-")
    rows, details = [], []
    try:
        for name, (target, cmd, lib, (libs, libs_var)) in workloads(work).items():
            if ONLY not in name:
                continue
            tag = re.sub(r"[^a-z0-9]+", "-", name.lower())[:20]
            d = os.path.join(work, tag)
            os.makedirs(d)
            for f in ("bench.lua", "data", "work.py", "work.tcl", "data.json"):
                if os.path.exists(os.path.join(work, f)):
                    os.link(os.path.join(work, f), os.path.join(d, f))   # zstd skips symlinks
            base = os.path.basename(target)
            variants, libs_dirs = {}, {}
            # A/A: a byte copy of the original (and of its libraries), same
            # place in the file system
            os.makedirs(os.path.join(d, "copy", "libs"))
            shutil.copy(target, os.path.join(d, "copy", base))
            for l in libs:
                shutil.copy(l, os.path.join(d, "copy", "libs"))
            variants["original"] = "" if lib else target
            variants["copy"] = os.path.join(d, "copy", base)
            libs_dirs["copy"] = os.path.join(d, "copy", "libs")
            c, env = variant_cmd(cmd, variants["original"], lib, d)
            run([ICPP, "train", "-q", "-o", "map", "--"] + c, d, env)
            info = {}
            libopts = [o for l in libs for o in ("--lib", l)]
            for v, opt in (("solved", []), ("everything", ["--everything"])):
                os.makedirs(os.path.join(d, v))
                out = os.path.join(d, v, base)
                t = time.perf_counter()
                err = run([ICPP, "rewrite", target, "-m", "map", "-o", out] + opt + libopts, d)
                info[v] = (time.perf_counter() - t, err, os.path.getsize(out))
                variants[v] = out
                libs_dirs[v] = out + ".libs"
            command = lambda v: variant_cmd(cmd, variants[v], lib, d, libs_dirs.get(v), libs_var)
            med = interleaved(variants, command, d)
            cg = {}
            for v in variants if CG else ():
                c, env = command(v)
                cg[v] = cachegrind(c, d, env)
            size0 = os.path.getsize(target)

            def grab(err, pat):
                m = re.search(pat, err)
                return m.group(1) if m else "?"
            for v in ("solved", "everything"):
                secs, err, size = info[v]
                rows.append((name, v, med["original"], med[v] / med["original"],
                             med["copy"] / med["original"], secs, size0, size,
                             grab(err, r"(\d+) functions padded"), grab(err, r"(\d+) callsites wrapped"),
                             grab(err, r"precise paths ([\d.]+% -> [\d.]+%)"),
                             grab(err, r"max stack growth ([\d.]+x)") if v == "solved" else "-",
                             "%.2f" % (float(grab(err, r"analysis ([\d.]+) s")) + float(grab(err, r"writing ([\d.]+) s"))),
                             grab(err, r"solver ([\d.]+) s") if v == "solved" else "-",
                             "%.3f / %.3f" % (cg[v] / cg["original"], cg["copy"] / cg["original"])
                             if CG else "-"))
            details.append((name, info["solved"][1]))
    finally:
        shutil.rmtree(work, ignore_errors=True)
    print(f"runs per variant: {RUNS} (median), interleaved round-robin; machine: {os.cpu_count()} CPUs\n")
    print("| workload | plan | original s | rewritten / original | A/A copy / original | "
          "analysis + writing s | solver s | file bytes | growth | padded | wrapped | "
          "precise paths (predicted) | max stack | cachegrind estimate: rewritten / A/A |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    for (n, v, t0, r, aa, secs, s0, s1, p, w, prec, stk, ana, sol, est) in rows:
        print(f"| {n} | {v} | {t0:.3f} | {r:.3f} | {aa:.3f} | {ana} | {sol} | {s0} -> {s1} | "
              f"+{100.0 * (s1 - s0) / s0:.1f}% | {p} | {w} | {prec} | {stk} | {est} |")
    print("\n## What the analysis allowed (icpp rewrite's report, solver runs)\n")
    for n, err in details:
        print(f"### {n}\n```")
        print("\n".join(l for l in err.splitlines() if "wrote" not in l))
        print("```")


if __name__ == "__main__":
    main()
