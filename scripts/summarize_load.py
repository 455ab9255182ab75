#!/usr/bin/env python3
"""Tables of scripts/measure_load.sh's runs: every service figure beside the sink's from the
same run, as a ratio, with the issue's goal and whether it is met (medians over rounds).
Usage: scripts/summarize_load.py DIR   (DIR/runs/*.json from measure_load.sh)"""
import collections
import glob
import json
import os
import statistics
import sys


def load_runs(folder):
    runs = collections.defaultdict(list)  # (case, who) -> [json]
    for path in glob.glob(os.path.join(folder, "runs", "*.json")):
        if path.endswith(".cli.json"):
            continue
        case, who, _ = os.path.basename(path)[:-5].split("--")
        with open(path) as f:
            runs[(case, who)].append(json.load(f))
    return runs


def med(runs, key, case, who):
    values = [key(r) for r in runs.get((case, who), [])]
    return statistics.median(values) if values else None


def gbps(r):
    return r["gbps"]


def rps(r):
    return r["rps"]


def p50(r):
    return r["latency_ms"]["p50"] * 1e3  # us


def p99(r):
    return r["latency_ms"]["p99"] * 1e3


def server_p50(r):
    return r["server_us"]["server"]["p50"]


def backends(runs, case, who):
    """The backends and kernels that answered a case's runs ("cpu/cpu", "cuda/single_pass")."""
    seen = sorted({f"{r.get('backend', '?')}/{r.get('kernel', '?')}"
                   for r in runs.get((case, who), [])})
    return ", ".join(seen) if seen else "-"


def fmt(x, digits=2):
    return "-" if x is None else f"{x:.{digits}f}"


def ratio(a, b):
    return None if a is None or not b else a / b


def verdict(ok):
    return "-" if ok is None else ("met" if ok else "NOT met")


def errors(runs):
    bad = []
    for (case, who), rs in sorted(runs.items()):
        failed = sum(r["failed"] + r["wrong"] for r in rs)
        if failed:
            codes = collections.Counter()
            for r in rs:
                codes.update(r["codes"])
            bad.append(f"- {case} {who}: {failed} errors or wrong answers {dict(codes)}")
    return bad


def main(folder):
    runs = load_runs(folder)
    targets = sorted({who for _, who in runs if who not in ("sink",)})
    print("## Throughput against the sink (GB/s, median of rounds; goal 0.9x)\n")
    print("| case | sink | " + " | ".join(f"{t} | x sink" for t in targets) + " |")
    print("|---|---:|" + "---:|---:|" * len(targets))
    for case in ("stream-1MiB", "stream-4MiB", "streams-8", "streams-32"):
        sink = med(runs, gbps, case, "sink")
        cells = []
        for t in targets:
            v = med(runs, gbps, case, t)
            cells += [fmt(v), fmt(ratio(v, sink))]
        print(f"| {case} | {fmt(sink)} | " + " | ".join(cells) + " |")

    print("\n## Unary 1024 floats, concurrency 1 (us, medians)\n")
    print("| target | server_us p50 | goal | client p50 | sink p50 + 20 | verdict |")
    print("|---|---:|---:|---:|---:|---|")
    sink_p50 = med(runs, p50, "unary-1Ki-c1", "sink")
    goals = {"cpu": 15, "cuda": 25, "cuda-single_pass": 40}
    for t in targets:
        s = med(runs, server_p50, "unary-1Ki-c1", t)
        c = med(runs, p50, "unary-1Ki-c1", t)
        if s is None:
            continue
        goal = goals.get(t)
        ok = None if goal is None else (s <= goal and sink_p50 is not None and c <= sink_p50 + 20)
        print(f"| {t} | {fmt(s, 1)} | {goal} | {fmt(c, 1)} | {fmt(None if sink_p50 is None else sink_p50 + 20, 1)} | {verdict(ok)} |")

    print("\n## Unary under concurrency (medians)\n")
    print("| case | target | rps | x sink rps | GB/s | x sink GB/s | p99 us |")
    print("|---|---|---:|---:|---:|---:|---:|")
    for case in ("unary-1Ki-c64", "unary-1Mi-c16"):
        for t in ["sink"] + targets:
            r, g, q = med(runs, rps, case, t), med(runs, gbps, case, t), med(runs, p99, case, t)
            if r is None:
                continue
            print(f"| {case} | {t} | {fmt(r, 0)} | {fmt(ratio(r, med(runs, rps, case, 'sink')))} | "
                  f"{fmt(g, 3)} | {fmt(ratio(g, med(runs, gbps, case, 'sink')))} | {fmt(q, 0)} |")

    cross = sorted({c for c, _ in runs if c.startswith("crossover-")},
                   key=lambda c: int(c.split("^")[1]))
    if cross:
        print("\n## Measured auto: unary server_us p50 on the GPU (single_pass), the CPU, "
              "and the CUDA server's `auto` (which ran it)\n")
        print("| floats | GPU us | CPU us | faster | auto us | auto ran on |")
        print("|---:|---:|---:|---|---:|---|")
        for case in cross:
            g = med(runs, server_p50, case, "cuda-single_pass")
            c = med(runs, server_p50, case, "cpu")
            a = med(runs, server_p50, case, "cuda")
            faster = "-" if g is None or c is None else ("GPU" if g < c else "CPU")
            ran = backends(runs, case, "cuda")
            print(f"| 2^{case.split('^')[1]} | {fmt(g, 1)} | {fmt(c, 1)} | {faster} "
                  f"| {fmt(a, 1)} | {ran} |")

    sweeps = sorted({c for c, _ in runs if c.startswith("sweep-")})
    if sweeps:
        print("\n## Sweeps (one round each)\n")
        print("| case | target | rps | GB/s | p50 us | p99 us | p99.9 us |")
        print("|---|---|---:|---:|---:|---:|---:|")
        for case in sweeps:
            for (c, t), rs in sorted(runs.items()):
                if c != case:
                    continue
                r = rs[0]
                print(f"| {case} | {t} | {fmt(r['rps'], 0)} | {fmt(r['gbps'], 3)} | "
                      f"{fmt(p50(r), 1)} | {fmt(p99(r), 1)} | {fmt(r['latency_ms']['p99.9'] * 1e3, 1)} |")

    cli = collections.defaultdict(list)
    for path in glob.glob(os.path.join(folder, "runs", "*.cli.json")):
        with open(path) as f:
            try:
                j = json.load(f)
            except json.JSONDecodeError:
                continue
        streams = int(os.path.basename(path).split("--")[0].split("-")[-1])
        cli[streams].append(j["client"]["gbps"])
    if cli:
        print("\n## gpureduce reduce --random 268435456 --chunk-size 4MiB --streams N (client GB/s)\n")
        for n in sorted(cli):
            print(f"- {n} stream(s): median {statistics.median(cli[n]):.2f} GB/s over {len(cli[n])} runs")
        if 1 in cli and 8 in cli:
            x = statistics.median(cli[8]) / statistics.median(cli[1])
            print(f"- 8 streams / 1 stream: {x:.2f}x (goal 3x): {verdict(x >= 3)}")

    bad = errors(runs)
    print("\n## Errors\n")
    print("\n".join(bad) if bad else "none: every answer checked and right (the sink's unchecked)")


if __name__ == "__main__":
    main(sys.argv[1])
