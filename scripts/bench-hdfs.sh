#!/bin/bash
# The WebHDFS section of `make bench` (issue 10): stfs over a real HDFS
# (Hadoop 3.5.0 MiniDFSCluster, scripts/hadoop.sh) against Hadoop's own Java
# client on the same namespace, made by scripts/genstate.py (JOBS jobs x 2
# pipelines x 25 checkpoints, uploaded through WebHDFS by scripts/webhdfs.py).
#
#   BENCH_RUNS=3          repetitions (the table shows medians)
#   BENCH_HDFS_JOBS=37    jobs (37: ~2,000 objects in 40 job directories)
#
# Per run: a fresh stfs mount (webhdfs://, engine unreachable as in the S3
# section), du -s cold (the first listing), du -s warm, ls -lR | wc -l,
# read all (cat of every checkpoint object); the WebHDFS requests of the
# cold and the warm du from .stfs/stats, per directory of the namespace.  The raw
# baseline is `hdfs dfs` (org.apache.hadoop.fs.FsShell, over RPC, on the
# tests' Maven classpath): -du -s, -ls -R, -cat of every object (one JVM
# per command, its start included: what a user of `hdfs dfs` pays; the
# start alone, `-stat /`, is printed beside it).  Needs Maven + OpenJDK 17.
set -u
ROOT=$(cd "$(dirname "$0")/.." && pwd)
STFS=${STFS_BIN:-$ROOT/build/stfs}
RUNS=${BENCH_RUNS:-3}
JOBS=${BENCH_HDFS_JOBS:-37}
V=${STFS_HADOOP_VERSION:-3.5.0}
JAVA=${STFS_HADOOP_JAVA:-/usr/lib/jvm/java-17-openjdk-amd64/bin/java}
B=$ROOT/build/hadoop/$V
HNS=/seatunnel/checkpoint
[ -x "$STFS" ] || make -s -C "$ROOT" build/stfs || exit 1
T=$(mktemp -d /tmp/stfs-bench-hdfs.XXXXXX)
M=$T/mnt
PID=""
mkdir -p "$M"
cleanup() {
	[ -n "$PID" ] && { fusermount3 -u "$M" 2>/dev/null; wait "$PID" 2>/dev/null; }
	"$ROOT/scripts/hadoop.sh" stop "$T/hdfs" 2>/dev/null
	rm -rf "$T"
}
trap cleanup EXIT

secs() { # secs CMD...: wall seconds of CMD, its stdout to $T/last.out
	local s e
	s=$(date +%s%N)
	"$@" >"$T/last.out" 2>>"$T/errors.log"
	e=$(date +%s%N)
	python3 -c "print(f'{($e - $s) / 1e9:.4f}')"
}
hdfs_dfs() { # the Java client, as `hdfs dfs`
	HADOOP_USER_NAME=stfs "$JAVA" -Xms64m -XX:+UseSerialGC -XX:TieredStopAtLevel=1 \
		-Dlog4j.configuration=file:/dev/null \
		-cp "$CONFDIR:$B/stfs-hadoop-1.jar:$(cat "$B/classpath.txt")" \
		org.apache.hadoop.fs.FsShell "$@"
}
java_lsr() { hdfs_dfs -ls -R "$HNS" | wc -l; }
# shellcheck disable=SC2046
java_cat() { hdfs_dfs -cat $(cat "$T/objs") | wc -c; }
stat_of() { # stat_of NAME: one counter of .stfs/stats
	awk -v k="$1" '$1 == k { print $2 }' "$M/.stfs/stats"
}

python3 "$ROOT/scripts/genstate.py" --out "$T/st" --jobs "$JOBS" --pipelines 2 \
	--checkpoints 25 --seed 5 --now-ms 1700000000000 >"$T/gen.log" 2>&1 || {
	cat "$T/gen.log"
	exit 1
}
NS=$T/st/checkpoint
NOBJ=$(find "$NS" -type f | wc -l)
NDIRS=$(find "$NS" -type d | wc -l)
"$ROOT/scripts/hadoop.sh" start "$T/hdfs" plain >"$T/hadoop.start" 2>&1 || {
	cat "$T/hadoop.start"
	exit 1
}
HP=$("$ROOT/scripts/hadoop.sh" port "$T/hdfs" http)
RPC=$("$ROOT/scripts/hadoop.sh" port "$T/hdfs" rpc)
# the client's configuration, as on a Hadoop client host (FsShell wants a
# core-site.xml)
CONFDIR=$T/conf
mkdir -p "$CONFDIR"
cat >"$CONFDIR/core-site.xml" <<XML
<configuration><property><name>fs.defaultFS</name><value>hdfs://127.0.0.1:$RPC</value></property></configuration>
XML
python3 "$ROOT/scripts/webhdfs.py" upload "http://127.0.0.1:$HP" stfs "$NS" "$HNS" >/dev/null || exit 1
echo "bench-hdfs: $NOBJ objects in $NDIRS directories on a MiniDFSCluster (Hadoop $V), $RUNS runs"
(cd "$NS" && find . -type f -name '*.ser*' -printf "$HNS/%P\n") >"$T/objs"

DEAD=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
for ((run = 1; run <= RUNS; run++)); do
	rm -rf "$T/sd"
	"$STFS" -f -o "checkpoint=webhdfs://127.0.0.1:$HP$HNS/,hdfs_user=stfs,engine=http://127.0.0.1:$DEAD,state_dir=$T/sd,timeout=5000" \
		"$M" >>"$T/stfs.log" 2>&1 &
	PID=$!
	for _ in $(seq 400); do
		mountpoint -q "$M" && break
		sleep 0.05
	done
	r0=$(stat_of stfs_http_requests_total)
	echo "du_cold stfs $(secs du -s "$M/jobs")" >>"$T/res"
	r1=$(stat_of stfs_http_requests_total)
	echo "reqs stfs $((r1 - r0))" >>"$T/res"
	echo "du_warm stfs $(secs du -s "$M/jobs")" >>"$T/res"
	echo "reqs_warm stfs $(($(stat_of stfs_http_requests_total) - r1))" >>"$T/res"
	echo "ls_lR stfs $(secs bash -c "ls -lR '$M/jobs' | wc -l")" >>"$T/res"
	echo "read_all stfs $(secs bash -c "find '$M/jobs' -type f -name '*.ser*' -exec cat {} + | wc -c")" >>"$T/res"
	echo "bytes stfs $(cat "$T/last.out")" >>"$T/res"
	fusermount3 -u "$M"
	wait "$PID" 2>/dev/null
	PID=""
	echo "jvm java $(secs hdfs_dfs -stat /)" >>"$T/res"
	echo "du_cold java $(secs hdfs_dfs -du -s "$HNS")" >>"$T/res"
	echo "ls_lR java $(secs java_lsr)" >>"$T/res"
	echo "read_all java $(secs java_cat)" >>"$T/res"
	echo "bytes java $(cat "$T/last.out")" >>"$T/res"
done
python3 - "$T/res" "$NDIRS" <<'PY'
import statistics, sys
rows = {}
for line in open(sys.argv[1]):
    op, tool, v = line.split()
    rows.setdefault((op, tool), []).append(float(v))
med = lambda k: statistics.median(rows[k]) if k in rows else None
ndirs = int(sys.argv[2])
print(f"{'WebHDFS (median)':22} {'stfs s':>9} {'hdfs dfs s':>11}")
for op, label in [("du_cold", "du -s cold"), ("du_warm", "du -s warm"),
                  ("ls_lR", "ls -lR"), ("read_all", "read all")]:
    s, j = med((op, "stfs")), med((op, "java"))
    fs = f"{s:9.3f}" if s is not None else f"{'-':>9}"
    fj = f"{j:11.3f}" if j is not None else f"{'-':>11}"
    print(f"{label:22} {fs} {fj}")
r = med(("reqs", "stfs"))
print(f"{'requests, cold du':22} {r:9.0f} {'(RPC)':>11}   {r / ndirs:.2f} per directory ({ndirs})")
print(f"{'requests, warm du':22} {med(('reqs_warm', 'stfs')):9.0f}")
print(f"hdfs dfs JVM start + connect alone (-stat /): {med(('jvm', 'java')):.3f} s")
bs, bj = med(("bytes", "stfs")), med(("bytes", "java"))
print(f"bytes read: stfs {bs:.0f}, hdfs dfs {bj:.0f}" + ("" if bs == bj else "  MISMATCH"))
PY
if [ -s "$T/errors.log" ]; then
	echo "bench-hdfs: stderr of the timed commands (first lines):"
	grep -v '^log4j:' "$T/errors.log" | sort | uniq -c | sort -rn | head -5
fi
