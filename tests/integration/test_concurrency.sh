#!/bin/bash
# Many callers at once on one real mount (scripts/run-san.sh runs it against
# the TSan daemon; `make test` also runs it against the plain one): 8 readers
# looping du, cat of every file, find and tar, while two rm -r race on each
# dead job (released first, by two writers at once), and the simulator
# flips a live job between RUNNING and CANCELING and restarts a FAILED one
# (FAILED <-> RUNNING).  Afterwards, checked on the raw namespace and the
# audit log: every object gone has exactly one "allowed" unlink record and
# every "allowed" record's object is gone (no lost, no duplicated deletion);
# nothing of a live job went.  ROUNDS=N sets the readers' rounds.
. "$(dirname "$0")/lib.sh"
cp "$STFS" "$T/stfs-bin" && STFS=$T/stfs-bin
ROUNDS=${ROUNDS:-3}
[ -n "$KEEP_T" ] && echo "scratch: $T"

STATE=$T/state
gen_state "$STATE" --jobs 13 --seed 7 --pipelines 2 --checkpoints 4
NS=$STATE/checkpoint
AUD=$T/audit.log
jobs_in() { json "$STATE/scenario.json" "'\n'.join(j['jobId'] for j in d['jobs'] if j['jobStatus'] in '$*'.split())"; }
DEAD=$(jobs_in FAILED CANCELED FINISHED SAVEPOINT_DONE UNKNOWABLE)
FLIP=$(jobs_in RUNNING | head -1)
LIVE=$(jobs_in INITIALIZING CREATED PENDING SCHEDULED RUNNING FAILING DOING_SAVEPOINT CANCELING)
# the FAILED job that is restarted and failed again meanwhile: not released
RESTART=$(jobs_in FAILED | head -1)
DEAD=$(echo "$DEAD" | grep -vx "$RESTART")
raw() { (cd "$NS" && find . -type f | sort); }
raw >"$T/raw.before"
for j in $LIVE; do grep "^./$j/" "$T/raw.before"; done >"$T/live.before"
check "the state has dead jobs, live jobs and a FAILED one to restart" \
	test -n "$DEAD" -a -n "$FLIP" -a -s "$T/live.before" -a -n "$RESTART"

start_sim "$STATE/scenario.json" a
PORT=$SIM_PORT_a
M=$T/m
mount_stfs "$M" -o "checkpoint=file://$NS/,engine=http://127.0.0.1:$PORT,state_dir=$T/sd,audit_log=$AUD,timeout=3000,decision_age=0,engine_ttl=200,cache_ttl=200,storage_ttl=200,orphan_grace=10m" || {
	finish
	exit 1
}
PID=$STFS_PID

reader() { # reader N: one kind of walk, ROUNDS times
	local i
	for i in $(seq "$ROUNDS"); do
		case $(($1 % 4)) in
		0) du -s "$M/jobs" ;;
		1) find "$M/jobs" -type f -exec cat {} + ;;
		2) find "$M" -name '*' ;;
		3) tar cf - -C "$M" jobs by-state ;;
		esac
	done >/dev/null 2>&1
	return 0
}
flipper() { # flips the live job and restarts the FAILED one, bounded
	local i
	for i in $(seq 20); do
		sim_ctl "$PORT" POST /__sim/job "{\"jobId\":\"$FLIP\",\"jobStatus\":\"CANCELING\"}"
		sim_ctl "$PORT" POST /__sim/job "{\"jobId\":\"$RESTART\",\"jobStatus\":\"RUNNING\"}"
		sleep 0.1
		sim_ctl "$PORT" POST /__sim/job "{\"jobId\":\"$FLIP\",\"jobStatus\":\"RUNNING\"}"
		sim_ctl "$PORT" POST /__sim/job "{\"jobId\":\"$RESTART\",\"jobStatus\":\"FAILED\"}"
		sleep 0.1
	done >/dev/null
}
killer() { # killer JOB: release (two writers), then rm -r
	local j=$1
	echo release >"$M/jobs/$j/restore" 2>/dev/null &
	echo release >"$M/jobs/$j/restore" 2>/dev/null
	wait
	rm -rf "$M/jobs/$j" 2>/dev/null
	return 0
}

t0=$(date +%s)
W=()
for n in 0 1 2 3 4 5 6 7; do
	reader $n &
	W+=($!)
done
flipper &
W+=($!)
for j in $DEAD; do
	killer "$j" &
	W+=($!)
	killer "$j" &
	W+=($!)
done
rm -rf "$M/jobs/$RESTART" 2>/dev/null &
W+=($!)
for p in "${W[@]}"; do wait "$p"; done
dt=$(($(date +%s) - t0))
check "the daemon survived 8 readers, 2 rm -r per dead job and state flips (${dt} s)" kill -0 "$PID"

# settle: the dead jobs are fully deletable now; a second pass removes what
# a raced pass left (a concurrent release that was not yet visible)
for j in $DEAD; do rm -rf "$M/jobs/$j" 2>/dev/null; done
raw >"$T/raw.after"
comm -23 "$T/raw.before" "$T/raw.after" | sed 's|^\./||' >"$T/gone"
# (pseudo-files unlink as views: object="")
grep ' op=unlink ' "$AUD" | grep ' outcome=allowed ' | grep -v ' object="" ' |
	sed -n 's/.* object=\([^ ]*\) .*/\1/p' | sort >"$T/allowed"
check "objects were deleted ($(wc -l <"$T/gone"))" test -s "$T/gone"
check_eq "no object has two allowed deletions in the audit" "" \
	"$(uniq -d "$T/allowed" | head -5)"
check_eq "every object gone has an allowed audit record, and each record's object is gone" \
	"$(sort "$T/gone")" "$(sort -u "$T/allowed")"
for j in $LIVE; do grep "^./$j/" "$T/raw.after"; done >"$T/live.after"
check "nothing of a live job was deleted (the flipped one included)" \
	cmp -s "$T/live.before" "$T/live.after"
left=$(for j in $DEAD; do grep "^./$j/" "$T/raw.after"; done | wc -l)
check_eq "nothing is left of the released dead jobs" 0 "$left"
check "the restarted job's restore points are still there" \
	bash -c "grep -q '^./$RESTART/' '$T/raw.after'"
unmount_stfs "$M"
finish
