#!/usr/bin/env python3
"""Plots of scripts/measure_load.sh's sweeps (needs matplotlib: apt install python3-matplotlib):
  DIR/load-latency.png  latency percentiles (p50, p99, p99.9) against concurrency, unary 1024
                        floats, the server beside the sink;
  DIR/load-streams.png  aggregate GB/s against concurrent streams (1 MiB chunks), the same.
Usage: scripts/plot_load.py DIR"""
import collections
import glob
import json
import os
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402 (after choosing the backend)


def sweep(folder, prefix):
    """who -> sorted [(x, run json)] for the runs of cases named prefix<x>."""
    out = collections.defaultdict(list)
    for path in glob.glob(os.path.join(folder, "runs", prefix + "*.json")):
        case, who, _ = os.path.basename(path)[:-5].split("--")
        with open(path) as f:
            out[who].append((int(case[len(prefix):]), json.load(f)))
    return {who: sorted(points, key=lambda p: p[0]) for who, points in out.items()}


def title(runs):
    first = next(iter(runs.values()))[0][1]
    return f"{first['device'] or first['backend']} vs the gRPC sink, same host and run"


def main(folder):
    latency = sweep(folder, "sweep-unary-c")
    if latency:
        fig, ax = plt.subplots(figsize=(8, 5))
        for who, points in sorted(latency.items()):
            xs = [x for x, _ in points]
            for p, style in (("p50", "-"), ("p99", "--"), ("p99.9", ":")):
                ax.plot(xs, [r["latency_ms"][p] * 1e3 for _, r in points], style, marker="o",
                        label=f"{who} {p}")
        ax.set_xscale("log", base=2)
        ax.set_yscale("log")
        ax.set_xlabel("requests in flight (closed loop, 4 connections)")
        ax.set_ylabel("latency, us")
        ax.set_title("Unary 1024 floats: " + title(latency), fontsize=9)
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(fontsize=8)
        fig.savefig(os.path.join(folder, "load-latency.png"), dpi=120, bbox_inches="tight")
    streams = sweep(folder, "sweep-streams-")
    if streams:
        fig, ax = plt.subplots(figsize=(8, 5))
        for who, points in sorted(streams.items()):
            ax.plot([x for x, _ in points], [r["gbps"] for _, r in points], marker="o", label=who)
        ax.set_xscale("log", base=2)
        ax.set_xlabel("concurrent streams (up to 8 connections), 1 MiB chunks")
        ax.set_ylabel("aggregate GB/s")
        ax.set_ylim(bottom=0)
        ax.set_title("Streams: " + title(streams), fontsize=9)
        ax.grid(True, alpha=0.3)
        ax.legend()
        fig.savefig(os.path.join(folder, "load-streams.png"), dpi=120, bbox_inches="tight")


if __name__ == "__main__":
    main(sys.argv[1])
