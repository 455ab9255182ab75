#!/usr/bin/env python3
"""Two gpureduce-cpu-bench binaries measured against each other in one run, for a CPU kernel
change: per layout (the whole array, --rows N, --segment N, --columns N) and dtype, the baseline
and the candidate alternate round by round (which goes first alternates too), so that drift in
the host (a shared machine's neighbours) falls on both alike. Prints each cell's median over the
rounds, candidate / baseline, and the candidate's fraction of its own whole-array float32 SUM
(issue 23's yardstick), and says where the two binaries' digests (the answers' bits) differ.

Usage: scripts/cpu_bench_compare.py --baseline BENCH --candidate BENCH [--threads N] [--rounds N]
           [--runs N] [--bytes SIZE] [--dtypes LIST] [--ops LIST] [--layouts "rows 16,columns 1024"]
"""
import argparse
import collections
import statistics
import subprocess
import sys

DTYPES = "float32,float16,float64,int32"
LAYOUTS = "whole,rows 16,rows 128,rows 512,segment 16,segment 128,columns 1024,columns 16384"


def run(binary, args, layout, dtype):
    """{op: (GB/s, digest)} of one bench run of one dtype."""
    command = [binary, "--threads", str(args.threads), "--runs", str(args.runs), "--bytes",
               args.bytes, "--dtypes", dtype, "--ops", args.ops]
    if layout != "whole":
        name, size = layout.split()
        command += ["--" + name, size]
    out = subprocess.run(command, check=True, capture_output=True, text=True).stdout
    cells = {}
    for line in out.splitlines():
        fields = line.split()
        if len(fields) >= 5 and fields[0] == dtype:
            cells[fields[1]] = (float(fields[2]), fields[4])
    return cells


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--baseline", required=True)
    parser.add_argument("--candidate", required=True)
    parser.add_argument("--threads", type=int, default=16)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--bytes", default="128MiB")
    parser.add_argument("--dtypes", default=DTYPES)
    parser.add_argument("--ops", default="sum,min,var,five")
    parser.add_argument("--layouts", default=LAYOUTS)
    args = parser.parse_args()
    binaries = {"baseline": args.baseline, "candidate": args.candidate}
    rates = collections.defaultdict(list)  # (binary, layout, dtype, op) -> GB/s per round
    digests = collections.defaultdict(set)  # (layout, dtype, op) -> digests of both
    layouts = args.layouts.split(",")
    for layout in layouts:
        for dtype in args.dtypes.split(","):
            for round_ in range(args.rounds):
                order = ["baseline", "candidate"] if round_ % 2 == 0 else ["candidate", "baseline"]
                for which in order:
                    for op, (rate, digest) in run(binaries[which], args, layout, dtype).items():
                        rates[(which, layout, dtype, op)].append(rate)
                        digests[(layout, dtype, op)].add(digest)
    median = {key: statistics.median(values) for key, values in rates.items()}
    yardstick = median.get(("candidate", "whole", "float32", "sum"))
    print(f"threads {args.threads}, {args.bytes}, median of {args.rounds} rounds of "
          f"{args.runs}-run medians, GB/s: baseline -> candidate (candidate / baseline; "
          f"candidate / its whole float32 SUM {yardstick or 0:.1f})")
    for layout in layouts:
        print(f"  {layout}:")
        for dtype in args.dtypes.split(","):
            cells = []
            for op in args.ops.split(","):
                base = median.get(("baseline", layout, dtype, op))
                cand = median.get(("candidate", layout, dtype, op))
                if cand is None:
                    continue
                share = f", {cand / yardstick:.2f}" if yardstick else ""
                if base is None:  # a case the baseline's bench lacks (sumsq, prod before de477c5)
                    cells.append(f"{op} - -> {cand:.1f} (-{share})")
                    continue
                same = "" if len(digests[(layout, dtype, op)]) == 1 else " DIGESTS DIFFER"
                cells.append(f"{op} {base:.1f} -> {cand:.1f} ({cand / base:.2f}{share}){same}")
            print(f"    {dtype:8s} " + "; ".join(cells))
    return 0


if __name__ == "__main__":
    sys.exit(main())
