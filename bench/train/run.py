#!/usr/bin/env python3
"""Training benchmark (issue 2), run by hand:  python3 bench/train/run.py [BUILD_DIR]
(N=runs per configuration, default 5; ONLY=debian for the Debian programs alone)

Measures, interleaved in one run so that machine noise hits every
configuration alike:
  - slowdown of `icpp train` against the plain run, on a call-heavy C program
    and on lua5.4 running bench.lua (median of N runs each, ratios);
  - cost per hooked call: (train - plain - start-up) / entries recorded, where
    start-up is the train time of the same program doing no work; hookcost.c
    (one callsite, 20M calls, one path) isolates the bare hook from the cost
    of creating and collecting many distinct paths;
  - `uftrace record` on the same C program built with -pg, against the -pg
    build run plainly, and its cost per traced call;
  - `icpp stats` precision of the unaltered binaries (thesis: 68% of paths);
  - slowdown on Debian's own programs doing ordinary work (inputs generated
    here, deterministic), and its geomean (thesis: 2.9x geomean, max 9.1x,
    SPEC recompiled with -finstrument-functions).
Writes a Markdown table to stdout; docs/bench-train.md keeps the results.
"""
import json, os, shutil, statistics, subprocess, sys, tempfile, time

HERE = os.path.dirname(os.path.abspath(__file__))
BUILD = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else os.path.join(HERE, "../../build"))
ICPP = os.path.join(BUILD, "cli/icpp")
RUNS = int(os.environ.get("N", "5"))


def timed(cmd, cwd):
    # stdout to a file, not /dev/null: GNU grep stops at the first match when
    # its output goes nowhere
    with open(os.path.join(cwd, "stdout"), "w") as out:
        t = time.perf_counter()
        r = subprocess.run(cmd, cwd=cwd, stdout=out, stderr=subprocess.PIPE, text=True)
        dt = time.perf_counter() - t
    if r.returncode != 0:
        sys.exit(f"bench: {' '.join(cmd)} failed: {r.stderr.strip()}")
    return dt, r.stderr


def median_times(configs, cwd):
    """configs: name -> command; runs them round-robin RUNS times."""
    samples = {k: [] for k in configs}
    for _ in range(RUNS):
        for name, cmd in configs.items():
            samples[name].append(timed(cmd, cwd)[0])
    return {k: statistics.median(v) for k, v in samples.items()}


def stats(mapfile):
    out = subprocess.run([ICPP, "stats", "--json", mapfile], check=True, capture_output=True, text=True)
    return json.loads(out.stdout)


def inputs(work):
    """Deterministic inputs for the Debian programs."""
    import base64, random
    rnd = random.Random(1)
    text = base64.encodebytes(rnd.randbytes(12 << 20)).decode()
    with open(os.path.join(work, "text"), "w") as f:          # 16 MB of base64 lines
        f.write(text)
    with open(os.path.join(work, "text4"), "w") as f:         # its first 4 MB
        f.write(text[:4 << 20])
    with open(os.path.join(work, "nums"), "w") as f:          # 1M numbers, scrambled
        f.writelines(f"{rnd.randrange(10**9)}\n" for _ in range(1 << 20))
    with open(os.path.join(work, "lines"), "w") as f:         # 400k counted lines
        f.writelines(f"{i} {i * 7919 % 1000003}\n" for i in range(400000))
    with open(os.path.join(work, "pi.bc"), "w") as f:
        f.write("scale=1500\n4*a(1)\n")
    with open(os.path.join(work, "data.json"), "w") as f:     # 200k small records
        json.dump([{"id": i, "tags": [rnd.randrange(50) for _ in range(4)], "v": rnd.random()}
                   for i in range(200000)], f)


DEBIAN = [  # name, command (run in the work folder)
    ("gzip -9", ["gzip", "-9", "-c", "text"]),
    ("bzip2 -9", ["bzip2", "-9", "-c", "text"]),
    ("xz -3 -T1", ["xz", "-3", "-T1", "-c", "text4"]),
    ("sed -E", ["sed", "-E", "s/([0-9]+) ([0-9]+)/\\2 \\1/", "lines"]),
    ("grep -E -c (backreference)", ["grep", "-E", "-c", "([0-9])\\1.*\\1", "lines"]),
    ("sort -n", ["sort", "-n", "--parallel=1", "nums"]),
    ("jq", ["jq", "-c", "[.[] | select(.tags | index(7)) | .v] | add", "data.json"]),
    ("bc -l", ["bc", "-l", "pi.bc"]),
]


def debian_programs(work, train):
    inputs(work)
    progs = [(n, c) for n, c in DEBIAN if shutil.which(c[0])]
    configs = {}
    for name, cmd in progs:
        configs[name + "|plain"] = cmd
        configs[name + "|train"] = train + cmd
    t = median_times(configs, work)
    print("| Debian program | plain s | icpp train s | slowdown |")
    print("|---|---|---|---|")
    ratios = []
    for name, _ in progs:
        r = t[name + "|train"] / t[name + "|plain"]
        ratios.append(r)
        print(f"| {name} | {t[name + '|plain']:.3f} | {t[name + '|train']:.3f} | {r:.2f}x |")
    geo = statistics.geometric_mean(ratios)
    print(f"| geomean ({len(ratios)} programs) | | | {geo:.2f}x (max {max(ratios):.2f}x) |")


def main():
    work = tempfile.mkdtemp(prefix="icpp-bench-")
    try:
        if os.environ.get("ONLY") == "debian":
            debian_programs(work, [ICPP, "train", "-q", "-o", "m.icpp", "--"])
            return
        src = os.path.join(HERE, "callheavy.c")
        subprocess.run(["gcc", "-O2", "-o", "callheavy", src], cwd=work, check=True)
        subprocess.run(["gcc", "-O2", "-pg", "-o", "callheavy-pg", src], cwd=work, check=True)
        subprocess.run(["gcc", "-O2", "-o", "hookcost", os.path.join(HERE, "hookcost.c")], cwd=work, check=True)
        shutil.copy(os.path.join(HERE, "bench.lua"), work)
        train = [ICPP, "train", "-q", "-o", "m.icpp", "--"]
        c_calls = int(timed(["./callheavy", "4"], work)[1].split()[-1])
        t = median_times({
            "plain": ["./callheavy", "4"],
            "train": train + ["./callheavy", "4"],
            "train0": train + ["./callheavy", "0"],
            "pg": ["./callheavy-pg", "4"],
            "uftrace": ["uftrace", "record", "-d", "ufdata", "./callheavy-pg", "4"],
            "uftrace0": ["uftrace", "record", "-d", "ufdata", "./callheavy-pg", "0"],
            "pg0": ["./callheavy-pg", "0"],
        }, work)
        timed(train + ["./callheavy", "4"], work)
        c = stats(os.path.join(work, "m.icpp"))
        h = median_times({
            "plain": ["./hookcost", "20"],
            "train": train + ["./hookcost", "20"],
            "train0": train + ["./hookcost", "0"],
            "plain0": ["./hookcost", "0"],
        }, work)
        timed(train + ["./hookcost", "20"], work)
        hs = stats(os.path.join(work, "m.icpp"))
        lua = median_times({
            "plain": ["lua5.4", "bench.lua"],
            "train": train + ["lua5.4", "bench.lua"],
            "train0": train + ["lua5.4", "-e", ""],
        }, work)
        timed(train + ["lua5.4", "bench.lua"], work)
        l = stats(os.path.join(work, "m.icpp"))

        def ns(tr, pl, t0, p0, n):
            return 1e9 * ((tr - t0) - (pl - p0)) / n

        print(f"runs per configuration: {RUNS} (median), interleaved; machine: {os.cpu_count()} CPUs\n")
        print("| workload | plain s | icpp train s | slowdown | start-up s | hooked calls | ns/call |")
        print("|---|---|---|---|---|---|---|")
        print(f"| callheavy (C, -O2) | {t['plain']:.3f} | {t['train']:.3f} | {t['train']/t['plain']:.2f}x "
              f"| {t['train0']:.3f} | {c['entries']} | {ns(t['train'], t['plain'], t['train0'], 0, c['entries']):.1f} |")
        print(f"| hookcost (one callsite) | {h['plain']:.3f} | {h['train']:.3f} | {h['train']/h['plain']:.2f}x "
              f"| {h['train0']:.3f} | {hs['entries']} | {ns(h['train'], h['plain'], h['train0'], h['plain0'], hs['entries']):.1f} |")
        print(f"| lua5.4 bench.lua | {lua['plain']:.3f} | {lua['train']:.3f} | {lua['train']/lua['plain']:.2f}x "
              f"| {lua['train0']:.3f} | {l['entries']} | {ns(lua['train'], lua['plain'], lua['train0'], 0, l['entries']):.1f} |")
        print()
        print("| uftrace 0.13 on callheavy -pg | plain -pg s | uftrace record s | slowdown | traced calls | ns/call |")
        print("|---|---|---|---|---|---|")
        print(f"| | {t['pg']:.3f} | {t['uftrace']:.3f} | {t['uftrace']/t['pg']:.2f}x | {c_calls} "
              f"| {ns(t['uftrace'], t['pg'], t['uftrace0'], t['pg0'], c_calls):.1f} |")
        print()
        print("| unaltered binary | paths | CIDs | precise paths | precise entries |")
        print("|---|---|---|---|---|")
        for name, s in (("callheavy", c), ("lua5.4 (+ libc, libm, ld.so)", l)):
            print(f"| {name} | {s['paths']} | {s['cids']} | {s['precise_paths_pct']}% | {s['precise_entries_pct']}% |")
        print()
        debian_programs(work, train)
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
