#!/bin/bash
# A REAL two-member SeaTunnel Zeta cluster (README "Failure modes"): both
# members share the checkpoint and IMap storage, stfs is mounted with both
# as engine= URLs, and the master is killed with SIGKILL in the middle of
# tree walks. Every call must return within the deadline, no walk may fail,
# nothing may be deleted while the cluster re-forms, and the mount must
# follow the surviving member by itself (its state, then a released rm -r
# checked against storage). Nothing is skipped: when Maven or an engine
# cannot start, the suite fails.
. "$(dirname "$0")/lib.sh"
t0=$(date +%s)
V=${STFS_ENGINE_VERSION:-2.3.8}
echo "  engine $V, two members"

if ! eng build; then
	bad "Maven could not fetch or build SeaTunnel $V (see build/engine/$V/mvn.log)"
	finish
	exit 1
fi
M1=$T/m1 M2=$T/m2 SH=$T/shared
N=$SH/checkpoint
mkdir -p "$M1" "$M2" "$N" "$SH/imap"
read -r P1 P2 < <(python3 -c 'import socket
s=[socket.socket() for _ in range(2)]
[x.bind(("127.0.0.1",0)) for x in s]
print(*[x.getsockname()[1] for x in s])')
echo "$P1" >"$M1/port"
echo "$P2" >"$M2/port"
echo "stfs-fo-$$" >"$M1/cluster"
echo "stfs-fo-$$" >"$M2/cluster"
export STFS_ENGINE_JVM_OPTS="-Dstfs.members=$P1,$P2 -Dstfs.shared=$SH"
start_engine "$M1" || {
	bad "member 1 did not start: $(tail -3 "$M1/engine.log")"
	finish
	exit 1
}
start_engine "$M2" || {
	bad "member 2 did not start: $(tail -3 "$M2/engine.log")"
	finish
	exit 1
}
unset STFS_ENGINE_JVM_OPTS
R1=$(eng rest "$M1") R2=$(eng rest "$M2")
members() { curl -sS -m 5 "$1/system-monitoring-information" |
	python3 -c 'import json,sys; print(len(json.load(sys.stdin)))' 2>/dev/null; }
for _ in $(seq 100); do [ "$(members "$R1")" = 2 ] && break; sleep 0.3; done
check_eq "one cluster of two members ($(($(date +%s) - t0)) s)" 2 "$(members "$R1")"

S=$(eng submit "$M1" stream s) SP=$(eng submit "$M1" stream sp)
[ -n "$S" ] && [ -n "$SP" ] || {
	bad "submitting the jobs failed"
	finish
	exit 1
}
check "streaming job: RUNNING" eng wait-state "$M1" "$S" RUNNING 60
sleep 3
eng stop-job "$M1" "$SP" savepoint >/dev/null
check "stop with savepoint: SAVEPOINT_DONE" eng wait-state "$M1" "$SP" SAVEPOINT_DONE 60
ser() { ls "$N/$1" 2>/dev/null | grep -cE '\.ser$'; }
for _ in $(seq 50); do [ "$(ser "$S")" -gt 0 ] && break; sleep 0.2; done
check "the running job has checkpoints in the shared storage" test "$(ser "$S")" -gt 0

TMO=3000
MT=$T/mnt
mount_stfs "$MT" -o "checkpoint=file://$N/,engine=$R1,engine=$R2,imap=file://$SH/imap/,state_dir=$T/sd,timeout=$TMO,engine_ttl=500" ||
	{ finish; exit 1; }
check_eq "before the kill: the running job is RUNNING" RUNNING \
	"$(getfattr --only-values -n user.stfs.state "$MT/jobs/$S" 2>/dev/null)"

# ---- walks while the master dies
WL=$T/walks.log
: >"$WL"
walker() { # one line per call: rc ms what
	local end=$(($(date +%s) + $1)) t rc
	while [ "$(date +%s)" -lt "$end" ]; do
		for what in find du status state; do
			t=$(date +%s%N)
			case $what in
			find) find "$MT/jobs" >/dev/null 2>>"$T/walk.err" ;;
			du) du -sb "$MT/jobs" >/dev/null 2>>"$T/walk.err" ;;
			status) cat "$MT/jobs/$S/status" >/dev/null 2>>"$T/walk.err" ;;
			state) getfattr -n user.stfs.state "$MT/jobs/$S" >/dev/null 2>>"$T/walk.err" ;;
			esac
			rc=$?
			# the engine's retention removes old checkpoints at any
			# time: an entry gone between listing and stat is no failure
			[ "$rc" != 0 ] && ! grep -v 'No such file or directory' "$T/walk.err" | grep -q . && rc=0
			cat "$T/walk.err" >>"$T/walk.err.all" 2>/dev/null
			: >"$T/walk.err"
			echo "$rc $(ms_since "$t") $what" >>"$WL"
		done
	done
}
walker 25 &
WPID=$!
PIDS+=("$WPID")
sleep 3
kill -9 "$(cat "$M1/engine.pid")"
kt=$(date +%s%N)
# a deletion asked while the cluster re-forms: refused, the object stays
# (the newest checkpoint; the engine's retention may remove one first)
# ENOENT means the entry went between listing and rm: list afresh after a
# moment (a listing read within the same second may show it again)
for _ in $(seq 1 20); do
	cid=$(readlink "$MT/jobs/$S/pipelines/1/checkpoints/latest")
	first=$(ls "$MT/jobs/$S/pipelines/1/checkpoints/$cid" | grep -E '\.ser$' | head -1)
	e=$(rm_errno "$MT/jobs/$S/pipelines/1/checkpoints/$cid/$first")
	[ "$e" = ENOENT ] || break
	sleep 0.5
done
case $e in EBUSY | EAGAIN) ok "rm of the running job's checkpoint during the failover: $e" ;;
*) bad "rm of the running job's checkpoint during the failover: $e" ;; esac
check_eq "  and stfs sent no DELETE" 0 \
	"$(awk '$1 == "stfs_backend_remove_requests_total" {print $2}' "$MT/.stfs/stats")"
if [ -e "$N/$S/$first" ]; then
	ok "  the object is still in storage"
else # the engine's own retention (3 kept) replaced it meanwhile
	check "  the object was replaced by the engine's retention" \
		test "$(ls "$N/$S" | grep -cE '\.ser$')" -ge 3
fi
wait "$WPID"
calls=$(wc -l <"$WL")
fails=$(awk '$1 != 0' "$WL" | wc -l)
worst=$(sort -k2,2n "$WL" | tail -1 | cut -d' ' -f2)
echo "    $calls calls during the failover, worst ${worst} ms, failed $fails"
check "walks ran during the failover" test "$calls" -gt 8
check_eq "no walk call failed while the master died" 0 "$fails"
[ "$fails" = 0 ] || head -5 "$T/walk.err.all"
check "every call returned within 2 deadlines (${worst} ms <= $((2 * TMO)))" test "$worst" -le $((2 * TMO))

# ---- the mount follows the surviving member
for _ in $(seq 120); do
	[ "$(eng state "$M2" "$S" 2>/dev/null)" = RUNNING ] && break
	sleep 0.5
done
check_eq "the surviving member runs the job again ($(($(ms_since "$kt") / 1000)) s after the kill)" \
	RUNNING "$(eng state "$M2" "$S")"
for _ in $(seq 40); do
	[ "$(getfattr --only-values -n user.stfs.state "$MT/jobs/$S" 2>/dev/null)" = RUNNING ] && break
	sleep 0.5
done
check_eq "stfs shows it RUNNING through member 2" RUNNING \
	"$(getfattr --only-values -n user.stfs.state "$MT/jobs/$S" 2>/dev/null)"
check "the engine client failed over (stfs_engine_failovers_total > 0)" \
	awk '/^stfs_engine_failovers_total/ { f = ($2 > 0) } END { exit !f }' "$MT/.stfs/stats"
check_eq "the savepoint job is SAVEPOINT_DONE through member 2" SAVEPOINT_DONE \
	"$(getfattr --only-values -n user.stfs.state "$MT/jobs/$SP" 2>/dev/null)"
check_eq "release of its restore point" OK "$(release_errno "$MT/jobs/$SP/restore")"
err=$(rm -r "$MT/jobs/$SP" 2>&1)
check_eq "released rm -r of the SAVEPOINT_DONE job" "" "$err"
check_eq "  its objects are gone from storage" 0 "$(ser "$SP")"
check "  the running job's objects are all still there" test "$(ser "$S")" -gt 0

unmount_stfs "$MT"
eng stop "$M2"
echo "  ($(($(date +%s) - t0)) s)"
finish
