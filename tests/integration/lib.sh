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
# SIM_PORT_<NAME> and prints nothing.  STSIM_VERSION=3 serves 3.x shapes
# (default: the scenario's, else 2.3); 2.3.8 the API under /hazelcast/rest/maps.
start_sim() {
	local scen=$1 name=$2 pf=$T/sim-$2.port
	rm -f "$pf"
	python3 "$ROOT/scripts/stsim.py" --scenario "$scen" --host 127.0.0.1 \
		${STSIM_VERSION:+--version "$STSIM_VERSION"} \
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

# refused_mount NAME WANT OPTS: mounting $T/NAME with -o OPTS fails at once
# (a mount that starts runs until the timeout: 124) and says WANT
refused_mount() {
	local out rc
	mkdir -p "$T/$1"
	MOUNTS+=("$T/$1")
	out=$(timeout 10 "$STFS" -f -o "$3" "$T/$1" 2>&1)
	rc=$?
	check "$2: the mount fails at once (exit $rc)" test "$rc" != 0 -a "$rc" != 124
	check "$2: ... and says so ($(grep -m1 -F "${2%%:*}" <<<"$out"))" \
		grep -qF "$2" <<<"$out"
}

unmount_stfs() {
	local mnt=$1
	fusermount3 -u "$mnt"
	for _ in $(seq 400); do
		kill -0 "$STFS_PID" 2>/dev/null || return 0
		sleep 0.05
	done
	# still there 20 s after the unmount: say where it waits
	echo "    stfs $STFS_PID did not exit after unmounting $mnt; its threads:"
	if command -v gdb >/dev/null; then
		timeout 30 gdb -q -batch -p "$STFS_PID" -ex "thread apply all bt 12" 2>/dev/null |
			grep -E '^(Thread|#)' | sed 's/^/    /' | head -120
	fi
	return 1
}

# ns_drop_inherited_fuse: run first in a fresh private mount namespace
# (unshare -m): it detaches the FUSE mounts the namespace copied from its
# parent.  A copy keeps that FUSE connection alive, so another suite running
# at the same time would unmount its mount and see its daemon go on serving
# the copy until this namespace ends ("the daemon exits after unmount").
ns_drop_inherited_fuse() {
	local tgt fst
	findmnt -rn -o TARGET,FSTYPE | while read -r tgt fst; do
		case $fst in
		fuse | fuse.* | fuseblk) umount -l "$(printf '%b' "$tgt")" 2>/dev/null ;;
		esac
	done
}

# engine_jobs_tsv PORT: "<jobId>\t<jobStatus>\t<jobName>" for every job the
# engine reports, asked directly (both list forms)
engine_jobs_tsv() {
	python3 - "$1" <<'PY'
import json, sys, urllib.request
base = "http://127.0.0.1:%s" % sys.argv[1]
for path in ("/running-jobs", "/finished-jobs/"):
    d = json.load(urllib.request.urlopen(base + path, timeout=5))
    if isinstance(d, dict):
        d = d["data"]
    for j in d:
        print("%s\t%s\t%s" % (j["jobId"], j["jobStatus"], j.get("jobName", "")))
PY
}

json() { # json FILE PYEXPR  (d = the parsed file)
	python3 -c "import json,sys; d=json.load(open(sys.argv[1])); print($2)" "$1"
}

# ---- helpers for the deletion tests (test_delete.sh, test_perms.sh) ----

# okq: counts a pass like ok, silently (for large matrices)
okq() { PASS=$((PASS + 1)); }
# check_q DESC EXPECTED ACTUAL: check_eq that is silent when it passes
check_q() {
	if [ "$2" == "$3" ]; then okq; else bad "$1: expected [$2], got [$3]"; fi
}

# errno_of_msg: maps an rm/shell error message on stdin to an errno name
# (OK when the input is empty).
errno_of_msg() {
	local m
	m=$(cat)
	case $m in
	"") echo OK ;;
	*"Device or resource busy"*) echo EBUSY ;;
	*"Operation not permitted"*) echo EPERM ;;
	*"Resource temporarily unavailable"*) echo EAGAIN ;;
	*"Permission denied"*) echo EACCES ;;
	*"Read-only file system"*) echo EROFS ;;
	*"No such file or directory"*) echo ENOENT ;;
	*"Directory not empty"*) echo ENOTEMPTY ;;
	*"Input/output error"*) echo EIO ;;
	*) echo "OTHER($m)" ;;
	esac
}

# rm_errno [RUNAS...] -- PATH: runs rm PATH, prints OK or the errno name
# (from rm's message; a non-zero exit without a message prints FAILRC).
rm_errno() {
	local err rc
	err=$(rm -- "$1" 2>&1 >/dev/null)
	rc=$?
	if [ "$rc" = 0 ]; then echo OK; elif [ -z "$err" ]; then echo FAILRC; else
		echo "$err" | errno_of_msg
	fi
}

# release_errno PATH-OF-RESTORE [WORD]: writes WORD (release) to a restore
# control; prints OK or the errno name of the failed write.
release_errno() {
	local err
	err=$( (echo "${2:-release}" >"$1") 2>&1)
	if [ $? = 0 ]; then echo OK; else echo "$err" | errno_of_msg; fi
}

# audit_count FILE PATH: number of audit lines for exactly this path
audit_count() {
	grep -cF " path=$2 " "$1" 2>/dev/null || true
}
# audit_last FILE PATH: "outcome errno rule" of the newest line for the path
audit_last() {
	grep -F " path=$2 " "$1" 2>/dev/null | tail -1 |
		sed -n 's/.* rule=\([^ ]*\) .*outcome=\([a-z]*\) errno=\([A-Z0-9]*\).*/\2 \3 \1/p'
}
# deletable_class FILE CLASS: "yes" or "no ERRNO RULE" from a deletable view
deletable_class() {
	awk -v c="$2" '$1 == c { if ($3 == "yes") print "yes"; else print $3, $4, $5 }' "$1"
}

# start_sim_port SCENARIO NAME PORT: like start_sim, on a fixed port (to
# bring a stopped simulator back where a mount expects it).
start_sim_port() {
	local scen=$1 name=$2 port=$3 pf=$T/sim-$2.port
	rm -f "$pf"
	python3 "$ROOT/scripts/stsim.py" --scenario "$scen" --host 127.0.0.1 \
		${STSIM_VERSION:+--version "$STSIM_VERSION"} \
		--port "$port" --port-file "$pf" >>"$T/sim-$name.log" 2>&1 &
	local pid=$!
	PIDS+=("$pid")
	for _ in $(seq 100); do
		[ -s "$pf" ] && break
		sleep 0.05
	done
	printf -v "SIM_PID_$name" %s "$pid"
	printf -v "SIM_PORT_$name" %s "$(cat "$pf")"
}

# stop_pid PID: SIGTERM one process we started and wait for it to go
stop_pid() {
	kill "$1" 2>/dev/null
	for _ in $(seq 400); do
		kill -0 "$1" 2>/dev/null || return 0
		sleep 0.05
	done
	return 1
}

# ---- the real SeaTunnel engine (scripts/engine.sh, test_engine.sh) ----

# start_engine DIR: starts a real Zeta node on DIR (checkpoint/, imap/), or
# restarts it there; its PID joins PIDS (cleanup stops it with SIGTERM).
start_engine() {
	"$ROOT/scripts/engine.sh" start "$1" >/dev/null || return 1
	PIDS+=("$(cat "$1/engine.pid")")
}
eng() { "$ROOT/scripts/engine.sh" "$@"; }

# ---- remote storage suites (test_hdfs.sh, test_hdfs_ha.sh) ----

ms_since() { echo $((($(date +%s%N) - $1) / 1000000)); }
alive() { kill -0 "$1" 2>/dev/null; }
# fails_with PATTERN CMD...: the command fails and says PATTERN
fails_with() {
	local pat=$1 err
	shift
	err=$("$@" 2>&1) && return 1
	echo "$err" | grep -qE "$pat" || { echo "    got: $err"; return 1; }
}
# choose_jobs NS ENGINE_TSV: from a generated namespace and what the engine
# reports, sets storage_ids, WANT_JOBS (storage ∪ engine), REL_ID (FAILED,
# to release), PROT_ID (another FAILED/UNKNOWABLE), RUN_ID (RUNNING) and
# ORPH_ID (storage only); 1 when the scenario lacks one of them.
choose_jobs() {
	local ns=$1 tsv=$2 id s w
	storage_ids=$(cd "$ns" && ls | grep -E '^[0-9]+$' | sort)
	WANT_JOBS=$(printf '%s\n%s\n' "$storage_ids" "$(cut -f1 "$tsv" | sort)" | sort -u | grep .)
	_state() { awk -F'\t' -v i="$1" '$1 == i { print $2 }' "$tsv"; }
	REL_ID="" PROT_ID="" RUN_ID="" ORPH_ID=""
	for id in $storage_ids; do
		s=$(_state "$id")
		[ -z "$REL_ID" ] && [ "$s" == FAILED ] && { REL_ID=$id; continue; }
		[ -z "$RUN_ID" ] && [ "$s" == RUNNING ] && RUN_ID=$id
		[ -z "$ORPH_ID" ] && [ -z "$s" ] && ORPH_ID=$id
	done
	for id in $storage_ids; do
		[ "$id" == "$REL_ID" ] && continue
		case $(_state "$id") in FAILED | UNKNOWABLE) PROT_ID=$id; break ;; esac
	done
	[ -n "$REL_ID" ] && [ -n "$PROT_ID" ] && [ -n "$RUN_ID" ] && [ -n "$ORPH_ID" ]
}
# remote_jobs STATE NS: the engine simulator on STATE's scenario (PORT) and
# the jobs choose_jobs picks; the suite ends when one of them is missing
remote_jobs() {
	start_sim "$1/scenario.json" a
	PORT=$SIM_PORT_a
	engine_jobs_tsv "$PORT" >"$T/engine.tsv"
	choose_jobs "$2" "$T/engine.tsv" && return 0
	bad "the generated scenario has FAILED, FAILED/UNKNOWABLE, RUNNING and orphan jobs with storage"
	finish
	exit 1
}
# remote_ref STATE NS TMO: COMMON (the engine, imap and deadline options of
# every mount) and NS mounted through file:// on $T/mloc, to compare with
remote_ref() {
	COMMON="engine=http://127.0.0.1:$PORT,imap=file://$1/imap/,timeout=$3,orphan_grace=10m"
	mount_stfs "$T/mloc" -o "checkpoint=file://$2/,state_dir=$T/sd-loc,$COMMON" || {
		finish
		exit 1
	}
}
# check_du_raw MNT NS FILES: du -sb of each flat job's pipelines/ in MNT equals
# the sizes `FILES JOB` lists ("relpath size" of the raw objects, asked the store)
check_du_raw() {
	local id raw mnt errs=0 n=0
	for id in $storage_ids; do
		[ -n "$(find "$2/$id" -mindepth 1 -type d -print -quit)" ] && continue
		raw=$("$3" "$id" | awk '{s+=$2} END {print s+0}')
		mnt=$(du -sb --exclude=latest --exclude=status --exclude=info "$1/jobs/$id/pipelines" | cut -f1)
		n=$((n + 1))
		[ "$raw" == "$mnt" ] || { echo "    $id: raw $raw, mount $mnt"; errs=$((errs + 1)); }
	done
	check_eq "du -sb of pipelines/ equals the raw bytes in the store ($n jobs)" 0 "$errs"
}
# listing MNT: "path size" of every checkpoint file below MNT/jobs
listing() { (cd "$1/jobs" && find . -path '*checkpoints*' -type f -printf '%p %s\n' | sort); }
# need_hadoop: Maven and OpenJDK 17 are there (deps.sh installs them: their
# absence is a broken machine, not a pass), else the suite fails here.
# plugin_yaml FILE "KEY: VALUE"...: a seatunnel.yaml whose checkpoint storage
# is an hdfs plugin-config of these keys, as an operator's would be
plugin_yaml() {
	local f=$1 kv
	shift
	printf 'seatunnel:\n  engine:\n    checkpoint:\n      storage:\n        type: hdfs\n        plugin-config:\n' >"$f"
	for kv in "$@"; do printf '          %s\n' "$kv" >>"$f"; done
}
need_hadoop() {
	command -v mvn >/dev/null && [ -x /usr/lib/jvm/java-17-openjdk-amd64/bin/java ] && return 0
	bad "Maven and OpenJDK 17 are needed for the real HDFS (scripts/deps.sh installs them)"
	finish
	exit 1
}
# start_hdfs DIR [plain|ha]: a MiniDFSCluster (scripts/hadoop.sh); its PID
# joins PIDS; fails the suite when it does not come up.  Sets HPID.
start_hdfs() {
	"$ROOT/scripts/hadoop.sh" start "$1" "${2:-plain}" >"$T/hadoop.start" 2>&1 || {
		cat "$T/hadoop.start"
		bad "the MiniDFSCluster starts (log: $1/hadoop.log)"
		finish
		exit 1
	}
	HPID=$(cat "$1/hadoop.pid")
	PIDS+=("$HPID")
}

# gen_state DIR GENSTATE-ARGS...: a generated cluster state in DIR
# (scripts/genstate.py), or the test ends with the generator's output
gen_state() {
	local out=$1
	shift
	python3 "$ROOT/scripts/genstate.py" --out "$out" "$@" >"$T/gen.log" 2>&1 || {
		cat "$T/gen.log"
		exit 1
	}
}
