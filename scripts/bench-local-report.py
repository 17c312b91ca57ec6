#!/usr/bin/env python3
"""Prints the table of scripts/bench-local.sh from its scratch files.

usage: bench-local-report.py ROWS KINDS RAW_N MNT_N RUNS JOBS [RSS]

ROWS: one line per op and run,
  op run raw_cold raw_warm stfs_cold stfs_warm stfs_steady
  cpu_cold cpu_warm cpu_steady calls_cold calls_warm calls_steady
(times in us, CPU in clock ticks of 1/100 s, calls: the FUSE requests the
daemon counted in .stfs/stats for that walk).  "warm" is the walk right
after the cold one (the kernel asks one GETATTR per directory again: it
marks a directory's atime stale when it reads a listing from the daemon),
"steady" the walk after that.
KINDS: op run walk kind count, the same calls by request kind (lookup,
getattr, readdir, opendir, releasedir, ...).
RSS: "OBJECTS KIB", the daemon's peak after walking a big namespace.
"""
import statistics
import sys
from collections import defaultdict

NAMES = {"du": "du -s", "lsr": "ls -lR", "find": "find"}
OPS = ("du", "lsr", "find")
WALKS = ("cold", "warm", "steady")


def load_rows(path):
    rows = defaultdict(list)
    with open(path) as f:
        for line in f:
            p = line.split()
            if not p:
                continue
            if len(p) != 13:
                raise ValueError(f"{path}: bad row: {line.rstrip()}")
            rows[p[0]].append([int(x) for x in p[2:]])
    return rows


def load_kinds(path):
    k = defaultdict(list)
    try:
        with open(path) as f:
            for line in f:
                p = line.split()
                if len(p) == 5:
                    k[(p[0], p[2], p[3])].append(int(p[4]))
    except FileNotFoundError:
        pass
    return k


def report(rows, kinds, raw_n, mnt_n, runs, jobs, rss=""):
    out = []
    out.append(f"\nbench (local): {jobs} jobs x 2 pipelines x 5 checkpoints, engine simulator up;"
               f" raw {raw_n} entries, mount {mnt_n} entries ({mnt_n / raw_n:.1f}x); medians of {runs}")
    out.append("(warm: the walk right after the cold one; steady: the walk after that)")
    out.append("| op | raw cold | raw warm | stfs cold | stfs warm | stfs steady |"
               " cold ratio | warm ratio | steady ratio |"
               " µs/entry cold (raw) | µs/entry warm (raw) | µs/entry steady |"
               " daemon CPU cold / warm / steady | FUSE calls cold / warm / steady |")
    out.append("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    for op in OPS:
        r = rows.get(op)
        if not r:
            continue
        med = [statistics.median(x[i] for x in r) for i in range(11)]
        rc, rw, sc, sw, ss, cc, cw, cs, fc, fw, fs = med
        out.append(
            f"| `{NAMES[op]}` | {rc/1e6:.3f} s | {rw/1e6:.3f} s | {sc/1e6:.3f} s |"
            f" {sw/1e6:.3f} s | {ss/1e6:.3f} s |"
            f" {sc/rc:.1f}x | {sw/rw:.1f}x | {ss/rw:.1f}x |"
            f" {sc/mnt_n:.1f} ({rc/raw_n:.1f}) | {sw/mnt_n:.1f} ({rw/raw_n:.1f}) |"
            f" {ss/mnt_n:.1f} |"
            f" {cc/100:.2f} / {cw/100:.2f} / {cs/100:.2f} s |"
            f" {int(fc)} / {int(fw)} / {int(fs)} |")
    names = sorted({k[2] for k in kinds})
    if names:
        out.append("\nFUSE calls by kind (medians; .stfs/stats):")
        out.append("| op | walk | " + " | ".join(names) + " |")
        out.append("|---|---|" + "---|" * len(names))
        for op in OPS:
            for w in WALKS:
                if not any((op, w, n) in kinds for n in names):
                    continue
                out.append(f"| `{NAMES[op]}` | {w} | " + " | ".join(
                    f"{int(statistics.median(kinds[(op, w, n)]))}"
                    if (op, w, n) in kinds else "-" for n in names) + " |")
    if rss:
        n, kb = rss.split()
        out.append(f"\npeak RSS of the daemon after find + du -s over {n} objects:"
                   f" {int(kb)/1024:.1f} MiB")
    return "\n".join(out)


def main(argv):
    if len(argv) < 7:
        sys.exit(__doc__)
    print(report(load_rows(argv[1]), load_kinds(argv[2]), int(argv[3]), int(argv[4]),
                 argv[5], argv[6], argv[7] if len(argv) > 7 else ""))


if __name__ == "__main__":
    main(sys.argv)
