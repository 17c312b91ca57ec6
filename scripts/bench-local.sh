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
# walk again: the kernel asks one GETATTR per directory once more, as it
# marks a directory's atime stale when it reads a listing from the daemon)
# and steady (the walk after that).  Printed (scripts/bench-local-report.py):
# medians, stfs/raw ratios (raw warm for both warm walks), us per entry of
# what the walk lists (the mount shows ~3.4x the raw entries), the daemon's
# CPU time and its FUSE calls (.stfs/stats: every request kind but forget,
# the cost of reading the file itself taken off) per walk, and those calls
# by kind.  Needs root (drop_caches).
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
snap() { # snap FILE: the FUSE requests counted so far, "kind count" lines
	awk '$1 ~ /^stfs_fuse_[a-z]+_total$/ && $1 != "stfs_fuse_read_bytes_total" &&
		$1 != "stfs_fuse_forget_total" {
		sub(/^stfs_fuse_/, "", $1); sub(/_total$/, "", $1); print $1, $2 }' \
		"$M/.stfs/stats" >"$1"
}
delta() { # delta A B O: per kind, B - A - O (O: what reading the file costs)
	awk 'FNR == 1 { f++ } f == 1 { a[$1] = $2 } f == 2 { b[$1] = $2 }
		f == 3 { o[$1] = $2 }
		END { for (k in b) { d = b[k] - a[k] - o[k]; print k, d < 0 ? 0 : d } }' \
		"$1" "$2" "$3" | sort
}
total() { awk '{ n += $2 } END { print n + 0 }' "$1"; }
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

# rows: op run raw_cold raw_warm stfs_cold stfs_warm stfs_steady
#   cpu_cold cpu_warm cpu_steady calls_cold calls_warm calls_steady (us, ticks)
# kinds: op run walk kind calls
: >"$T/zero"
for op in du lsr find; do
	for run in $(seq "$RUNS"); do
		drop
		rc=$(secs "op_$op" "$NS")
		rw=$(secs "op_$op" "$NS")
		start_stfs "$NS" || exit 1
		drop
		snap "$T/c0"
		snap "$T/c1"
		delta "$T/c0" "$T/c1" "$T/zero" >"$T/cost" # of reading .stfs/stats
		us="" cpu="" calls=""
		for walk in cold warm steady; do
			t0=$(ticks "$PID")
			us="$us $(secs "op_$op" "$M/jobs")"
			cpu="$cpu $(($(ticks "$PID") - t0))"
			cp "$T/c1" "$T/c0"
			snap "$T/c1"
			delta "$T/c0" "$T/c1" "$T/cost" >"$T/d"
			calls="$calls $(total "$T/d")"
			sed "s/^/$op $run $walk /" "$T/d" >>"$T/kinds"
		done
		echo "$op $run $rc $rw$us$cpu$calls" >>"$T/rows"
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

python3 "$ROOT/scripts/bench-local-report.py" "$T/rows" "$T/kinds" "$RAW_N" "$MNT_N" \
	"$RUNS" "$JOBS" "$RSS"
