#!/bin/bash
# Helpers for the real-mount integration tests: a scratch directory, the
# engine simulator, stfs mounts, and pass/fail counting.  Everything started
# here is stopped by PID and unmounted in cleanup.
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
STFS=${STFS_BIN:-$ROOT/build/stfs}
PASS=0
FAIL=0
PIDS=()
MOUNTS=()
T=$(mktemp -d /tmp/stfs-it.XXXXXX)

ok() { PASS=$((PASS + 1)); echo "  ok   $*"; }
bad() { FAIL=$((FAIL + 1)); echo "  FAIL $*"; }
# check DESC CMD...: the command's success is the check
check() {
	local d=$1
	shift
	if "$@"; then ok "$d"; else bad "$d"; fi
}
# check_eq DESC EXPECTED ACTUAL
check_eq() {
	if [ "$2" == "$3" ]; then ok "$1"; else bad "$1: expected [$2], got [$3]"; fi
}

cleanup() {
	local m p
	for m in "${MOUNTS[@]}"; do
		mountpoint -q "$m" 2>/dev/null && fusermount3 -u "$m" 2>/dev/null
	done
	for p in "${PIDS[@]}"; do
		kill -CONT "$p" 2>/dev/null
		kill "$p" 2>/dev/null
	done
	sleep 0.2
	for m in "${MOUNTS[@]}"; do
		mountpoint -q "$m" 2>/dev/null && fusermount3 -uz "$m" 2>/dev/null
	done
	[ -n "$KEEP_T" ] || rm -rf "$T"
}
trap cleanup EXIT

finish() {
	echo "$(basename "$0" .sh): $PASS passed, $FAIL failed"
	[ "$FAIL" = 0 ]
}

# start_sim SCENARIO NAME: starts the engine simulator; sets SIM_PID_<NAME>,
# SIM_PORT_<NAME> and prints nothing.
start_sim() {
	local scen=$1 name=$2 pf=$T/sim-$2.port
	rm -f "$pf"
	python3 "$ROOT/scripts/stsim.py" --scenario "$scen" --host 127.0.0.1 \
		--port 0 --port-file "$pf" >"$T/sim-$name.log" 2>&1 &
	local pid=$!
	PIDS+=("$pid")
	for _ in $(seq 100); do
		[ -s "$pf" ] && break
		sleep 0.05
	done
	printf -v "SIM_PID_$name" %s "$pid"
	printf -v "SIM_PORT_$name" %s "$(cat "$pf")"
}

sim_ctl() { # sim_ctl PORT METHOD PATH [JSON]
	curl -s -m 5 -X "$2" -H 'Content-Type: application/json' \
		${4:+--data "$4"} "http://127.0.0.1:$1$3"
}

# mount_stfs MNT OPTS...: mounts in the foreground process, waits for it.
mount_stfs() {
	local mnt=$1
	shift
	mkdir -p "$mnt"
	"$STFS" -f "$@" "$mnt" >>"$T/stfs-$(basename "$mnt").log" 2>&1 &
	local pid=$!
	PIDS+=("$pid")
	MOUNTS+=("$mnt")
	for _ in $(seq 200); do
		mountpoint -q "$mnt" && { STFS_PID=$pid; return 0; }
		kill -0 "$pid" 2>/dev/null || break
		sleep 0.05
	done
	echo "mount of $mnt failed:"
	tail -5 "$T/stfs-$(basename "$mnt").log"
	return 1
}

unmount_stfs() {
	local mnt=$1
	fusermount3 -u "$mnt"
	for _ in $(seq 100); do
		kill -0 "$STFS_PID" 2>/dev/null || return 0
		sleep 0.05
	done
	return 1
}

json() { # json FILE PYEXPR  (d = the parsed file)
	python3 -c "import json,sys; d=json.load(open(sys.argv[1])); print($2)" "$1"
}
