#!/bin/bash
# The simulator agrees with the real engine (README "The real engine in the
# tests"): the same requests (agree-requests.txt) go to a real SeaTunnel
# 2.3.8 node with a job of each kind and to stsim.py --version 2.3.8 on
# tests/fixtures/scenarios/engine-2.3.8.json (the same jobs); status codes,
# content types, key sets and nesting of every answer must be equal
# (api_shape.py; not ids, times or metric numbers).  The check is shown to
# fail against the simulator's Jetty --version 2.3 shape.  Then stfs on the
# 2.3.8 simulator: a restored job listed both finished and running is
# RUNNING, a finished job's pipelines come from its jobDag string.
. "$(dirname "$0")/lib.sh"
t0=$(date +%s)
SCEN=$ROOT/tests/fixtures/scenarios/engine-2.3.8.json
REQS=$ROOT/tests/integration/agree-requests.txt
shape() { python3 "$ROOT/tests/integration/api_shape.py" "$@"; }
# the scenario's job of each role
sim_roles=$(python3 -c 'import json,sys
j={x["jobName"]:x["jobId"] for x in json.load(open(sys.argv[1]))["jobs"]}
print("S=%s,P2=%s,SP=%s,C=%s,F=%s,BT=%s" % (j["s"],j["two"],j["sp"],j["c"],j["f"],j["b"]))' "$SCEN")

# ---- the real node, jobs made as in test_engine.sh
if ! eng build; then
	bad "Maven could not fetch or build SeaTunnel 2.3.8 (see build/engine/2.3.8/mvn.log)"
	finish
	exit 1
fi
A=$T/a
STFS_ENGINE_JVM_OPTS=-Dstfs.imap=false start_engine "$A" || {
	bad "the engine did not start: $(tail -3 "$A/engine.log")"
	finish
	exit 1
}
RA=$(eng rest "$A")
S=$(eng submit "$A" stream s) P2=$(eng submit "$A" stream2 two)
SP=$(eng submit "$A" stream sp) C=$(eng submit "$A" stream c)
F=$(eng submit "$A" fail:5 f) BT=$(eng submit "$A" batch b)
sleep 4
eng stop-job "$A" "$SP" savepoint >/dev/null
eng stop-job "$A" "$C" >/dev/null
check "real: stop with savepoint" eng wait-state "$A" "$SP" SAVEPOINT_DONE 60
check "real: cancel" eng wait-state "$A" "$C" CANCELED 30
check "real: batch FINISHED" eng wait-state "$A" "$BT" FINISHED 60
eng submit "$A" stream sp "$SP" savepoint >/dev/null
check "real: restored RUNNING" eng wait-state "$A" "$SP" RUNNING 30
check "real: failing job FAILED" eng wait-state "$A" "$F" FAILED 120
real_roles="S=$S,P2=$P2,SP=$SP,C=$C,F=$F,BT=$BT"
# the scenario's jobs all carry every metric: wait until the real ones do
# (a just restored job reports its tables after its first seconds)
metrics_full() {
	eng get "$A" /running-jobs | python3 -c 'import json,sys
sys.exit(any(len(j["metrics"]) < 16 or not j["metrics"].get("TableSinkWriteCount")
             for j in json.load(sys.stdin)))'
}
for _ in $(seq 40); do metrics_full && break; sleep 0.5; done
check "real: every running job reports all 16 metrics" metrics_full
check_eq "real: the restored job is listed in /finished-jobs too (SAVEPOINT_DONE)" SAVEPOINT_DONE \
	"$(eng get "$A" /finished-jobs | python3 -c 'import json,sys
print(" ".join(j["jobStatus"] for j in json.load(sys.stdin) if j["jobId"] == sys.argv[1]))' "$SP")"
shape "$RA" "$real_roles" "$REQS" >"$T/real.txt"
check_eq "every request answered by the real node" "$(grep -c '^[A-Z]' "$REQS")" \
	"$(grep -c ' -> [0-9]' "$T/real.txt")"

# ---- the simulator in the 2.3.8 mode: the same shapes
STSIM_VERSION=2.3.8 start_sim "$SCEN" hz
shape "http://127.0.0.1:$SIM_PORT_hz/hazelcast/rest/maps" "$sim_roles" "$REQS" >"$T/hz.txt"
if diff "$T/real.txt" "$T/hz.txt" >"$T/hz.diff"; then
	ok "stsim --version 2.3.8 answers like the real node ($(wc -l <"$T/real.txt") requests)"
else
	bad "stsim --version 2.3.8 differs from the real node:"
	cut -c1-400 "$T/hz.diff" | sed 's/^/    /'
fi

# ---- the check can fail: the Jetty REST v2 shape (--version 2.3) differs
STSIM_VERSION=2.3 start_sim "$SCEN" jetty
shape "http://127.0.0.1:$SIM_PORT_jetty" "$sim_roles" "$REQS" >"$T/jetty.txt"
ndiff=$(diff "$T/real.txt" "$T/jetty.txt" | grep -c '^>')
echo "    --version 2.3 differs from the real 2.3.8 node in $ndiff of $(wc -l <"$T/real.txt") answers"
check "the comparison fails against the --version 2.3 shape" test "$ndiff" -gt 10
for want in 'startTime:str' 'content-type=application/json;charset=utf-8' 'vertexName:str' 'text/html'; do
	check "... which has $want where 2.3.8 has not" bash -c "grep -q -F '$want' '$T/jetty.txt' && ! grep -q -F '$want' '$T/real.txt'"
done

# ---- stfs on the real node: what the 2.3.8 answers mean to it
MR=$T/mr
mount_stfs "$MR" -o "checkpoint=file://$A/checkpoint/,engine=$RA,state_dir=$T/sdr,timeout=5000"
for _ in $(seq 50); do mountpoint -q "$MR" && break; sleep 0.1; done
check_eq "real: the restored job (finished and running at once) is RUNNING" RUNNING \
	"$(getfattr --only-values -n user.stfs.state "$MR/jobs/$SP" 2>/dev/null)"
check "real: the engine deleted the batch job's directory" test ! -e "$A/checkpoint/$BT"
check_eq "real: the finished batch job's pipelines come from its jobDag string" 1 \
	"$(ls "$MR/jobs/$BT/pipelines" 2>&1)"
check "real: cluster/metrics reads (/hazelcast/rest/instance/metrics)" cat "$MR/cluster/metrics"
check "real: cluster/overview.json is the engine's" grep -q '"projectVersion":"2.3.8"' "$MR/cluster/overview.json"
unmount_stfs "$MR"

# ---- stfs on the 2.3.8 simulator (no storage: what the engine says)
declare -A ID
for r in ${sim_roles//,/ }; do ID[${r%%=*}]=${r#*=}; done
mkdir -p "$T/ns"
M=$T/m
mount_stfs "$M" -o "checkpoint=file://$T/ns/,engine=http://127.0.0.1:$SIM_PORT_hz/hazelcast/rest/maps,state_dir=$T/sd,timeout=5000"
for _ in $(seq 50); do mountpoint -q "$M" && break; sleep 0.1; done
check_eq "stfs: every job of the 2.3.8 engine is listed" \
	"$(printf '%s\n' "${ID[@]}" | sort)" "$(ls "$M/jobs" | sort)"
check_eq "stfs: the restored job, finished and running at once, is RUNNING" RUNNING \
	"$(getfattr --only-values -n user.stfs.state "$M/jobs/${ID[SP]}" 2>/dev/null)"
check_eq "stfs: the FAILED job is FAILED" FAILED \
	"$(getfattr --only-values -n user.stfs.state "$M/jobs/${ID[F]}" 2>/dev/null)"
check_eq "stfs: a finished job's pipelines come from its jobDag string" 1 \
	"$(ls "$M/jobs/${ID[BT]}/pipelines" 2>&1)"
out=$(cat "$M/cluster/metrics" 2>&1)
check_eq "stfs: cluster/metrics reads, empty without telemetry" "0 []" "$? [$out]"
unmount_stfs "$M"

echo "  suite time $(($(date +%s) - t0)) s"
eng stop "$A"
finish
