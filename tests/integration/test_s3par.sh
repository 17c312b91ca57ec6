#!/bin/bash
# S3 read parallelism (README "Performance, as measured here"): the cold
# `du -s` of a job with 40 checkpoints or so on s3rver, reached through
# scripts/faultproxy.py holding every object GET 150 ms (a distant store),
# keeps more than one and at most 16 header reads in flight at once (the
# proxy counts them), and so takes far less than one round trip per
# object.  Needs node/npm (scripts/s3rver.sh).  STFS_BIN overrides the
# binary under test.
. "$(dirname "$0")/lib.sh"

if ! command -v node >/dev/null || ! command -v npm >/dev/null; then
	bad "node and npm are needed to run s3rver (scripts/deps.sh installs them)"
	finish
	exit 1
fi
DELAY=150
STATE=$T/state
gen_state "$STATE" --jobs 1 --pipelines 1 --checkpoints 40 --seed 8
NS=$STATE/checkpoint
PREFIX=seatunnel/checkpoint
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }

SD=$T/srv
SP=$(free_port)
"$ROOT/scripts/s3rver.sh" start "$SD" "$SP" >/dev/null || {
	bad "s3rver starts"
	finish
	exit 1
}
trap '"$ROOT/scripts/s3rver.sh" stop "$SD" >/dev/null 2>&1; cleanup' EXIT
# upload: one curl, the objects side by side
: >"$T/up.cfg"
while IFS= read -r -d '' f; do
	printf 'upload-file = "%s"\nurl = "http://127.0.0.1:%s/ckpt/%s/%s"\noutput = "/dev/null"\n' \
		"$f" "$SP" "$PREFIX" "${f#"$NS"/}" >>"$T/up.cfg"
done < <(find "$NS" -type f -name '*.ser' -print0)
codes=$(curl -sS --no-progress-meter --aws-sigv4 aws:amz:us-east-1:s3 --user S3RVER:S3RVER \
	-H x-amz-content-sha256:UNSIGNED-PAYLOAD --parallel --parallel-max 8 \
	-w '%{http_code}\n' -K "$T/up.cfg" | sort -u | tr '\n' ' ')
check_eq "the namespace is uploaded" "200 " "$codes"
JOB=$(ls "$NS")
NOBJ=$(find "$NS" -type f -name '*.ser' | wc -l)
NCKPT=$(find "$NS" -name '*.ser' -printf '%f\n' | awk -F- '{ print $3 "-" $4 }' | sort -u | wc -l)
check "one job with at least 32 checkpoints ($NCKPT, $NOBJ objects)" test "$NCKPT" -ge 32

pf=$T/fp.port
python3 "$ROOT/scripts/faultproxy.py" --upstream "http://127.0.0.1:$SP" \
	--port 0 --port-file "$pf" >"$T/fp.log" 2>&1 &
PIDS+=("$!")
for _ in $(seq 100); do
	[ -s "$pf" ] && break
	sleep 0.05
done
FP=$(cat "$pf")
proxy() { curl -s -m 5 ${1:+-X POST --data "$1"} "http://127.0.0.1:$FP/__fault"; }
pj() { python3 -c 'import json, sys; print(json.load(sys.stdin)[sys.argv[1]])' "$1"; }
proxy "{\"mode\":\"delay\",\"ms\":$DELAY,\"match\":\".ser\",\"reset\":true}" >/dev/null
check_eq "the proxy holds object GETs $DELAY ms" "$DELAY" "$(proxy | pj ms)"

M=$T/mnt
export AWS_ACCESS_KEY_ID=S3RVER AWS_SECRET_ACCESS_KEY=S3RVER
mount_stfs "$M" -o "checkpoint=s3://ckpt/$PREFIX/,endpoint=http://127.0.0.1:$FP,region=us-east-1,path_style,state_dir=$T/sd,timeout=5000" || {
	finish
	exit 1
}
g0=$(proxy | pj object_gets)
t0=$(date +%s%N)
du -s "$M/jobs" >/dev/null
dt=$((($(date +%s%N) - t0) / 1000000))
s=$(proxy)
gets=$(($(pj object_gets <<<"$s") - g0))
most=$(pj max_object_gets_inflight <<<"$s")
echo "  (cold du -s: ${dt} ms, $gets object GETs, at most $most in flight)"
check "the cold du -s reads every checkpoint's header ($gets GETs for $NOBJ objects)" \
	test "$gets" -ge "$NOBJ"
check "more than one GET in flight at once ($most)" test "$most" -gt 1
check "at most 16 GETs in flight at once ($most)" test "$most" -le 16
# in turn it would take $gets round trips
check "the du took less than a third of the reads in turn (${dt} ms < $((gets * DELAY / 3)) ms)" \
	test "$dt" -lt $((gets * DELAY / 3))
unmount_stfs "$M"
finish
