#!/bin/bash
# make demo / make demo-stop: a sample cluster on this machine, mounted.
#   demo/state   generated checkpoint storage, IMap WAL files, scenario
#   demo/mnt     the stfs mount
# The engine simulator listens on 127.0.0.1:$STFS_DEMO_PORT (18080).
cd "$(dirname "$0")/.." || exit 1
D=$PWD/demo
PORT=${STFS_DEMO_PORT:-18080}
MNT=$D/mnt

stop() {
	if mountpoint -q "$MNT" 2>/dev/null; then
		fusermount3 -u "$MNT" && echo "unmounted $MNT"
	fi
	if [ -f "$D/sim.pid" ]; then
		kill "$(cat "$D/sim.pid")" 2>/dev/null && echo "stopped the engine simulator"
		rm -f "$D/sim.pid"
	fi
}

run() { # show a command, then run it
	printf '\n\033[1m$ %s\033[0m\n' "$*"
	eval "$@"
}

start() {
	stop >/dev/null 2>&1
	rm -rf "$D/state"
	mkdir -p "$D" "$MNT"
	echo "generating a sample cluster state in $D/state ..."
	python3 scripts/genstate.py --out "$D/state" --jobs 40 --seed 42 \
		--doc-jobs 2 --imap >"$D/genstate.log" || exit 1
	python3 scripts/stsim.py --scenario "$D/state/scenario.json" \
		--host 127.0.0.1 --port "$PORT" >"$D/sim.log" 2>&1 &
	echo $! >"$D/sim.pid"
	for _ in $(seq 50); do
		curl -s -o /dev/null "http://127.0.0.1:$PORT/overview" && break
		sleep 0.1
	done
	build/stfs -o "checkpoint=file://$D/state/checkpoint/" \
		-o "engine=http://127.0.0.1:$PORT" \
		-o "imap=file://$D/state/imap/" -o "state_dir=$D/statedir" \
		"$MNT" || { stop; exit 1; }
	cd "$MNT" || exit 1
	failed=$(ls by-state/FAILED | head -1)
	run "ls -l jobs/ | head -12"
	run "cat jobs/$failed/status"
	run "ls -l jobs/$failed/pipelines/1/checkpoints/"
	run "du -sh jobs/ && du -sh --apparent-size jobs/$failed"
	run "head -12 jobs/$failed/metrics"
	run "ls by-state/ && ls -l by-state/RUNNING/ | head -5"
	run "getfattr -d jobs/$failed"
	running=$(ls by-state/RUNNING | head -1)
	run "rm -r jobs/$running 2>&1 | head -3   # a running job: EBUSY, nothing touched"
	run "cat jobs/$failed/deletable"
	run "rm -r jobs/$failed 2>&1 | tail -3   # superseded checkpoints go, restore points stay"
	run "echo release > jobs/$failed/restore && cat jobs/$failed/restore"
	run "rm -r jobs/$failed && echo 'rm -r: exit 0' && ls jobs/$failed/pipelines/1/checkpoints/"
	run "tail -2 .stfs/audit"
	run "cat imap/seatunnel/engine_checkpoint-id-map.summary"
	run "cat .stfs/health"
	echo
	echo "The tree is mounted at $MNT; the engine simulator runs on 127.0.0.1:$PORT."
	echo "Stop both with: make demo-stop"
}

case "$1" in
start) start ;;
stop) stop ;;
*) echo "usage: $0 start|stop" >&2; exit 2 ;;
esac
