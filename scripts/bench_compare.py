#!/usr/bin/env python3
"""Summarizes scripts/bench_compare.sh: per kernel, op and size, the median over rounds of each
binary's median kernel time, the spread of those medians over rounds, and candidate/baseline.
Usage: scripts/bench_compare.py DIR   (the folder of baseline-N.json and candidate-N.json)"""
import collections
import glob
import json
import os
import statistics
import sys


def medians(files):
    """(kernel, note, op, n) -> the row's median_us in each file."""
    out = collections.defaultdict(list)
    for path in files:
        with open(path) as f:
            for row in json.load(f)["rows"]:
                out[(row["kernel"], row["note"], row["op"], row["n"])].append(row["median_us"])
    return out


def spread(values):
    return (max(values) - min(values)) / statistics.median(values) * 100 if values else 0.0


def main(folder):
    base = medians(sorted(glob.glob(os.path.join(folder, "baseline-*.json"))))
    cand = medians(sorted(glob.glob(os.path.join(folder, "candidate-*.json"))))
    print("| kernel | op | n | baseline us | spread | candidate us | spread | candidate / baseline |")
    print("|---|---|---:|---:|---:|---:|---:|---:|")
    for key in sorted(set(base) & set(cand), key=lambda k: (k[3], k[0], k[1], k[2])):
        kernel, note, op, n = key
        if kernel == "read":
            continue
        name = kernel + (" (" + note.split(":")[0] + ")" if note else "")
        b, c = statistics.median(base[key]), statistics.median(cand[key])
        print("| %s | %s | %d | %.2f | %.1f%% | %.2f | %.1f%% | %.3f |"
              % (name, op, n, b, spread(base[key]), c, spread(cand[key]), c / b))


if __name__ == "__main__":
    main(sys.argv[1])
