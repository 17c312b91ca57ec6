#!/bin/bash
# The S3 backend on a real mount: a generated namespace is uploaded to
# s3rver (the SigV4-verifying fork, so every request is checked), mounted
# through s3:// and compared, file by file, with the same namespace
# mounted through file://.  Needs node/npm (scripts/s3rver.sh installs
# s3rver once).  STFS_BIN overrides the binary under test.
. "$(dirname "$0")/lib.sh"
STFS=${STFS_BIN:-$STFS}

if ! command -v node >/dev/null || ! command -v npm >/dev/null; then
	echo "test_s3: node/npm missing; skipped"
	finish
	exit 0
fi

STATE=$T/state
python3 "$ROOT/scripts/genstate.py" --out "$STATE" --jobs 10 --seed 3 \
	>"$T/gen.log" 2>&1 || { cat "$T/gen.log"; exit 1; }
NS=$STATE/checkpoint

S3DIR=$T/s3
S3PORT=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
"$ROOT/scripts/s3rver.sh" start "$S3DIR" "$S3PORT" --verify >/dev/null || {
	bad "s3rver starts"
	finish
	exit 1
}
PIDS+=("$(cat "$S3DIR/s3rver.pid")")
E=http://127.0.0.1:$S3PORT/ckpt
SIG=(--aws-sigv4 aws:amz:us-east-1:s3 --user S3RVER:S3RVER
	-H x-amz-content-sha256:UNSIGNED-PAYLOAD)
PREFIX=seatunnel/checkpoint

# upload: every file, plus a zero-byte marker per directory (s3rver omits a
# "directory" holding only sub-directories from CommonPrefixes; Hadoop
# connectors may write such markers too, and stfs must hide them)
cfg=$T/upload.cfg
: >"$cfg"
nfiles=0
while IFS= read -r -d '' f; do
	rel=${f#"$NS"/}
	printf 'upload-file = "%s"\nurl = "%s/%s/%s"\noutput = "/dev/null"\n' \
		"$f" "$E" "$PREFIX" "$rel" >>"$cfg"
	nfiles=$((nfiles + 1))
done < <(find "$NS" -type f -print0)
while IFS= read -r -d '' d; do
	rel=${d#"$NS"}
	printf 'upload-file = "/dev/null"\nurl = "%s/%s%s/"\noutput = "/dev/null"\n' \
		"$E" "$PREFIX" "$rel" >>"$cfg"
done < <(find "$NS" -type d -print0)
printf 'upload-file = "/dev/null"\nurl = "%s/seatunnel/"\noutput = "/dev/null"\n' "$E" >>"$cfg"
codes=$(curl -sS --no-progress-meter "${SIG[@]}" --parallel --parallel-max 8 -w '%{http_code}\n' -K "$cfg" | sort | uniq -c)
check_eq "uploaded $nfiles files (all 200)" "200" "$(echo "$codes" | awk '{print $2}' | sort -u | tr -d '\n')"

start_sim "$STATE/scenario.json" a
PORT=$SIM_PORT_a
COMMON="engine=http://127.0.0.1:$PORT,imap=file://$STATE/imap/,timeout=3000,orphan_grace=10m"
mount_stfs "$T/mloc" -o "checkpoint=file://$NS/,state_dir=$T/sd1,$COMMON" || {
	finish
	exit 1
}
export AWS_ACCESS_KEY_ID=S3RVER AWS_SECRET_ACCESS_KEY=S3RVER
mount_stfs "$T/ms3" -o "checkpoint=s3://ckpt/$PREFIX/,endpoint=http://127.0.0.1:$S3PORT,region=us-east-1,path_style,state_dir=$T/sd2,$COMMON" || {
	bad "s3:// mount (is build/stfs built with -DHAVE_S3 and libcrypto?)"
	finish
	exit 1
}
ok "s3:// mount"

check_eq "same jobs/" "$(ls "$T/mloc/jobs")" "$(ls "$T/ms3/jobs")"
listing() { (cd "$1/jobs" && find . -path '*checkpoints*' -type f -printf '%p %s\n' | sort); }
L1=$(listing "$T/mloc")
L2=$(listing "$T/ms3")
check "checkpoint files are listed ($(echo "$L1" | grep -c .))" test -n "$L1"
check_eq "same checkpoint files and sizes" "$L1" "$L2"
diffs=0
while read -r p _; do
	cmp -s "$T/mloc/jobs/$p" "$T/ms3/jobs/$p" || {
		echo "    differs: $p"
		diffs=$((diffs + 1))
	}
done <<<"$L1"
check_eq "same bytes in every checkpoint file" 0 "$diffs"
check "no marker object shows up as an empty name" \
	bash -c "! find '$T/ms3/jobs' -name '' 2>/dev/null | grep -q ."
check "no s3 warnings in the mount's log" \
	bash -c "! grep -E 's3: .*(HTTP|unparsable)' '$T/stfs-ms3.log'"
finish
