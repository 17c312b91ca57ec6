#!/bin/bash
# make soak (issue 14 item 3; README "Memory" and "Failure modes"): two
# mounts over a namespace larger than their caches — one local, one on
# s3rver behind scripts/faultproxy.py, both asking the engine simulator —
# are walked and read in a loop (du -s, find, cat of checkpoint files
# compared byte for byte with the raw ones, tar of a job) while faults come
# and go: the simulator frozen with kill -STOP, and 503 storms from the
# proxy.  Every few seconds the daemons' RSS goes into a CSV.  Fails when
#   * a call fails outside a fault window (plus the deadline's grace), or
#     a read returns bytes that differ from the raw file (at any time);
#   * a daemon's RSS after the warm-up grows past its warm-up peak by more
#     than SOAK_GROWTH_MB, or goes over SOAK_RSS_MAX_MB.
# Loopback only; needs root (FUSE), node/npm (s3rver), curl, python3.
#
#   SOAK_SECONDS=600   length of the loop (faults need 60 or more)
#   SOAK_JOBS=100      jobs of the local namespace (x 2 pipelines x 5)
#   SOAK_S3_JOBS=20    of those, the jobs uploaded to s3rver
#   SOAK_SAMPLE=5      seconds between RSS samples
#   SOAK_WARMUP=60     seconds of warm-up (its peak is the reference)
#   SOAK_GROWTH_MB=24  allowed growth over the warm-up peak
#   SOAK_RSS_MAX_MB=192 absolute bound per daemon
#   SOAK_OUT=DIR       keep the CSV and the logs there (else in the scratch)
#   SOAK_INJECT=lost   the soak's own proof (tests/scripts/test_soak.py): one
#                      call in the first round fails with nothing at fault
#   SOAK_INJECT=mismatch  one read in the first round is compared with bytes
#                      that differ from the raw file; either must FAIL the soak
#   SOAK_INJECT=window|grace|after-window  the proof of the fault-window
#                      rule: the first round makes one fault window of its
#                      own (the simulator frozen for 1 s, as the schedule
#                      freezes it) and the lost call above inside it, 1 s
#                      after it (both excused: the soak passes) or just past
#                      its grace (lost: the soak FAILs)
# A run under 60 s has no scheduled fault windows (40 s a round).
# Prints the RSS curve (min/median/max per minute and daemon), the calls
# made, failed inside fault windows, and lost.
. "$(dirname "$0")/../tests/integration/lib.sh"
SECS=${SOAK_SECONDS:-600}
JOBS=${SOAK_JOBS:-100}
S3_JOBS=${SOAK_S3_JOBS:-20}
SAMPLE=${SOAK_SAMPLE:-5}
WARMUP=${SOAK_WARMUP:-60}
GROWTH=${SOAK_GROWTH_MB:-24}
RSS_MAX=${SOAK_RSS_MAX_MB:-192}
OUT=${SOAK_OUT:-$T/out}
INJECT=${SOAK_INJECT:-}
case $INJECT in "" | lost | mismatch | window | grace | after-window) ;; *)
	bad "SOAK_INJECT is lost, mismatch, window, grace or after-window, not [$INJECT]"
	finish
	exit 1
	;;
esac
TMO=2000
GRACE_MS=$((3 * TMO + 2000)) # a call may end this long after a fault
PREFIX=seatunnel/checkpoint
mkdir -p "$OUT"
now_ms() { echo $(($(date +%s%N) / 1000000)); }
for c in node curl python3; do
	command -v "$c" >/dev/null || {
		bad "$c is needed (scripts/deps.sh installs it)"
		finish
		exit 1
	}
done

# ---- the state, the simulator, s3rver behind the proxy -------------------
STATE=$T/state
gen_state "$STATE" --jobs "$JOBS" --pipelines 2 --checkpoints 5 --seed 7
NS=$STATE/checkpoint
start_sim "$STATE/scenario.json" a
SIM=$SIM_PID_a
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
SP=$(free_port)
"$ROOT/scripts/s3rver.sh" start "$T/srv" "$SP" >/dev/null || {
	bad "s3rver starts"
	finish
	exit 1
}
s3stop() { "$ROOT/scripts/s3rver.sh" stop "$T/srv" >/dev/null 2>&1; }
python3 "$ROOT/scripts/faultproxy.py" --upstream "http://127.0.0.1:$SP" \
	--port 0 --port-file "$T/proxy.port" >"$T/proxy.log" 2>&1 &
PROXY=$!
PIDS+=("$PROXY")
for _ in $(seq 100); do
	[ -s "$T/proxy.port" ] && break
	sleep 0.05
done
PP=$(cat "$T/proxy.port")
fault() { curl -s -m 5 -X POST --data "$1" "http://127.0.0.1:$PP/__fault" >/dev/null; }
# freeze_engine SECONDS [CMD...]: a fault window: the simulator frozen
# (kill -STOP) for SECONDS, CMD run at its start; "start end engine-stop"
# into faults when it ends
freeze_engine() {
	local s secs=$1
	shift
	s=$(now_ms)
	kill -STOP "$SIM"
	[ $# -gt 0 ] && "$@"
	sleep "$secs"
	kill -CONT "$SIM"
	echo "$s $(now_ms) engine-stop" >>"$OUT/faults"
}
# sleep_ms MS
sleep_ms() { sleep "$(($1 / 1000)).$(printf %03d $(($1 % 1000)))"; }

# upload the first S3_JOBS job directories (and directory markers)
SIG=(--aws-sigv4 aws:amz:us-east-1:s3 --user S3RVER:S3RVER
	-H x-amz-content-sha256:UNSIGNED-PAYLOAD)
S3IDS=$(cd "$NS" && ls | grep -E '^[0-9]+$' | sort | head -n "$S3_JOBS")
: >"$T/up.cfg"
: >"$T/up.m"
for id in $S3IDS; do
	for f in "$NS/$id"/*; do
		printf 'upload-file = "%s"\nurl = "http://127.0.0.1:%s/ckpt/%s/%s/%s"\noutput = "/dev/null"\n' \
			"$f" "$SP" "$PREFIX" "$id" "$(basename "$f")" >>"$T/up.cfg"
	done
	printf 'url = "http://127.0.0.1:%s/ckpt/%s/%s/"\noutput = "/dev/null"\n' "$SP" "$PREFIX" "$id" >>"$T/up.m"
done
codes=$({
	curl -sS --no-progress-meter "${SIG[@]}" --parallel --parallel-max 8 \
		-w '%{http_code}\n' -K "$T/up.cfg"
	curl -sS --no-progress-meter "${SIG[@]}" --parallel --parallel-max 8 \
		-X PUT --data-binary '' -w '%{http_code}\n' -K "$T/up.m"
} | sort -u | tr -d '\n')
check_eq "$S3_JOBS jobs uploaded to s3rver (all 200)" 200 "$codes"

export AWS_ACCESS_KEY_ID=S3RVER AWS_SECRET_ACCESS_KEY=S3RVER
# caches far smaller than the namespace: eviction runs all the time
CAPS="cache_max_entries=500,cache_max_mb=1,readahead_max_mb=4"
COMMON="engine=http://127.0.0.1:$SIM_PORT_a,imap=file://$STATE/imap/,timeout=$TMO,$CAPS"
mount_stfs "$T/mloc" -o "checkpoint=file://$NS/,state_dir=$T/sd-loc,$COMMON" || {
	s3stop
	finish
	exit 1
}
LOC=$STFS_PID
mount_stfs "$T/ms3" -o "checkpoint=s3://ckpt/$PREFIX/,endpoint=http://127.0.0.1:$PP,region=us-east-1,path_style,state_dir=$T/sd-s3,$COMMON" || {
	s3stop
	finish
	exit 1
}
S3=$STFS_PID
entries_loc=$(find "$T/mloc/jobs" | wc -l)
entries_s3=$(find "$T/ms3/jobs" | wc -l)
echo "  local mount: $entries_loc entries, s3 mount: $entries_s3 entries; $CAPS"

# ---- samplers and fault schedule ------------------------------------------
T0=$(now_ms)
END=$((T0 + SECS * 1000))
echo "t_s,daemon,rss_kb" >"$OUT/rss.csv"
(
	while [ "$(now_ms)" -lt "$END" ]; do
		t=$((($(now_ms) - T0) / 1000))
		for p in loc:$LOC s3:$S3; do
			kb=$(awk '/^VmRSS/ { print $2 }' "/proc/${p#*:}/status" 2>/dev/null)
			[ -n "$kb" ] && echo "$t,${p%%:*},$kb" >>"$OUT/rss.csv"
		done
		sleep "$SAMPLE"
	done
) &
SAMPLER=$!
PIDS+=("$SAMPLER")
: >"$OUT/faults"
(
	# every 40 s: the simulator frozen for 8 s, later a 10 s 503 storm
	while [ "$(now_ms)" -lt "$((END - 19000))" ]; do
		sleep 10
		freeze_engine 8
		sleep 7
		s=$(now_ms)
		fault '{"mode": "percent", "percent": 50}'
		sleep 10
		fault '{"mode": "none"}'
		echo "$s $(now_ms) s3-503" >>"$OUT/faults"
		sleep 5
	done
) &
FAULTS=$!
PIDS+=("$FAULTS")

# ---- the load: walks and reads in a loop, every call logged --------------
# op MOUNT NAME CMD...: one call; "start end mount name rc" into ops
op() {
	local m=$1 n=$2 s rc
	shift 2
	s=$(now_ms)
	"$@" >/dev/null 2>>"$OUT/op-errors.log"
	rc=$?
	echo "$s $(now_ms) $m $n $rc" >>"$OUT/ops"
}
# readcmp MOUNTDIR RAWFILE: the file through the mount equals the raw one;
# 2 (and a line in mismatch) when the read worked and its bytes differ, 1
# when it failed
readcmp() {
	local raw=$2 id name rest pid cid rc
	id=$(basename "$(dirname "$raw")")
	name=$(basename "$raw")
	rest=${name%.ser}
	cid=${rest##*-}
	rest=${rest%-*}
	pid=${rest##*-}
	cmp -s "$1/jobs/$id/pipelines/$pid/checkpoints/$cid/$name" "$raw"
	rc=$?
	# cmp: 1 the bytes differ (a short read too), 2 a read failed (a fault)
	case $rc in
	0) return 0 ;;
	1)
		echo "MISMATCH $1 $raw" >>"$OUT/mismatch"
		return 2
		;;
	esac
	return 1
}
mapfile -t LOCFILES < <(find "$NS" -name '*.ser' | shuf -n 200 --random-source=<(yes))
S3FILES=()
for id in $S3IDS; do
	for f in "$NS/$id"/*.ser; do S3FILES+=("$f"); done
done
: >"$OUT/ops"
: >"$OUT/mismatch"
# inject: what the soak must catch, once in the first round
inject() {
	local f id name
	case $INJECT in
	lost) # a walk into a job that is not there: ENOENT, no fault
		op loc inject-lost ls "$T/mloc/jobs/no-such-job" ;;
	window) # that call inside a fault window: excused
		freeze_engine 1 op loc inject-window ls "$T/mloc/jobs/no-such-job" ;;
	grace) # 1 s after the window, within its grace: excused
		freeze_engine 1
		sleep 1
		op loc inject-grace ls "$T/mloc/jobs/no-such-job"
		;;
	after-window) # just past the window's grace: lost
		freeze_engine 1
		sleep_ms $((GRACE_MS + 300))
		op loc inject-after-window ls "$T/mloc/jobs/no-such-job"
		;;
	mismatch) # the raw side of one comparison with its first byte flipped
		f=${LOCFILES[0]}
		id=$(basename "$(dirname "$f")")
		name=$(basename "$f")
		mkdir -p "$T/inject/$id"
		python3 -c 'import sys; b = bytearray(open(sys.argv[1], "rb").read()); b[0] ^= 0xff; open(sys.argv[2], "wb").write(b)' \
			"$f" "$T/inject/$id/$name"
		op loc cat readcmp "$T/mloc" "$T/inject/$id/$name"
		;;
	esac
}
loops=0
while [ "$(now_ms)" -lt "$END" ]; do
	loops=$((loops + 1))
	[ "$loops" = 1 ] && inject
	op loc du du -s "$T/mloc/jobs"
	op s3 du du -s "$T/ms3/jobs"
	op loc find find "$T/mloc/jobs"
	op s3 find find "$T/ms3/jobs"
	for k in $(seq 10); do
		f=${LOCFILES[$(((loops * 10 + k) % ${#LOCFILES[@]}))]}
		op loc cat readcmp "$T/mloc" "$f"
		f=${S3FILES[$(((loops * 10 + k) % ${#S3FILES[@]}))]}
		op s3 cat readcmp "$T/ms3" "$f"
	done
	id=$(basename "$(dirname "${LOCFILES[$((loops % ${#LOCFILES[@]}))]}")")
	op loc tar tar -cf - -C "$T/mloc/jobs" "$id"
	id=$(echo "$S3IDS" | sed -n "$((loops % S3_JOBS + 1))p")
	op s3 tar tar -cf - -C "$T/ms3/jobs" "$id"
done
kill "$FAULTS" 2>/dev/null
wait "$FAULTS" 2>/dev/null
kill -CONT "$SIM" 2>/dev/null
fault '{"mode": "none"}'
wait "$SAMPLER" 2>/dev/null
echo "  $loops rounds of du, find, 20 reads and 2 tar in $SECS s"

# ---- verdict -------------------------------------------------------------
python3 - "$OUT" "$GRACE_MS" "$WARMUP" "$GROWTH" "$RSS_MAX" >"$OUT/verdict" <<'PY'
import statistics, sys
out, grace, warm, growth, rss_max = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5])
faults = [tuple(int(x) for x in l.split()[:2]) for l in open(out + "/faults") if l.strip()]
ops = [l.split() for l in open(out + "/ops") if l.strip()]
def in_fault(s, e):
    return any(s <= fe + grace and e >= fs for fs, fe in faults)
def where(s, e):
    """why an excused call is excused, or how far a lost one missed"""
    if any(s >= fs and e <= fe for fs, fe in faults):
        return "inside a fault window"
    after = [s - fe for fs, fe in faults if s > fe and s <= fe + grace]
    if after:
        return f"{min(after)} ms after a fault window, within its grace of {grace} ms"
    if any(s <= fe + grace and e >= fs for fs, fe in faults):
        return "overlapping a fault window"
    past = [s - fe - grace for fs, fe in faults if s > fe + grace]
    if past:
        return f"{min(past)} ms past the grace of the window before it"
    return "no fault window before it"
# a read that worked with other bytes (rc 2) is a mismatch, not a failed call
failed = [o for o in ops if o[4] != "0" and not (o[3] == "cat" and o[4] == "2")]
lost = [o for o in failed if not in_fault(int(o[0]), int(o[1]))]
excused = [o for o in failed if in_fault(int(o[0]), int(o[1]))]
mism = [l for l in open(out + "/mismatch") if l.strip()]
print(f"calls {len(ops)}, failed inside fault windows {len(excused)}, lost {len(lost)}, mismatched reads {len(mism)}, fault windows {len(faults)}")
for o in excused[:10]:
    print("  EXCUSED", " ".join(o), f"({where(int(o[0]), int(o[1]))})")
for o in lost[:10]:
    print("  LOST", " ".join(o), f"({where(int(o[0]), int(o[1]))})")
for l in mism[:10]:
    print("  ", l.strip())
rows = [l.strip().split(",") for l in open(out + "/rss.csv")][1:]
bad = []
print("RSS (MiB) per minute: daemon minute min/median/max")
for d in ("loc", "s3"):
    pts = [(int(t), int(kb) / 1024) for t, dd, kb in rows if dd == d]
    if not pts:
        bad.append(f"{d}: no RSS samples")
        continue
    for m in range(0, max(t for t, _ in pts) // 60 + 1):
        v = [r for t, r in pts if t // 60 == m]
        if v:
            print(f"  {d} {m} {min(v):.1f}/{statistics.median(v):.1f}/{max(v):.1f}")
    w = [r for t, r in pts if t < warm] or [pts[0][1]]
    after = [r for t, r in pts if t >= warm]
    peak_w, peak_a = max(w), max(after) if after else max(w)
    print(f"  {d}: warm-up peak {peak_w:.1f}, later peak {peak_a:.1f}, growth {peak_a - peak_w:+.1f} (bound {growth}), max bound {rss_max}")
    if peak_a - peak_w > growth:
        bad.append(f"{d}: RSS grew {peak_a - peak_w:.1f} MiB after warm-up (bound {growth})")
    if max(peak_w, peak_a) > rss_max:
        bad.append(f"{d}: RSS {max(peak_w, peak_a):.1f} MiB over {rss_max}")
for b in bad:
    print("  BOUND", b)
sys.exit(1 if lost or mism or bad else 0)
PY
vrc=$?
sed 's/^/  /' "$OUT/verdict"
check "no call lost, no read differs, RSS bounded" [ "$vrc" = 0 ]
calls=$(wc -l <"$OUT/ops")
check "the loop made calls ($calls)" [ "$calls" -gt 0 ]
if [ "$SECS" -ge 60 ]; then
	grep -q engine-stop "$OUT/faults" && grep -q s3-503 "$OUT/faults"
	check "faults were injected" [ $? = 0 ]
else
	echo "  no fault windows: SOAK_SECONDS=$SECS is under 60"
fi
for p in "$LOC" "$S3"; do
	check "daemon $p still alive" alive "$p"
done
STFS_PID=$S3 unmount_stfs "$T/ms3"
STFS_PID=$LOC unmount_stfs "$T/mloc"
s3stop
echo "  CSV: $OUT/rss.csv"
finish
