#!/bin/bash
# Safe deletion (README "Deleting safely") on a real mount over the local backend and the
# engine simulator: the rule matrix (13 states x 4 object classes x released or
# not x 5 engine conditions), orphans, a state change between listing and rm,
# releases across remounts and restarts, rm -r, and an ro mount.
#
# Every case asserts the errno rm reports, that the raw object in the
# namespace is gone or still there, that jobs/<id>/deletable predicted it and
# that an audit record with that outcome was written.  The expected results
# come from expect_rm below, written from the contract text alone.
. "$(dirname "$0")/lib.sh"
# a private copy: the test remounts, and the build may replace the binary
cp "$STFS" "$T/stfs-bin" && STFS=$T/stfs-bin

NS=$T/ns
SD=$T/statedir
AUD=$T/audit.log
mkdir -p "$NS" "$SD"

STATES=(INITIALIZING CREATED PENDING SCHEDULED RUNNING FAILING FAILED
	DOING_SAVEPOINT SAVEPOINT_DONE CANCELING CANCELED FINISHED UNKNOWABLE)
CLASSES=(superseded restore savepoint inflight)
ENGINES=(5xx garbage hang down up)
TS1=1700000000000 TS2=1700000001000 TS3=1700000002000

is_end() {
	case $1 in FAILED | SAVEPOINT_DONE | CANCELED | FINISHED | UNKNOWABLE) return 0 ;; esac
	return 1
}

# expect_rm STATE CLASS RELEASED ENGINE -> "OK" or "ERRNO RULE".
# From README "Deleting safely": order R5, R4, R3, R1, R6, R2.  Root, rw mount here, so R5/R4 pass.
# STATE may be ORPHAN (the engine answered it knows no such job and the job is
# older than orphan_grace: dead for R1 and R6) or YOUNG (the engine answered
# so, but the job is younger than orphan_grace: not dead yet, R1).
expect_rm() {
	local st=$1 cls=$2 rel=$3 eng=$4
	[ "$eng" != up ] && { echo "EAGAIN R3"; return; }
	# R1: end state or orphan
	if ! is_end "$st" && [ "$st" != ORPHAN ]; then echo "EBUSY R1"; return; fi
	# R6: .sertmp of a job not in an end state (R1 has let through only end
	# states and orphans, so this cannot refuse; kept as the contract says)
	if [ "$cls" = inflight ] && ! is_end "$st" && [ "$st" != ORPHAN ]; then
		echo "EBUSY R6"
		return
	fi
	# R2: restore points and savepoints need a release, except in FINISHED
	# jobs (the engine deletes their directory); a CANCELED job's may be kept
	# to restore it into a new job (3.x), so it is protected like FAILED
	case $cls in restore | savepoint)
		case $st in FINISHED) ;; *)
			[ "$rel" = 1 ] || { echo "EPERM R2"; return; } ;;
		esac ;;
	esac
	echo OK
}
# has_rel ID: a release of job ID is stored (releases live per namespace,
# state_dir/releases/<namespace hash>/<id>); no_rel ID: none is
has_rel() { compgen -G "$SD/releases/*/$1" >/dev/null; }
no_rel() { ! has_rel "$1"; }
# the deletable line a verdict corresponds to
del_line() { if [ "$1" = OK ]; then echo yes; else echo "no $1"; fi; }
# the "outcome errno rule" audit_last prints for a verdict
aud_line() {
	if [ "$1" = OK ]; then echo 'allowed 0 ""'; else
		set -- $1 # "ERRNO RULE" -> two words
		echo "refused $1 $2"
	fi
}

jid() { printf '90000000000000%02d%02d' "$1" "$2"; } # state index, released
# Real protostuff bytes: a real-layout object whose checkpoint type cannot be
# read counts as protected, so the finished objects are real checkpoints.
FIXP=$ROOT/tests/fixtures/protostuff
CKPT_SER=$FIXP/pipeline_state_checkpoint.ser
# mkjob ID [NS]: real-layout checkpoints (superseded, restore point, in
# flight) and a documented-layout savepoint
mkjob() {
	local ns=${2:-$NS}
	mkdir -p "$ns/$1" "$ns/savepoint/$1/1700/1/task-0"
	cp "$CKPT_SER" "$ns/$1/$TS1-1-1-1.ser"
	cp "$CKPT_SER" "$ns/$1/$TS2-2-1-2.ser"
	head -c 32 /dev/urandom >"$ns/$1/$TS3-3-1-3.sertmp"
	head -c 16 /dev/urandom >"$ns/savepoint/$1/1700/1/task-0/state-data"
}
raw_of() { # raw_of ID CLASS
	case $2 in
	superseded) echo "$NS/$1/$TS1-1-1-1.ser" ;;
	restore) echo "$NS/$1/$TS2-2-1-2.ser" ;;
	inflight) echo "$NS/$1/$TS3-3-1-3.sertmp" ;;
	savepoint) echo "$NS/savepoint/$1/1700/1/task-0/state-data" ;;
	esac
}
mnt_of() { # mnt_of ID CLASS: path under the mount, relative to MOUNT
	case $2 in
	superseded) echo "/jobs/$1/pipelines/1/checkpoints/1/$TS1-1-1-1.ser" ;;
	restore) echo "/jobs/$1/pipelines/1/checkpoints/2/$TS2-2-1-2.ser" ;;
	inflight) echo "/jobs/$1/pipelines/1/checkpoints/3/$TS3-3-1-3.sertmp" ;;
	savepoint) echo "/jobs/$1/savepoints/1700/1/task-0/state-data" ;;
	esac
}
dclass() { # the deletable class name of a CLASS
	case $1 in
	superseded) echo superseded ;; restore) echo restore_points ;;
	savepoint) echo savepoints ;; inflight) echo in_flight ;;
	esac
}

# scenario: 26 engine-known jobs, every state twice (not released / released)
{
	echo '{"jobs":['
	sep=
	for i in "${!STATES[@]}"; do
		for r in 0 1; do
			st=${STATES[$i]}
			fin=null err=null
			is_end "$st" && fin='"2024-01-01 01:00:00"'
			[ "$st" = FAILED ] && err='"boom"'
			printf '%s{"jobId":"%s","jobName":"m_%s_%d","jobStatus":"%s","createTime":"2024-01-01 00:00:00","finishTime":%s,"errorMsg":%s}\n' \
				"$sep" "$(jid "$i" "$r")" "$st" "$r" "$st" "$fin" "$err"
			sep=,
			mkjob "$(jid "$i" "$r")"
		done
	done
	echo ']}'
} >"$T/scen.json"
start_sim "$T/scen.json" a
PORT=$SIM_PORT_a
M=$T/m
# engine_ttl=1000: the listing behind deletable is at most 1 s old, so after
# a change of the engine's condition we wait 1.2 s before reading deletable.
OPTS="checkpoint=file://$NS/,engine=http://127.0.0.1:$PORT,state_dir=$SD,audit_log=$AUD,timeout=500,retries=0,decision_age=0,orphan_grace=10m,engine_ttl=1000,cache_ttl=0,storage_ttl=0"
mount_stfs "$M" -o "$OPTS" || { finish; exit 1; }
SETTLE=1.2
# settle: listings are served stale while one thread lists again
# (stale-while-revalidate), so touch them, give the refresh time (a hung
# engine takes timeout=500 per request), and touch them again.
settle() {
	sleep "$SETTLE"
	ls "$M/jobs" >/dev/null 2>&1
	sleep 1.5
	ls "$M/jobs" >/dev/null 2>&1
	sleep 0.3
}

echo "== setup: releases"
# End-state jobs of the released column are released directly.  A non-end job
# cannot be released (EBUSY), so its "released" variant is released while the
# engine reports it FAILED and then switched to its real state: the contract
# voids a release when the job is seen in a non-end state again, so the
# released variant of every non-end state must behave exactly like the
# not-released one (asserted: restore reads "protected" again, and
# expect_rm is called with RELEASED=0 for it).
declare -A REL # effective release per "i,r"
for i in "${!STATES[@]}"; do
	st=${STATES[$i]}
	id0=$(jid "$i" 0) id1=$(jid "$i" 1)
	REL[$i,0]=0
	if is_end "$st"; then
		check_eq "release $st job" OK "$(release_errno "$M/jobs/$id1/restore")"
		REL[$i,1]=1
	else
		check_eq "release of a $st job refused" EBUSY "$(release_errno "$M/jobs/$id0/restore")"
		sim_ctl "$PORT" POST /__sim/job "{\"jobId\":\"$id1\",\"jobStatus\":\"FAILED\"}" >/dev/null
		REL[$i,1]=0
	fi
done
settle
for i in "${!STATES[@]}"; do
	st=${STATES[$i]}
	is_end "$st" && continue
	id1=$(jid "$i" 1)
	check_eq "release $id1 while FAILED" OK "$(release_errno "$M/jobs/$id1/restore")"
	check_eq "restore reads released" released "$(head -1 "$M/jobs/$id1/restore")"
	sim_ctl "$PORT" POST /__sim/job "{\"jobId\":\"$id1\",\"jobStatus\":\"$st\"}" >/dev/null
done
settle
for i in "${!STATES[@]}"; do
	st=${STATES[$i]}
	for r in 0 1; do
		want=protected
		[ "${REL[$i,$r]}" = 1 ] && want=released
		check_eq "$st/$r: restore reads $want" "$want" "$(head -1 "$M/jobs/$(jid "$i" "$r")/restore")"
	done
	if ! is_end "$st"; then
		check "$st/1: release file voided in state_dir" no_rel "$(jid "$i" 1)"
	fi
done

# run_round ENGINE: every job, every class, in an order that keeps the
# classification stable (the superseded checkpoint before the restore point)
run_round() {
	local eng=$1 i r st id cls exp got d raw before n_case=0 n_fail0=$FAIL
	for i in "${!STATES[@]}"; do
		st=${STATES[$i]}
		for r in 0 1; do
			id=$(jid "$i" "$r")
			d=$T/deletable-$eng-$id
			cat "$M/jobs/$id/deletable" >"$d" 2>&1
			if [ "$eng" != up ]; then
				check_q "$eng $st/$r: deletable first line" "no EAGAIN R3" \
					"$(head -1 "$d" | cut -d' ' -f1-3)"
			fi
			for cls in "${CLASSES[@]}"; do
				n_case=$((n_case + 1))
				exp=$(expect_rm "$st" "$cls" "${REL[$i,$r]}" "$eng")
				raw=$(raw_of "$id" "$cls")
				before=$(audit_count "$AUD" "$(mnt_of "$id" "$cls")")
				got=$(rm_errno "$M$(mnt_of "$id" "$cls")")
				check_q "$eng $st rel=$r $cls: rm" "${exp%% *}" "$got"
				if [ "$exp" = OK ]; then
					check_q "$eng $st rel=$r $cls: raw object gone" gone \
						"$([ -e "$raw" ] && echo present || echo gone)"
				else
					check_q "$eng $st rel=$r $cls: raw object kept" present \
						"$([ -e "$raw" ] && echo present || echo gone)"
				fi
				check_q "$eng $st rel=$r $cls: deletable predicted" \
					"$(del_line "$exp")" "$(deletable_class "$d" "$(dclass "$cls")")"
				check_q "$eng $st rel=$r $cls: one audit line" $((before + 1)) \
					"$(audit_count "$AUD" "$(mnt_of "$id" "$cls")")"
				check_q "$eng $st rel=$r $cls: audit outcome" "$(aud_line "$exp")" \
					"$(audit_last "$AUD" "$(mnt_of "$id" "$cls")")"
			done
		done
	done
	check_eq "round engine=$eng: $n_case cases without a failed check" 0 $((FAIL - n_fail0))
}

echo "== matrix: failing engine rounds first (nothing may be deleted)"
for eng in 5xx garbage hang; do
	sim_ctl "$PORT" POST /__sim/fault "{\"mode\":\"$eng\"}" >/dev/null
	settle
	t0=$(date +%s)
	run_round "$eng"
	echo "    ($eng round: $(($(date +%s) - t0)) s)"
	sim_ctl "$PORT" POST /__sim/fault '{"mode":"none"}' >/dev/null
done
stop_pid "$SIM_PID_a"
settle
run_round down
# the simulator comes back on the same port from the scenario, where every
# job already has its real state
start_sim_port "$T/scen.json" a "$PORT"
check_eq "simulator back on its port" "$PORT" "$SIM_PORT_a"
settle
n_raw=$(find "$NS" -type f | wc -l)
check_eq "failing-engine rounds deleted nothing" $((26 * 4)) "$n_raw"
echo "== matrix: engine up"
run_round up
check "every audit_log line is in .stfs/audit (last 20)" bash -c "
	tail -20 '$AUD' | while IFS= read -r l; do grep -qxF \"\$l\" '$M/.stfs/audit' || exit 1; done"
echo "    matrix: ${#STATES[@]} states x ${#CLASSES[@]} classes x 2 x ${#ENGINES[@]} engines = $((13 * 4 * 2 * 5)) cases"

# ---------------------------------------------------------------------------
echo "== orphans (orphan_grace=10m)"
OY=800000000000000001 OO=800000000000000002 OT=800000000000000003
for id in $OY $OO $OT; do mkjob "$id"; done
rm -f "$NS/$OO/$TS3-3-1-3.sertmp" # an old orphan without .sertmp for rm -r
for id in $OO $OT; do
	find "$NS/$id" "$NS/savepoint/$id" -exec touch -h -d '-1 hour' {} +
done
settle
# A young storage-only job the engine answered it does not know: the engine
# was asked and did answer, so it is R1 (not dead yet), not R3.
p=$(mnt_of $OY restore)
exp=$(expect_rm YOUNG restore 0 up)
check_eq "young orphan: rm restore point" "${exp%% *}" "$(rm_errno "$M$p")"
check "young orphan: restore point kept" test -e "$(raw_of $OY restore)"
check_eq "young orphan: audited R1 with state UNKNOWN" "refused $exp UNKNOWN" \
	"$(audit_last "$AUD" "$p") $(grep -F " path=$p " "$AUD" | tail -1 | sed -n 's/.* state=\([A-Z_]*\).*/\1/p')"
check_eq "young orphan: deletable" "no $exp" "$(head -1 "$M/jobs/$OY/deletable" | cut -d' ' -f1-3)"
check_eq "young orphan: release refused" EBUSY "$(release_errno "$M/jobs/$OY/restore")"
# the old orphan, class by class, against expect_rm's ORPHAN branch
for cls in restore savepoint superseded; do
	p=$(mnt_of $OO $cls)
	exp=$(expect_rm ORPHAN $cls 0 up)
	check_eq "old orphan: deletable $cls" "$(del_line "$exp")" \
		"$(deletable_class "$M/jobs/$OO/deletable" "$(dclass $cls)")"
	check_eq "old orphan: rm $cls" "${exp%% *}" "$(rm_errno "$M$p")"
	if [ "$exp" = OK ]; then
		check "old orphan: $cls gone" test ! -e "$(raw_of $OO $cls)"
	else
		check "old orphan: $cls kept" test -e "$(raw_of $OO $cls)"
		check_eq "old orphan: $cls audited with state ORPHAN" "refused $exp ORPHAN" \
			"$(audit_last "$AUD" "$p") $(grep -F " path=$p " "$AUD" | tail -1 | sed -n 's/.* state=\([A-Z_]*\).*/\1/p')"
	fi
done
check_eq "old orphan: release" OK "$(release_errno "$M/jobs/$OO/restore")"
check "old orphan: rm -r after release exits 0" rm -r "$M/jobs/$OO"
check_eq "old orphan: nothing left in storage" "" \
	"$(ls -A "$NS/$OO" "$NS/savepoint/$OO" 2>/dev/null)"
settle
check "old orphan: left jobs/" bash -c "! ls '$M/jobs' | grep -qx $OO"
# R6 applies to an orphan's .sertmp: R1 names end states and orphans apart,
# and R6 protects the .sertmp of "a job that is not in an end state".
# R6 protects the .sertmp of a job "not in an end state".  An orphan counts
# as dead (R1 treats it as terminal, and its age already includes the
# .sertmp's mtime, so no write is in flight): its leftover .sertmp goes.
exp=$(expect_rm ORPHAN inflight 0 up)
check_eq "expect_rm: an orphan's .sertmp may go" OK "$exp"
check_eq "old orphan: rm .sertmp is allowed (orphans are dead for R6)" "$exp" \
	"$(rm_errno "$M$(mnt_of $OT inflight)")"
check_eq "old orphan: .sertmp deletion audited" 'allowed 0 ""' \
	"$(audit_last "$AUD" "$(mnt_of $OT inflight)")"
check "old orphan: .sertmp really gone" test ! -e "$(raw_of $OT inflight)"

# ---------------------------------------------------------------------------
# A second mount with the default decision_age and caches: the listing says
# FAILED, the engine says RUNNING by the time of rm.  Every job of these parts
# is in storage and in the engine before the mount (storage listings are
# reused for storage_ttl, 5 s by default).
newjob() { # newjob ID STATE: storage and an engine entry
	mkjob "$1"
	sim_ctl "$PORT" POST /__sim/job "{\"jobId\":\"$1\",\"jobStatus\":\"$2\"}" >/dev/null
}
raw_count() { find "$NS/$1" "$NS/savepoint/$1" -type f 2>/dev/null | wc -l; }
C1=700000000000000001 D1=700000000000000002 D2=700000000000000003
E1=700000000000000004 E2=700000000000000005 E3=700000000000000006
F1=700000000000000007 G1=700000000000000008
sim_ctl "$PORT" POST /__sim/job "{\"jobId\":\"$G1\",\"jobStatus\":\"RUNNING\"}" >/dev/null
for id in $C1 $D1 $D2 $E1 $E2 $F1; do newjob $id FAILED; done
newjob $E3 RUNNING
M2=$T/m2
AUD2=$T/audit2.log
OPTS2="checkpoint=file://$NS/,engine=http://127.0.0.1:$PORT,state_dir=$SD,audit_log=$AUD2,timeout=2000,orphan_grace=10m"
mount_stfs "$M2" -o "$OPTS2" || { finish; exit 1; }

echo "== state change between listing and rm"
ls -lR "$M2/jobs/$C1" >/dev/null
check_eq "listed as FAILED" FAILED "$(getfattr --only-values -n user.stfs.state "$M2/jobs/$C1" 2>/dev/null)"
sim_ctl "$PORT" POST /__sim/job "{\"jobId\":\"$C1\",\"jobStatus\":\"RUNNING\"}" >/dev/null
check_eq "restarted job: rm superseded" EBUSY "$(rm_errno "$M2$(mnt_of $C1 superseded)")"
check_eq "restarted job: rm .sertmp" EBUSY "$(rm_errno "$M2$(mnt_of $C1 inflight)")"
check_eq "restarted job: audited R1 RUNNING" "refused EBUSY R1" "$(audit_last "$AUD2" "$(mnt_of $C1 superseded)")"
check_eq "restarted job: nothing lost" 4 "$(raw_count $C1)"

echo "== releases across remount and restart"
check_eq "release D1" OK "$(release_errno "$M2/jobs/$D1/restore")"
check_eq "release D2 (setfattr)" OK "$(setfattr -n user.stfs.restore -v release "$M2/jobs/$D2" 2>&1 | errno_of_msg)"
check "release stored in state_dir" has_rel "$D1"
check_eq "release audited" 1 "$(grep -F "$D1" "$AUD2" | grep -c 'op=release')"
unmount_stfs "$M2"
mount_stfs "$M2" -o "$OPTS2" || { finish; exit 1; }
check_eq "after remount: restore reads released" released "$(head -1 "$M2/jobs/$D1/restore")"
check_eq "after remount: rm restore point" OK "$(rm_errno "$M2$(mnt_of $D1 restore)")"
check "after remount: restore point gone" test ! -e "$(raw_of $D1 restore)"
sim_ctl "$PORT" POST /__sim/job "{\"jobId\":\"$D2\",\"jobStatus\":\"RUNNING\"}" >/dev/null
check_eq "restarted D2: rm refused" EBUSY "$(rm_errno "$M2$(mnt_of $D2 superseded)")"
sim_ctl "$PORT" POST /__sim/job "{\"jobId\":\"$D2\",\"jobStatus\":\"FAILED\"}" >/dev/null
sleep 2.2 # decision_age: the RUNNING answer may be reused for 2 s
check_eq "D2 failed again: restore reads protected" protected "$(head -1 "$M2/jobs/$D2/restore")"
check_eq "D2 failed again: rm restore point" EPERM "$(rm_errno "$M2$(mnt_of $D2 restore)")"
check "D2: restore point kept" test -e "$(raw_of $D2 restore)"
check "D2: release file gone" no_rel "$D2"
check_eq "protect undoes a release" OK "$(release_errno "$M2/jobs/$D1/restore" protect)"
check_eq "after protect: restore reads protected" protected "$(head -1 "$M2/jobs/$D1/restore")"

# A release decided on the engine's fresh FAILED must not be voided by an
# older listing that still says RUNNING (the job was not seen in a non-end
# state *again*: the engine never reported one after the release).
check "G1 listed as RUNNING" grep -q '^state *RUNNING' "$M2/jobs/$G1/status"
sim_ctl "$PORT" POST /__sim/job "{\"jobId\":\"$G1\",\"jobStatus\":\"FAILED\"}" >/dev/null
check_eq "G1 released right after it failed" OK "$(release_errno "$M2/jobs/$G1/restore")"
# A listing fetched before the release must not void it (only an answer
# newer than the release may).
check_eq "G1: release not voided by a stale listing" released "$(head -1 "$M2/jobs/$G1/restore")"
check "G1: release still stored" has_rel "$G1"

echo "== rm -r"
check_eq "release E1" OK "$(release_errno "$M2/jobs/$E1/restore")"
check "rm -r of a released FAILED job exits 0" rm -r "$M2/jobs/$E1"
check_eq "E1: every storage object removed" 0 "$(raw_count $E1)"
check "E1: raw <ns>/<id>/ gone" test ! -e "$NS/$E1"
check "E1: raw savepoint/<id>/ gone" test ! -e "$NS/savepoint/$E1"
sleep 5.2 # storage_ttl
ls "$M2/jobs" >/dev/null
sleep 0.5
check "E1: still listed (engine remembers it)" test -d "$M2/jobs/$E1"
check_eq "E1: no checkpoints left" "" \
	"$(find "$M2/jobs/$E1/pipelines" "$M2/jobs/$E1/savepoints" -path '*/checkpoints/*' -o -path '*/savepoints/*' 2>/dev/null)"
check "E1: pseudo-files still there" test -f "$M2/jobs/$E1/status"
out=$(rm -r "$M2/jobs/$E2" 2>&1)
check "rm -r of a protected FAILED job exits non-zero" test $? != 0
check "E2: superseded gone" test ! -e "$(raw_of $E2 superseded)"
check "E2: restore point kept" test -e "$(raw_of $E2 restore)"
check "E2: savepoint kept" test -e "$(raw_of $E2 savepoint)"
check "E2: refusals were EPERM" bash -c "echo '$out' | grep -q 'Operation not permitted'"
out=$(rm -r "$M2/jobs/$E3" 2>&1)
check "rm -r of a RUNNING job exits non-zero" test $? != 0
check_eq "E3: every failure is EBUSY" "" \
	"$(echo "$out" | grep -v 'Device or resource busy')"
check "E3: something was refused" test -n "$out"
check_eq "E3: nothing touched" 4 "$(raw_count $E3)"
check_eq "E3: no allowed audit line" 0 "$(grep -F "/jobs/$E3/" "$AUD2" | grep -c outcome=allowed)"

echo "== ro mount"
M3=$T/m3
AUD3=$T/audit3.log
check_eq "release F1 on the rw mount" OK "$(release_errno "$M2/jobs/$F1/restore")"
mount_stfs "$M3" -o "checkpoint=file://$NS/,engine=http://127.0.0.1:$PORT,state_dir=$SD,audit_log=$AUD3,timeout=2000,ro" || { finish; exit 1; }
for cls in "${CLASSES[@]}"; do
	check_eq "ro: rm $cls" EROFS "$(rm_errno "$M3$(mnt_of $F1 "$cls")")"
	check_eq "ro: rm $cls audited R5" "refused EROFS R5" "$(audit_last "$AUD3" "$(mnt_of $F1 "$cls")")"
done
check_eq "ro: release" EROFS "$(release_errno "$M3/jobs/$F1/restore")"
check_eq "ro: protect" EROFS "$(release_errno "$M3/jobs/$F1/restore" protect)"
check_eq "ro: setfattr release" EROFS "$(setfattr -n user.stfs.restore -v release "$M3/jobs/$E2" 2>&1 | errno_of_msg)"
check_eq "ro: deletable says EROFS R5" "no EROFS R5" "$(head -1 "$M3/jobs/$F1/deletable" | cut -d' ' -f1-3)"
rm -r "$M3/jobs/$F1" 2>/dev/null
check_eq "ro: rm -r touched nothing" 4 "$(raw_count $F1)"
check "ro: release still stored" has_rel "$F1"


# ---------------------------------------------------------------------------
# Holes of issue 7 (README "Deleting"), on the first mount (decision_age=0,
# storage_ttl=0): each case checks the raw object in the namespace.
rpath() { echo "/jobs/$1/pipelines/${3:-1}/checkpoints/$4/$2"; } # ID FILE PIPE CID
# mkreal ID [NS]: three real checkpoints of pipeline 1, the newest the
# restore point
mkreal() {
	mkdir -p "${2:-$NS}/$1"
	for f in $TS1-1-1-1 $TS2-2-1-2 $TS3-3-1-3; do cp "$CKPT_SER" "${2:-$NS}/$1/$f.ser"; done
}
# failed_job ID: mkreal ID, the engine reports it FAILED, the mount has seen it
failed_job() {
	mkreal "$1"
	sim_ctl "$PORT" POST /__sim/job "{\"jobId\":\"$1\",\"jobStatus\":\"FAILED\"}" >/dev/null
	settle
}

echo "== the session's ghost does not decide (release, rm, protect, rm)"
GH=600000000000000001
failed_job $GH
check_eq "ghost: release" OK "$(release_errno "$M/jobs/$GH/restore")"
check_eq "ghost: rm the restore point" OK "$(rm_errno "$M$(rpath $GH $TS3-3-1-3.ser 1 3)")"
check "ghost: restore point gone" test ! -e "$NS/$GH/$TS3-3-1-3.ser"
check_eq "ghost: protect" OK "$(release_errno "$M/jobs/$GH/restore" protect)"
check "ghost: restore names the new restore point" grep -q "$GH/$TS2-2-1-2.ser" "$M/jobs/$GH/restore"
check_eq "ghost: deletable protects it" "no EPERM R2" "$(deletable_class "$M/jobs/$GH/deletable" restore_points)"
check_eq "ghost: rm the new restore point" EPERM "$(rm_errno "$M$(rpath $GH $TS2-2-1-2.ser 1 2)")"
check "ghost: new restore point kept" test -e "$NS/$GH/$TS2-2-1-2.ser"
# a file written after the session began is decided, not ENOENT
cp "$CKPT_SER" "$NS/$GH/1699999990000-9-1-5.ser"
ls "$M/jobs/$GH/pipelines/1/checkpoints" >/dev/null # listed once, as users do
sleep 0.3
ls "$M/jobs/$GH/pipelines/1/checkpoints" >/dev/null
check_eq "ghost: rm a file created during the session" OK \
	"$(rm_errno "$M$(rpath $GH 1699999990000-9-1-5.ser 1 5)")"
check "ghost: that file gone" test ! -e "$NS/$GH/1699999990000-9-1-5.ser"

echo "== a release covers only the run it released"
RR=600000000000000002
failed_job $RR
check_eq "resume: release the FAILED job" OK "$(release_errno "$M/jobs/$RR/restore")"
sleep 1.1 # the engine's finishTime has a resolution of one second
# while stfs is unmounted, the engine resumes it (-r), it checkpoints and
# fails again
fusermount3 -u "$M" && sleep 0.5
sim_ctl "$PORT" POST /__sim/job "{\"jobId\":\"$RR\",\"jobStatus\":\"RUNNING\"}" >/dev/null
TS4=1700000003000
cp "$CKPT_SER" "$NS/$RR/$TS4-4-1-4.ser"
sim_ctl "$PORT" POST /__sim/job "{\"jobId\":\"$RR\",\"jobStatus\":\"FAILED\"}" >/dev/null
mount_stfs "$M" -o "$OPTS" || { finish; exit 1; }
out=$(rm -r "$M/jobs/$RR" 2>&1)
check "resume: rm -r exits non-zero" test -n "$out"
check "resume: the new run's restore point kept" test -e "$NS/$RR/$TS4-4-1-4.ser"
check_eq "resume: restore reads protected" protected "$(head -1 "$M/jobs/$RR/restore")"
check "resume: the release is void" no_rel "$RR"

echo "== releases are per namespace (a staging clone sharing state_dir)"
NS2=$T/ns2
SC=600000000000000003 LG=600000000000000006
mkreal $SC
mkreal $SC "$NS2"
mkreal $LG "$NS2"
for id in $SC $LG; do
	sim_ctl "$PORT" POST /__sim/job "{\"jobId\":\"$id\",\"jobStatus\":\"FAILED\"}" >/dev/null
done
settle
check_eq "namespace: release on prod" OK "$(release_errno "$M/jobs/$SC/restore")"
check "namespace: the release lives in a per-namespace directory" has_rel "$SC"
check "namespace: not in the unscoped directory" test ! -e "$SD/releases/$SC"
# a release of an older stfs, unscoped: it cannot tell its cluster
echo "released 2025-01-01T00:00:00.000Z uid=0" >"$SD/releases/$LG"
M4=$T/m4
AUD4=$T/audit4.log
mount_stfs "$M4" -o "checkpoint=file://$NS2/,engine=http://127.0.0.1:$PORT,state_dir=$SD,audit_log=$AUD4,timeout=2000,decision_age=0,storage_ttl=0,cache_ttl=0" || { finish; exit 1; }
check_eq "namespace: the clone reads protected" protected "$(head -1 "$M4/jobs/$SC/restore")"
check_eq "namespace: rm on the clone refused" EPERM "$(rm_errno "$M4$(rpath $SC $TS3-3-1-3.ser 1 3)")"
check "namespace: the clone's restore point kept" test -e "$NS2/$SC/$TS3-3-1-3.ser"
check_eq "namespace: an unscoped old release is ignored" EPERM "$(rm_errno "$M4$(rpath $LG $TS3-3-1-3.ser 1 3)")"
check "namespace: its restore point kept" test -e "$NS2/$LG/$TS3-3-1-3.ser"
check_eq "namespace: prod still released" OK "$(rm_errno "$M$(rpath $SC $TS3-3-1-3.ser 1 3)")"
check "namespace: prod's restore point gone" test ! -e "$NS/$SC/$TS3-3-1-3.ser"
unmount_stfs "$M4"

echo "== mixed layouts: each layout keeps its restore point"
MX=600000000000000004
mkdir -p "$NS/$MX/1/7/task-0" "$NS/$MX/1/8/task-0"
cp "$CKPT_SER" "$NS/$MX/$TS1-1-1-1.ser"
head -c 16 /dev/urandom >"$NS/$MX/1/7/task-0/state-data"
head -c 16 /dev/urandom >"$NS/$MX/1/8/task-0/state-data"
sim_ctl "$PORT" POST /__sim/job "{\"jobId\":\"$MX\",\"jobStatus\":\"FAILED\"}" >/dev/null
settle
check_eq "mixed: deletable restore_points" "no EPERM R2" "$(deletable_class "$M/jobs/$MX/deletable" restore_points)"
check_eq "mixed: rm the documented restore point" EPERM \
	"$(rm_errno "$M/jobs/$MX/pipelines/1/checkpoints/8/task-0/state-data")"
check "mixed: documented restore point kept" test -e "$NS/$MX/1/8/task-0/state-data"
check_eq "mixed: rm the older documented checkpoint" OK \
	"$(rm_errno "$M/jobs/$MX/pipelines/1/checkpoints/7/task-0/state-data")"
check "mixed: older documented checkpoint gone" test ! -e "$NS/$MX/1/7/task-0/state-data"
check_eq "mixed: rm the real restore point" EPERM "$(rm_errno "$M$(rpath $MX $TS1-1-1-1.ser 1 1)")"
check "mixed: real restore point kept" test -e "$NS/$MX/$TS1-1-1-1.ser"

echo "== deletable and rm agree when the list endpoints fail"
LF=600000000000000005
failed_job $LF
sim_ctl "$PORT" POST /__sim/fault '{"mode":"5xx","paths":["/running-jobs","/finished-jobs"]}' >/dev/null
settle
d=$T/deletable-listfail
cat "$M/jobs/$LF/deletable" >"$d"
for f in "superseded $TS1-1-1-1.ser 1" "restore_points $TS3-3-1-3.ser 3"; do
	set -- $f
	got=$(rm_errno "$M$(rpath $LF $2 1 $3)")
	pred=$(deletable_class "$d" "$1")
	check_eq "list endpoints down: deletable $1 predicted rm ($got)" \
		"$([ "$got" = OK ] && echo yes || echo "no $got")" "$(echo "$pred" | cut -d' ' -f1-2)"
	check_eq "list endpoints down: raw $2 matches rm" \
		"$([ "$got" = OK ] && echo gone || echo present)" \
		"$([ -e "$NS/$LF/$2" ] && echo present || echo gone)"
done
check_eq "list endpoints down: restore point refused R2" "no EPERM R2" "$(deletable_class "$d" restore_points)"
sim_ctl "$PORT" POST /__sim/fault '{"mode":"none"}' >/dev/null

echo "== real-layout savepoints (real protostuff bytes)"
# A savepoint in the real layout is a .ser whose header says SAVEPOINT
# (tests/fixtures/protostuff/): R2 protects it in a FAILED job until the job
# is released, and not in a FINISHED one (README "Deleting safely").
SP_SER=$FIXP/pipeline_state_savepoint.ser
SVF=600000000000000007 SVD=600000000000000008
for id in $SVF $SVD; do
	mkdir -p "$NS/$id"
	cp "$CKPT_SER" "$NS/$id/$TS1-1-1-1.ser" # superseded checkpoint
	cp "$SP_SER" "$NS/$id/$TS2-2-1-2.ser"   # the savepoint
	cp "$CKPT_SER" "$NS/$id/$TS3-3-1-3.ser" # the restore point
done
sim_ctl "$PORT" POST /__sim/job "{\"jobId\":\"$SVF\",\"jobStatus\":\"FAILED\"}" >/dev/null
sim_ctl "$PORT" POST /__sim/job "{\"jobId\":\"$SVD\",\"jobStatus\":\"FINISHED\"}" >/dev/null
settle
check "savepoint: listed on the mount" test -f "$M$(rpath $SVF $TS2-2-1-2.ser 1 2)"
check_eq "savepoint of a FAILED job: deletable savepoints" "no EPERM R2" \
	"$(deletable_class "$M/jobs/$SVF/deletable" savepoints)"
check_eq "savepoint of a FAILED job: rm refused (R2)" EPERM \
	"$(rm_errno "$M$(rpath $SVF $TS2-2-1-2.ser 1 2)")"
check "savepoint of a FAILED job: raw object kept" test -e "$NS/$SVF/$TS2-2-1-2.ser"
check_eq "savepoint of a FAILED job: audited R2" "refused EPERM R2" \
	"$(audit_last "$AUD" "$(rpath $SVF $TS2-2-1-2.ser 1 2)")"
check_eq "savepoint of a FAILED job: the checkpoint beside it goes" OK \
	"$(rm_errno "$M$(rpath $SVF $TS1-1-1-1.ser 1 1)")"
check "savepoint of a FAILED job: that checkpoint gone" test ! -e "$NS/$SVF/$TS1-1-1-1.ser"
check_eq "savepoint of a FINISHED job: rm allowed" OK \
	"$(rm_errno "$M$(rpath $SVD $TS2-2-1-2.ser 1 2)")"
check "savepoint of a FINISHED job: raw object gone" test ! -e "$NS/$SVD/$TS2-2-1-2.ser"
check_eq "savepoint of a FINISHED job: audited allowed" 'allowed 0 ""' \
	"$(audit_last "$AUD" "$(rpath $SVD $TS2-2-1-2.ser 1 2)")"
check_eq "savepoint: release the FAILED job" OK "$(release_errno "$M/jobs/$SVF/restore")"
check_eq "savepoint of a released FAILED job: rm allowed" OK \
	"$(rm_errno "$M$(rpath $SVF $TS2-2-1-2.ser 1 2)")"
check "savepoint of a released FAILED job: raw object gone" test ! -e "$NS/$SVF/$TS2-2-1-2.ser"

finish
