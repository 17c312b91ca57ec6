#!/usr/bin/env python3
"""Prints the table of scripts/bench.sh from its scratch files.

usage: bench-report.py DIR SIZE NOBJ NDIRS NBYTES RUNS BIGSIZE
DIR/results.tsv: size op tool run seconds; DIR/outputs.tsv: size op tool run
output; DIR/counters*.tsv: size run "name value;name value;..." (stfs stats
right after the cold du, and after the metadata ops).
"""
import statistics
import sys
from collections import defaultdict

d, size = sys.argv[1], sys.argv[2]
nobj, ndirs, nbytes, runs, bigsize = sys.argv[3:8]
TOOLS = ["raw", "stfs", "s3fs", "rclone"]
OPS = [
    ("du_cold", "du -s (cold, fresh mount)"),
    ("du_cold_up", "du -s cold, engine up (mix)"),
    ("du_cold_known", "du -s cold, types remembered"),
    ("du_cold_pipes", "du -s jobs/*/pipelines cold"),
    ("du_warm", "du -s (warm)"),
    ("ls_lR", "ls -lR | wc -l"),
    ("find", "find -type f | wc -l"),
    ("du_steady", "du -s (steady, 2nd warm)"),
    ("ls_lR_steady", "ls -lR (steady)"),
    ("find_steady", "find -type f (steady)"),
    ("read_all", "cat every object | wc -c"),
    ("big", "cat one 256 MiB object"),
]
META = {"du_cold", "du_cold_up", "du_cold_known", "du_cold_pipes", "du_warm", "ls_lR",
        "find", "du_steady", "ls_lR_steady", "find_steady"}

times = defaultdict(list)
with open(f"{d}/results.tsv") as f:
    for line in f:
        s, op, tool, _run, sec = line.rstrip("\n").split("\t")
        if s == size:
            times[(op, tool)].append(float(sec))
outs = {}
with open(f"{d}/outputs.tsv") as f:
    for line in f:
        p = line.rstrip("\n").split("\t")
        if p[0] == size and (p[1], p[2]) not in outs:
            outs[(p[1], p[2])] = p[4] if len(p) > 4 else ""


def med(op, tool):
    v = times.get((op, tool))
    if not v and tool == "raw" and op in META:
        v = times.get(("du_cold", "raw"))  # one paged listing
    if not v and op == "du_cold_up" and tool in ("s3fs", "rclone"):
        v = times.get(("du_cold", tool))  # no engine: the same walk
    return statistics.median(v) if v else None


def fmt(x):
    return "-" if x is None else f"{x:.3f}"


def ratio(a, b):
    return "-" if a is None or b is None or b == 0 else f"{a / b:.2f}"


print()
print(f"== {int(nobj):,} objects ({int(nbytes):,} bytes) in {ndirs} job "
      f"directories, plain s3rver 3.7.1; median of {runs} runs, seconds ==")
hdr = (f"{'operation':<28}{'raw':>9}{'stfs':>9}{'s3fs':>9}{'rclone':>9}"
       f"{'stfs/raw':>10}{'s3fs/stfs':>11}{'rclone/stfs':>13}")
print(hdr)
print("-" * len(hdr))
for op, label in OPS:
    m = {t: med(op, t) for t in TOOLS}
    if all(v is None for v in m.values()):
        continue
    print(f"{label:<28}" + "".join(f"{fmt(m[t]):>9}" for t in TOOLS) +
          f"{ratio(m['stfs'], m['raw']):>10}"
          f"{ratio(m['s3fs'], m['stfs']):>11}"
          f"{ratio(m['rclone'], m['stfs']):>13}")
print("raw: metadata rows = one paged ListObjectsV2 of the prefix "
      "(max-keys=1000, no delimiter);")
print("     read all = one curl process, GETs in turn on one keep-alive "
      "connection; parallel-8 curl: "
      f"{fmt(med('read_all_par8', 'raw'))} s; 256 MiB = one curl GET.")
print("stfs walks MNT/jobs (with its pseudo-files); s3fs and rclone walk "
      "BUCKET/seatunnel/checkpoint;")
print("  stfs's rows have the engine down, except 'engine up (mix)': the "
      "simulator on the namespace's scenario")
print("  (s3fs and rclone: their cold du -s, which no engine changes).")
print("  'du -s jobs/*/pipelines cold' is stfs only (a diagnostic: no "
      "per-job pseudo-files).")
bigraw = med("big", "raw")
if bigraw:
    mb = int(bigsize) / 1048576
    print("256 MiB throughput MiB/s: " + ", ".join(
        f"{t} {mb / med('big', t):.0f}" for t in TOOLS if med("big", t)))

print("outputs of run 1 (sanity: same counts/bytes expected across tools):")
for op, label in OPS:
    row = [f"{t}={outs[(op, t)].strip()}" for t in TOOLS if (op, t) in outs]
    if row:
        print(f"  {op:<9} " + "  ".join(row))


def counters(fname):
    acc = defaultdict(list)
    try:
        with open(f"{d}/{fname}") as f:
            for line in f:
                s, _run, c = line.rstrip("\n").split("\t", 2)
                if s != size:
                    continue
                for kv in c.split(";"):
                    if " " in kv:
                        k, v = kv.split(" ", 1)
                        acc[k].append(float(v))
    except FileNotFoundError:
        pass
    return {k: statistics.median(v) for k, v in acc.items()}


gets = defaultdict(list)
try:
    with open(f"{d}/gets.tsv") as f:
        for line in f:
            s, _run, tool, n = line.rstrip("\n").split("\t")
            if s == size and n.isdigit():
                gets[tool].append(int(n))
except FileNotFoundError:
    pass
if gets:
    print("requests on object keys (GET, HEAD; s3rver's log) per cold du -s, "
          "median: " + ", ".join(
              f"{t} {statistics.median(gets[t]):.0f}"
              for t in ("stfs", "stfs-up", "s3fs", "rclone") if gets[t]) +
          " (stfs-up: engine up)")

c = counters("counters.tsv")
if c:
    print("stfs requests for the cold du -s (MNT/.stfs/stats after it, "
          "median over runs):")
    for k, v in sorted(c.items()):
        print(f"  {k} {v:.0f}")
c2 = counters("counters-meta.tsv")
if c2:
    print("  ... and after du warm + ls -lR + find: " + ", ".join(
        f"{k.replace('stfs_', '').replace('_total', '')}={v:.0f}"
        for k, v in sorted(c2.items()) if "request" in k))

c6 = counters("counters-steady.tsv")
if c2 and c6:
    print("  FUSE calls of the steady du -s + ls -lR + find (opendir and "
          "releasedir not counted): " + ", ".join(
              f"{k.replace('stfs_fuse_', '').replace('_total', '')}="
              f"{c6[k] - c2.get(k, 0):.0f}"
              for k in sorted(c6) if k.startswith("stfs_fuse_")))

c5 = counters("counters-up.tsv")
if c5:
    print("  ... for the cold du -s with the engine up: " + ", ".join(
        f"{k.replace('stfs_', '').replace('_total', '')}={v:.0f}"
        for k, v in sorted(c5.items()) if "request" in k))

c4 = counters("counters-pipes.tsv")
if c4:
    print("  ... for the cold du -s of jobs/*/pipelines only: " + ", ".join(
        f"{k.replace('stfs_', '').replace('_total', '')}={v:.0f}"
        for k, v in sorted(c4.items()) if "request" in k))
c3 = counters("counters-big.tsv")
if c3:
    print("stfs requests for one cat of the 256 MiB object: " + ", ".join(
        f"{k.replace('stfs_', '').replace('_total', '')}={v:.0f}"
        for k, v in sorted(c3.items())
        if "request" in k or "read_bytes" in k))

print("targets:")


def target(name, ok, detail):
    if ok is None:
        print(f"  SKIP  {name} ({detail})")
    else:
        print(f"  {'PASS' if ok else 'MISS'}  {name}: {detail}")


st, s3, rc, raw = (med("du_cold", t) for t in ("stfs", "s3fs", "rclone",
                                                "raw"))
target("cold du -s >= 10x faster than s3fs",
       None if not (st and s3) else s3 / st >= 10,
       f"s3fs/stfs = {ratio(s3, st)}")
su = med("du_cold_up", "stfs")
target("cold du -s, engine up (mix), >= 5x faster than s3fs",
       None if not (su and s3) else s3 / su >= 5,
       f"s3fs/stfs = {ratio(s3, su)}")
target("cold du -s >= 5x faster than rclone",
       None if not (st and rc) else rc / st >= 5,
       f"rclone/stfs = {ratio(rc, st)}")
target("cold du -s within 2x of a raw paged listing",
       None if not (st and raw) else st / raw <= 2,
       f"stfs/raw = {ratio(st, raw)}")
for op, label in (("du_warm", "warm du -s"), ("ls_lR", "warm ls -lR"),
                  ("find", "warm find"), ("du_steady", "steady du -s"),
                  ("ls_lR_steady", "steady ls -lR"),
                  ("find_steady", "steady find")):
    a, b = med(op, "stfs"), med(op, "rclone")
    target(f"{label} no slower than rclone",
           None if not (a and b) else a <= b,
           f"stfs/rclone = {ratio(a, b)}")
sb = med("big", "stfs")
target("256 MiB read >= 0.9x raw curl GET speed",
       None if not (sb and bigraw) else bigraw / sb >= 0.9,
       f"speed stfs/raw = {ratio(bigraw, sb)}" if sb and bigraw else
       "not measured")
