#!/bin/bash
# stfs on a REAL Apache SeaTunnel Zeta engine (README "The real engine in the
# tests"): two nodes started by scripts/engine.sh write checkpoints and IMap
# files while stfs is mounted on them; checked with ls, du, tar, rm, getfattr.
#   A: IMap persistence on (FileMapStoreFactory, file:///)
#   B: IMap persistence off, as the shipped hazelcast.yaml: Hadoop's
#      checksum filesystem then writes .<name>.crc sidecars
# Nothing is skipped: when Maven or the engine cannot start, the suite fails.
. "$(dirname "$0")/lib.sh"
t0=$(date +%s)
V=${STFS_ENGINE_VERSION:-2.3.8}
echo "  engine $V, java ${STFS_ENGINE_JAVA:-OpenJDK 17}"

if ! eng build; then
	bad "Maven could not fetch or build SeaTunnel $V (see build/engine/$V/mvn.log)"
	finish
	exit 1
fi
A=$T/a B=$T/b
NA=$A/checkpoint NB=$B/checkpoint
start_engine "$A" || {
	bad "the engine (IMap on) did not start: $(tail -3 "$A/engine.log")"
	finish
	exit 1
}
STFS_ENGINE_JVM_OPTS=-Dstfs.imap=false start_engine "$B" || {
	bad "the engine (IMap off) did not start: $(tail -3 "$B/engine.log")"
	finish
	exit 1
}
RA=$(eng rest "$A") RB=$(eng rest "$B")
ok "two real Zeta nodes up ($(($(date +%s) - t0)) s, REST $RA)"

# newest real-layout object of a job dir, by write timestamp (the restore
# point the engine loads), and the checkpoint id in a name
newest() { ls "$1" 2>/dev/null | grep -E '^[0-9]+-[0-9]+-[0-9]+-[0-9]+\.ser$' | sort -t- -k1,1n | tail -1; }
cid_of() { echo "$1" | sed -E 's/^\.?[0-9]+-[0-9]+-[0-9]+-([0-9]+)\..*/\1/'; }
pid_of() { echo "$1" | sed -E 's/^\.?[0-9]+-[0-9]+-([0-9]+)-.*/\1/'; }
raw_bytes() { find "$1" -type f -printf '%s\n' 2>/dev/null | awk '{s+=$1} END {print s+0}'; }
# wait_file DIR PRED-REGEX SECONDS: first .ser name matching the regex
wait_new() { # wait_new DIR MIN_CID SECONDS: newest .ser with id > MIN_CID
	local end=$(($(date +%s) + $3)) n
	while [ "$(date +%s)" -lt "$end" ]; do
		n=$(ls "$1" 2>/dev/null | grep -E '\.ser$' | sort -t- -k4,4n | head -50 |
			awk -F- -v m="$2" '{c=$4; sub(/\.ser$/,"",c); if (c+0 > m+0) {print; exit}}')
		[ -n "$n" ] && { echo "$n"; return 0; }
		sleep 0.2
	done
	return 1
}
engine_ids() { # engine_ids REST: every job id in /running-jobs and /finished-jobs/
	{ curl -sS -m 10 "$1/running-jobs"; echo; curl -sS -m 10 "$1/finished-jobs/"; echo; } |
		python3 -c 'import json,sys
for l in sys.stdin:
    l=l.strip()
    if l:
        for j in json.loads(l): print(j["jobId"])' | sort -u
}

# ---- the cluster state, made through REST only
S=$(eng submit "$A" stream s) P2=$(eng submit "$A" stream2 two)
SP=$(eng submit "$A" stream sp) C=$(eng submit "$A" stream c)
F=$(eng submit "$A" fail:6 f) BT=$(eng submit "$A" batch b)
FB=$(eng submit "$B" fail:6 fb) SB=$(eng submit "$B" stream sb)
[ -n "$S" ] && [ -n "$P2" ] && [ -n "$SP" ] && [ -n "$C" ] && [ -n "$F" ] &&
	[ -n "$BT" ] && [ -n "$FB" ] && [ -n "$SB" ] || {
	bad "submitting the jobs failed"
	finish
	exit 1
}
sleep 4
eng stop-job "$A" "$SP" savepoint >/dev/null
eng stop-job "$A" "$C" >/dev/null
check "stop with savepoint: SAVEPOINT_DONE" eng wait-state "$A" "$SP" SAVEPOINT_DONE 60
SPFILE=$(newest "$NA/$SP") SPCID=$(cid_of "$SPFILE")
check "cancel: CANCELED" eng wait-state "$A" "$C" CANCELED 30
check "the engine deleted the cancelled job's directory" test ! -e "$NA/$C"
check "batch job: FINISHED" eng wait-state "$A" "$BT" FINISHED 60
# restored from its savepoint: the directory then holds the savepoint and newer checkpoints
eng submit "$A" stream sp "$SP" savepoint >/dev/null
check "savepoint job restored: RUNNING" eng wait-state "$A" "$SP" RUNNING 30
sp_next=$(wait_new "$NA/$SP" "$SPCID" 30)
check_eq "the restored run's first checkpoint follows its savepoint" "$((SPCID + 1))" "$(cid_of "$sp_next")"
check "failing job: FAILED after some checkpoints" eng wait-state "$A" "$F" FAILED 120
check "a FAILED job keeps its checkpoints" test -n "$(newest "$NA/$F")"

MA=$T/ma MB=$T/mb
mount_stfs "$MA" -o "checkpoint=file://$NA/,engine=$RA,imap=file://$A/imap/,state_dir=$T/sda,timeout=5000" ||
	{ finish; exit 1; }
mount_stfs "$MB" -o "checkpoint=file://$NB/,engine=$RB,imap=file://$B/imap/,state_dir=$T/sdb,timeout=5000" ||
	{ finish; exit 1; }

# ---- the tree is storage ∪ engine; states equal /job-info
want=$({ ls "$NA" | grep -E '^[0-9]+$'; engine_ids "$RA"; } | sort -u)
check_eq "jobs/ is storage ∪ engine ($(echo "$want" | wc -l) jobs)" "$want" "$(ls "$MA/jobs" | sort)"
errs=0
for id in $want; do
	st=$(eng state "$A" "$id")
	x=$(getfattr --only-values -n user.stfs.state "$MA/jobs/$id" 2>/dev/null)
	[ "$x" == "$st" ] || { echo "    $id: stfs $x, /job-info $st"; errs=$((errs + 1)); }
done
check_eq "every job's state is /job-info's" 0 "$errs"
check "the two-pipeline job shows pipelines 1 and 2" test -d "$MA/jobs/$P2/pipelines/1" -a -d "$MA/jobs/$P2/pipelines/2"

# ---- du and tar of the FAILED job against the raw bytes
check_eq "du -sb of the FAILED job = raw bytes" "$(raw_bytes "$NA/$F")" \
	"$(du -sb --exclude=latest --exclude=status --exclude=info "$MA/jobs/$F/pipelines" | cut -f1)"
mkdir -p "$T/fx"
(cd "$MA/jobs/$F" && tar -cf "$T/f.tar" pipelines) && tar -C "$T/fx" -xf "$T/f.tar"
n=0 same=0
for o in "$NA/$F"/*; do
	n=$((n + 1))
	got=$(find "$T/fx" -type f -name "$(basename "$o")" | head -1)
	[ -n "$got" ] && cmp -s "$o" "$got" && same=$((same + 1))
done
in_tar=$(find "$T/fx" -type f ! -name status ! -name info | wc -l)
check_eq "tar of the FAILED job: every object byte-identical to storage" "$n $n" "$same $in_tar"

# ---- real savepoints recognised and linked
check_eq "savepoints/ links the real savepoint" "../pipelines/1/checkpoints/$SPCID" \
	"$(readlink "$MA/jobs/$SP/savepoints/1-$SPCID")"
check_eq "only the savepoint is linked" 1 "$(ls "$MA/jobs/$SP/savepoints" | wc -l)"
check_eq "its checkpoint_type is savepoint" savepoint \
	"$(getfattr --only-values -n user.stfs.checkpoint_type "$MA/jobs/$SP/pipelines/1/checkpoints/$SPCID/$SPFILE")"

# ---- latest names what the engine loads
RP=$(newest "$NA/$F") RPCID=$(cid_of "$RP")
check_eq "latest of the FAILED job is its newest write" "$RPCID" \
	"$(readlink "$MA/jobs/$F/pipelines/1/checkpoints/latest")"

# ---- info of real engine-written checkpoints: parses, ids match the path
IF=$MA/jobs/$F/pipelines/1/checkpoints/$RPCID/info
field() { sed -n "s/^$2  *//p" "$1"; }
check_eq "info of the FAILED job's restore point: ids of its path" "$F 1 $RPCID" \
	"$(field "$IF" job) $(field "$IF" pipeline) $(field "$IF" checkpoint)"
check_eq "... a checkpoint, the restore point, of its object" "checkpoint yes $RP" \
	"$(field "$IF" type) $(field "$IF" restore_point) $(field "$IF" object)"
check "... completed after it was triggered, with actions and acknowledged subtasks" \
	test "$(field "$IF" duration_ms)" -ge 0 -a "$(field "$IF" actions)" -ge 1 -a "$(field "$IF" acknowledged)" -ge 1
check_eq "... its size is exact" "$(stat -c %s "$IF")" "$(wc -c <"$IF")"
ISP=$MA/jobs/$SP/pipelines/1/checkpoints/$SPCID/info
check_eq "info of the real savepoint: savepoint, ids of its path" "savepoint $SP $SPCID" \
	"$(field "$ISP" type) $(field "$ISP" job) $(field "$ISP" checkpoint)"

# ---- deletion against reality
# the savepoint of the restored job stays while it runs (its new run prunes
# only its own checkpoints)
check_eq "rm of a running job's savepoint: EBUSY" EBUSY \
	"$(rm_errno "$MA/jobs/$SP/pipelines/1/checkpoints/$SPCID/$SPFILE")"
check "... and the object is still in storage" test -f "$NA/$SP/$SPFILE"
err=$(rm -r "$MA/jobs/$S" 2>&1)
check "rm -r of a checkpointing job: EBUSY" bash -c "echo '$err' | grep -q 'Device or resource busy'"
check "... and its storage is still there" test -n "$(newest "$NA/$S")"
err=$(rm -r "$MA/jobs/$F/pipelines" 2>&1)
check "rm -r of an unreleased FAILED job refuses the restore point (EPERM)" \
	bash -c "echo '$err' | grep -q 'Operation not permitted'"
check_eq "superseded checkpoints gone, the restore point stays" "$RP" "$(ls "$NA/$F")"
eng submit "$A" fail:8 f "$F" savepoint >/dev/null
check "the FAILED job still restores: RUNNING" eng wait-state "$A" "$F" RUNNING 30
f_next=$(wait_new "$NA/$F" "$RPCID" 30)
check_eq "the resumed run's first checkpoint id follows latest's" "$((RPCID + 1))" "$(cid_of "$f_next")"
sleep 2.5 # decision_age: the answer of the rm -r above is not reused
# EAGAIN: the engine, restoring the job on a loaded box, did not answer
# within the 5 s deadline (a refusal like EBUSY: nothing deleted); asked again
for _ in 1 2 3; do
	e=$(rm_errno "$MA/jobs/$F/pipelines/1/checkpoints/$RPCID/$RP")
	[ "$e" = EAGAIN ] || break
	sleep 1
done
check_eq "rm of the restored job's restore point: EBUSY (running again)" EBUSY "$e"

# ---- B: .crc sidecars, shown, counted and removed with their objects
check "job on B: FAILED" eng wait-state "$B" "$FB" FAILED 120
ncrc=$(ls -A "$NB/$FB" | grep -c '^\..*\.ser\.crc$')
check "the engine wrote .crc sidecars on file:/// ($ncrc)" test "$ncrc" -gt 0
# the mount relists storage after storage_ttl: wait (up to 15 s) until the
# engine's last writes of the ended job are in the tree
for _ in $(seq 30); do
	nraw=$(find "$NB/$FB" -type f | wc -l)
	nmnt=$(find "$MB/jobs/$FB/pipelines" -type f ! -name status ! -name info | wc -l)
	[ "$nraw" = "$nmnt" ] && break
	sleep 0.5
done
check_eq "every sidecar is shown beside its object" "$nraw" "$nmnt"
check "no sidecar is left unrecognised (no other/)" test ! -e "$MB/jobs/$FB/other"
check "status counts them" grep -q "^storage *$nraw objects" "$MB/jobs/$FB/status"
check_eq "du -sb with sidecars = raw bytes" "$(raw_bytes "$NB/$FB")" \
	"$(du -sb --exclude=latest --exclude=status --exclude=info "$MB/jobs/$FB/pipelines" | cut -f1)"
RPB=$(newest "$NB/$FB")
rm -r "$MB/jobs/$FB/pipelines" 2>/dev/null
check_eq "rm -r unreleased: the restore point and its sidecar stay" "$(printf '.%s.crc\n%s' "$RPB" "$RPB")" \
	"$(ls -A "$NB/$FB" | sort)"
check_eq "release" OK "$(release_errno "$MB/jobs/$FB/restore")"
rm -r "$MB/jobs/$FB" 2>"$T/rmb.err"
check "rm -r of the released job exits 0" test ! -s "$T/rmb.err"
check_eq "... and leaves no file behind" 0 "$(find "$NB/$FB" -type f 2>/dev/null | wc -l)"

# ---- released and removed: the restore then runs as without state
check "the restored FAILED job fails again" eng wait-state "$A" "$F" FAILED 120
check_eq "release the FAILED job" OK "$(release_errno "$MA/jobs/$F/restore")"
rm -r "$MA/jobs/$F" 2>"$T/rma.err"
check "rm -r of the released FAILED job exits 0" test ! -s "$T/rma.err"
check_eq "... and its storage is empty" 0 "$(find "$NA/$F" -type f 2>/dev/null | wc -l)"
eng submit "$A" stream f "$F" savepoint >/dev/null
check "a restore with no state left: RUNNING" eng wait-state "$A" "$F" RUNNING 30
fresh=$(wait_new "$NA/$F" 0 30)
echo "    restore without state: first checkpoint $fresh"
check_eq "... starts from scratch (first checkpoint id 1)" 1 "$(cid_of "$fresh")"

# ---- engine restart with jobs running: new IMap regions, jobs resume
CL=$(cat "$A/cluster")
declare -A before
for m in "$A/imap/$CL"/*/; do before[$(basename "$m")]=$(ls "$m" | wc -l); done
s_before=$(cid_of "$(newest "$NA/$S")")
p2_before=$(newest "$NA/$P2")
eng stop "$A"
start_engine "$A" || bad "the engine did not come back"
check "after a restart the streaming job is RUNNING" eng wait-state "$A" "$S" RUNNING 60
s_after=$(wait_new "$NA/$S" "$s_before" 120)
check "... and checkpoints again (after $s_before: ${s_after:-none})" test -n "$s_after"
check "the two-pipeline job resumes" eng wait-state "$A" "$P2" RUNNING 30
nfin=$(curl -sS -m 10 "$RA/finished-jobs/" | python3 -c 'import json,sys; print(len(json.load(sys.stdin)))')
# LAZY map stores: a map's new region appears when the restarted node first
# uses the map; never more than one per start
grew=0 other=""
for m in "${!before[@]}"; do
	n=$(ls "$A/imap/$CL/$m" | wc -l)
	if [ "$n" = $((before[$m] + 1)) ]; then grew=$((grew + 1)); else other="$other $m:${before[$m]}->$n"; fi
done
echo "    maps without a new region after the restart:${other:- none}"
run_grew=0
for m in engine_runningJobInfo engine_runningJobState engine_checkpoint-id-map; do
	[ "$(ls "$A/imap/$CL/$m" | wc -l)" = $((before[$m] + 1)) ] && run_grew=$((run_grew + 1))
done
check_eq "the maps of running jobs got one new region each" 3 "$run_grew"
check "no map got more than one new region" test -z "$(for m in "${!before[@]}"; do
	[ "$(ls "$A/imap/$CL/$m" | wc -l)" -gt $((before[$m] + 1)) ] && echo "$m"; done)"
sleep 3 # the summaries' cache_ttl
check_eq "engine_finishedJobState live keys = the reloaded /finished-jobs" "$nfin" \
	"$(awk '$1 == "live_keys" {print $2}' "$MA/imap/$CL/engine_finishedJobState.summary")"
# a region the running engine may still append to is never called removable
# (the region of this start included, whatever its nanoTime name says)
check "no IMap summary calls a region removable while the engine runs" \
	bash -c "! grep -l removable '$MA/imap/$CL/'*.summary"
nr=$(ls -t "$A/imap/$CL/engine_runningJobInfo" | head -1)
check "the region of this start ($nr) is not removable in its map's summary" \
	grep -qE "^$nr .* (EPERM|EBUSY) \(" "$MA/imap/$CL/engine_runningJobInfo.summary"

# ---- IMap clean-up with the engine stopped (README "Reclaiming IMap WAL
# space"): a superseded region goes, the engine restarts on the same state
fin_ids() { curl -sS -m 10 "$RA/finished-jobs/" | python3 -c 'import json,sys; print(" ".join(sorted(str(j["jobId"]) for j in json.load(sys.stdin))))'; }
fin_before=$(fin_ids)
eng stop "$A"
MC=$T/mc
mount_stfs "$MC" -o "checkpoint=file://$NA/,engine=$RA,imap=file://$A/imap/,state_dir=$T/sdc,timeout=5000,imap_grace=0,cache_ttl=500" ||
	bad "mount with imap_grace=0"
# the engine's JVM may take a moment to close its port: the verdict needs
# a refused connection, so ask again for up to 20 s
rem=""
for _ in $(seq 40); do
	rem=$(for f in "$MC/imap/$CL/"*.summary; do
		m=$(basename "$f" .summary)
		awk -v m="$m" '$4 == "removable" { print m "/" $1 }' "$f"
	done | head -1)
	[ -n "$rem" ] && break
	sleep 0.5
done
# whether a region is wholly superseded depends on the engine's writes in
# this run: removable regions exactly when a map holds superseded bytes
sup=$(awk '$1 == "superseded" { s += $2 } END { print s + 0 }' "$MC/imap/$CL/"*.summary)
if [ -n "$rem" ]; then
	ok "with the engine stopped a superseded region is removable ($rem)"
else
	echo "    figure: no region wholly superseded in this run"
	check_eq "with the engine stopped no region removable: then no superseded bytes" 0 "$sup"
	[ "$sup" = 0 ] || { for f in "$MC/imap/$CL/"*.summary; do echo "    -- $f"; sed 's/^/    /' "$f" | head -30; done; }
fi
if [ -n "$rem" ]; then
	m=${rem%%/*}
	lk=$(awk '$1 == "live_keys" {print $2}' "$MC/imap/$CL/$m.summary")
	check "rm -r of the removable region $rem succeeds" rm -r "$MC/imap/$CL/$rem"
	check "... and its raw directory is gone" test ! -e "$A/imap/$CL/$rem"
	sleep 1
	check_eq "... the map's live keys are unchanged" "$lk" \
		"$(awk '$1 == "live_keys" {print $2}' "$MC/imap/$CL/$m.summary")"
fi
unmount_stfs "$MC"
start_engine "$A" || bad "the engine did not come back after the clean-up"
check "after the clean-up the streaming job is RUNNING again" eng wait-state "$A" "$S" RUNNING 60
check_eq "after the clean-up the engine reloads the same finished jobs" "$fin_before" "$(fin_ids)"

echo "  suite time $(($(date +%s) - t0)) s"
unmount_stfs "$MB"
unmount_stfs "$MA"
eng stop "$A"
eng stop "$B"
finish
