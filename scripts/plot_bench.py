#!/usr/bin/env python3
"""Turns gpureduce-bench --json output into PNG plots (needs matplotlib: apt install
python3-matplotlib).

  production suite: <prefix>-bandwidth.png (median GB/s against size, one line per kernel and op,
                    with the theoretical peak and the measured read ceiling) and
                    <prefix>-vs-cub.png (CUB's median time over each single_pass row's, per op);
  ladder suite:     <prefix>-ladder.png (GB/s of every variant as bars, one group per size).

Usage: scripts/plot_bench.py BENCH.json [--out PREFIX]   (default prefix: the JSON's path
without .json)
"""
import argparse
import collections
import json
import math

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402 (after choosing the backend)


def label(row):
    name = row["kernel"] if not row["note"] else f'{row["kernel"]} ({row["note"]})'
    return name if row["op"] in ("sum", "read") else f'{name} {row["op"]}'


def title(doc):
    return (f'{doc["device"]}, commit {doc["commit"]}, {doc["date"]}: median of {doc["runs"]} '
            "cold runs")


def finish(fig, ax, doc, ylabel, path):
    ax.set_xlabel("elements (log2), float32")
    ax.set_ylabel(ylabel)
    ax.set_title(title(doc), fontsize=9)
    ax.legend(fontsize=7, ncol=2)
    ax.grid(alpha=0.3)
    fig.tight_layout()
    fig.savefig(path, dpi=110)


def plot_bandwidth(doc, prefix):
    lines = collections.defaultdict(list)
    for row in doc["rows"]:
        lines[label(row)].append((row["n"], row["gbps"]))
    fig, ax = plt.subplots(figsize=(11, 6.5))
    for name, points in sorted(lines.items()):
        points.sort()
        style = "--" if name.startswith("cub") else ":" if name.startswith("read") else "-"
        ax.plot([math.log2(n) for n, _ in points], [g for _, g in points], style, marker=".",
                label=name)
    ax.axhline(doc["peak_gbps"], color="black", linewidth=0.8)
    ax.text(10, doc["peak_gbps"] * 1.01, f'theoretical {doc["peak_gbps"]:.0f} GB/s', fontsize=8)
    ax.axhline(doc["read_ceiling_gbps"], color="gray", linewidth=0.8)
    ax.text(10, doc["read_ceiling_gbps"] * 0.96,
            f'measured read ceiling {doc["read_ceiling_gbps"]:.0f} GB/s', fontsize=8)
    ax.set_ylim(0, doc["peak_gbps"] * 1.06)
    finish(fig, ax, doc, "GB/s (bytes read / median kernel time)", f"{prefix}-bandwidth.png")


def plot_vs_cub(doc, prefix):
    ratios = collections.defaultdict(list)
    for row in doc["rows"]:
        if row["kernel"] == "single_pass" and row["vs_cub"] > 0:
            ratios[label(row)].append((row["n"], row["vs_cub"]))
    fig, ax = plt.subplots(figsize=(11, 5))
    for name, points in sorted(ratios.items()):
        points.sort()
        ax.plot([math.log2(n) for n, _ in points], [r for _, r in points], marker=".", label=name)
    ax.axhline(1.0, color="black", linewidth=0.8)
    ax.axhline(1.15, color="gray", linewidth=0.8, linestyle="--")
    finish(fig, ax, doc, "CUB median time / single_pass median time", f"{prefix}-vs-cub.png")


def plot_ladder(doc, prefix):
    sizes = sorted({row["n"] for row in doc["rows"]})
    kernels = []
    for row in doc["rows"]:
        if label(row) not in kernels:
            kernels.append(label(row))
    gbps = {(row["n"], label(row)): row["gbps"] for row in doc["rows"]}
    fig, ax = plt.subplots(figsize=(12, 6))
    width = 0.8 / len(sizes)
    for i, n in enumerate(sizes):
        xs = [k + i * width for k in range(len(kernels))]
        ax.bar(xs, [gbps.get((n, name), 0) for name in kernels], width, label=f"n = {n:,}")
    ax.set_xticks([k + 0.4 - width / 2 for k in range(len(kernels))])
    ax.set_xticklabels(kernels, rotation=35, ha="right", fontsize=8)
    ax.set_yscale("log")
    ax.set_ylabel("GB/s (log scale)")
    ax.axhline(doc["peak_gbps"], color="black", linewidth=0.8)
    ax.set_title(title(doc), fontsize=9)
    ax.legend(fontsize=8)
    ax.grid(alpha=0.3, axis="y")
    fig.tight_layout()
    fig.savefig(f"{prefix}-ladder.png", dpi=110)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("json")
    parser.add_argument("--out", help="output path prefix")
    args = parser.parse_args()
    with open(args.json) as f:
        doc = json.load(f)
    prefix = args.out or args.json.removesuffix(".json")
    if doc["suite"] == "ladder":
        plot_ladder(doc, prefix)
    else:
        plot_bandwidth(doc, prefix)
        plot_vs_cub(doc, prefix)


if __name__ == "__main__":
    main()
