#!/bin/bash
# The local section of `make bench` (issue 11): stfs over a local checkpoint
# namespace made by scripts/genstate.py (JOBS jobs x 2 pipelines x 5
# checkpoints) with the engine simulator up, against the raw directory.
#
#   BENCH_RUNS=3          repetitions (the table shows medians)
#   BENCH_LOCAL_JOBS=2000 jobs of the namespace (2000: 21,131 files)
#   BENCH_RSS_JOBS=10000  jobs of the namespace walked for the peak RSS
#                         (10000: ~100,000 objects; 0 skips it)
#
# Per op (du -s, ls -lR, find) and run: raw cold (caches dropped), raw
# warm, then a fresh stfs daemon: cold (caches dropped), warm (the same
# walk again).  Printed: medians, stfs/raw ratios, us per entry of what the
# walk lists (the mount shows ~3.4x the raw entries), the daemon's CPU time
# and its FUSE calls (.stfs/stats) per walk.  Needs root (drop_caches).
set -u
ROOT=$(cd "$(dirname "$0")/.." && pwd)
STFS=${STFS_BIN:-$ROOT/build/stfs}
RUNS=${BENCH_RUNS:-3}
JOBS=${BENCH_LOCAL_JOBS:-2000}
RSS_JOBS=${BENCH_RSS_JOBS:-10000}
[ -x "$STFS" ] || make -s -C "$ROOT" build/stfs || exit 1
T=$(mktemp -d /tmp/stfs-bench-local.XXXXXX)
M=$T/mnt
SIM=""
PID=""
mkdir -p "$M"
cleanup() {
	[ -n "$PID" ] && { fusermount3 -u "$M" 2>/dev/null; wait "$PID" 2>/dev/null; }
	[ -n "$SIM" ] && kill "$SIM" 2>/dev/null
	rm -rf "$T"
}
trap cleanup EXIT

drop() { sync; echo 3 >/proc/sys/vm/drop_caches 2>/dev/null; }
secs() { # secs CMD...: wall seconds of CMD (output discarded)
	local s e
	s=$(date +%s%N)
	"$@" >/dev/null 2>&1
	e=$(date +%s%N)
	echo "$(((e - s) / 1000))" # microseconds
}
op_du() { du -s "$1"; }
op_lsr() { ls -lR "$1"; }
op_find() { find "$1"; }
ticks() { awk '{ print $14 + $15 }' "/proc/$1/stat"; } # utime+stime
fuse_calls() { # getattr+readdir+open+read of .stfs/stats
	awk '$1 ~ /^stfs_fuse_(getattr|readdir|open|read)_total$/ { n += $2 } END { print n + 0 }' "$M/.stfs/stats"
}
start_stfs() { # start_stfs NS
	"$STFS" -f -o "checkpoint=file://$1/,engine=http://127.0.0.1:$PORT,state_dir=$T/sd,timeout=5000" \
		"$M" >>"$T/stfs.log" 2>&1 &
	PID=$!
	for _ in $(seq 400); do
		mountpoint -q "$M" && return 0
		sleep 0.05
	done
	echo "bench-local: mount failed" >&2
	tail -3 "$T/stfs.log" >&2
	return 1
}
stop_stfs() {
	fusermount3 -u "$M"
	wait "$PID" 2>/dev/null
	PID=""
}
start_sim() { # start_sim SCENARIO
	rm -f "$T/sim.port"
	python3 "$ROOT/scripts/stsim.py" --scenario "$1" --host 127.0.0.1 --port 0 \
		--port-file "$T/sim.port" >"$T/sim.log" 2>&1 &
	SIM=$!
	for _ in $(seq 100); do
		[ -s "$T/sim.port" ] && break
		sleep 0.05
	done
	PORT=$(cat "$T/sim.port")
}

python3 "$ROOT/scripts/genstate.py" --out "$T/st" --jobs "$JOBS" --pipelines 2 \
	--checkpoints 5 --seed 1 >"$T/gen.log" 2>&1 || {
	cat "$T/gen.log"
	exit 1
}
NS=$T/st/checkpoint
start_sim "$T/st/scenario.json"
RAW_N=$(find "$NS" | wc -l)
start_stfs "$NS" || exit 1
MNT_N=$(find "$M/jobs" | wc -l)
stop_stfs

# rows: op run raw_cold raw_warm stfs_cold stfs_warm cpu_cold cpu_warm calls_cold calls_warm (us, ticks)
for op in du lsr find; do
	for run in $(seq "$RUNS"); do
		drop
		rc=$(secs "op_$op" "$NS")
		rw=$(secs "op_$op" "$NS")
		start_stfs "$NS" || exit 1
		drop
		f0=$(fuse_calls)
		t0=$(ticks "$PID")
		sc=$(secs "op_$op" "$M/jobs")
		t1=$(ticks "$PID")
		f1=$(fuse_calls)
		sw=$(secs "op_$op" "$M/jobs")
		t2=$(ticks "$PID")
		f2=$(fuse_calls)
		echo "$op $run $rc $rw $sc $sw $((t1 - t0)) $((t2 - t1)) $((f1 - f0 - 1)) $((f2 - f1 - 1))" >>"$T/rows"
		stop_stfs
	done
done

RSS=""
if [ "$RSS_JOBS" -gt 0 ]; then
	kill "$SIM" 2>/dev/null
	wait "$SIM" 2>/dev/null
	python3 "$ROOT/scripts/genstate.py" --out "$T/big" --jobs "$RSS_JOBS" \
		--pipelines 2 --checkpoints 5 --seed 2 >"$T/gen-big.log" 2>&1 || exit 1
	start_sim "$T/big/scenario.json"
	start_stfs "$T/big/checkpoint" || exit 1
	find "$M/jobs" >/dev/null 2>&1
	du -s "$M/jobs" >/dev/null 2>&1
	RSS="$(find "$T/big/checkpoint" -type f | wc -l) $(awk '/^VmHWM/ { print $2 }' "/proc/$PID/status")"
	stop_stfs
fi

python3 - "$T/rows" "$RAW_N" "$MNT_N" "$RUNS" "$JOBS" "$RSS" <<'PY'
import statistics, sys
rows = [l.split() for l in open(sys.argv[1])]
raw_n, mnt_n, runs, jobs, rss = int(sys.argv[2]), int(sys.argv[3]), sys.argv[4], sys.argv[5], sys.argv[6]
names = {"du": "du -s", "lsr": "ls -lR", "find": "find"}
print(f"\nbench (local): {jobs} jobs x 2 pipelines x 5 checkpoints, engine simulator up;"
      f" raw {raw_n} entries, mount {mnt_n} entries ({mnt_n / raw_n:.1f}x); medians of {runs}")
print("| op | raw cold | raw warm | stfs cold | stfs warm | cold ratio | warm ratio |"
      " µs/entry cold (raw) | µs/entry warm (raw) | daemon CPU cold / warm | FUSE calls cold / warm |")
print("|---|---|---|---|---|---|---|---|---|---|---|")
for op in ("du", "lsr", "find"):
    r = [x for x in rows if x[0] == op]
    med = [statistics.median(int(x[i]) for x in r) for i in range(2, 10)]
    rc, rw, sc, sw, cc, cw, fc, fw = med
    print(f"| `{names[op]}` | {rc/1e6:.3f} s | {rw/1e6:.3f} s | {sc/1e6:.3f} s | {sw/1e6:.3f} s |"
          f" {sc/rc:.1f}x | {sw/rw:.1f}x |"
          f" {sc/mnt_n:.1f} ({rc/raw_n:.1f}) | {sw/mnt_n:.1f} ({rw/raw_n:.1f}) |"
          f" {cc/100:.2f} s / {cw/100:.2f} s | {int(fc)} / {int(fw)} |")
if rss:
    n, kb = rss.split()
    print(f"\npeak RSS of the daemon after find + du -s over {n} objects: {int(kb)/1024:.1f} MiB")
PY
