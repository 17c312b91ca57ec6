#!/bin/bash
# stfs vs s3fs 1.90 vs rclone 1.60 vs raw curl on one generated checkpoint
# namespace served by plain s3rver 3.7.1 (README "Testing").  `make bench`.
#
#   BENCH_RUNS=3        repetitions per measurement (the table shows medians)
#   BENCH_OBJECTS=2000  size of the namespace (2000 = 40 jobs x 2 pipelines x
#                       25 checkpoints; 20000 = 400 jobs)
#   BENCH_BIG=1         run 2000 and then 20000 objects (slow: ~10 min per
#                       run of the 20000; s3rver itself slows down)
#   BENCH_BIG_RUNS=1    repetitions for sizes above 2000
#   BENCH_NO_BIGOBJ=1   skip the 256 MiB object
#   BENCH_MIX=...       job states of the namespace (genstate --mix; default
#                       RUNNING=70,FAILED=15,SAVEPOINT_DONE=10,FINISHED=5)
#   BENCH_NO_LOCAL=1    skip the local section (scripts/bench-local.sh)
#   BENCH_NO_HDFS=1     skip the WebHDFS section (scripts/bench-hdfs.sh)
#   STFS_BIN            binary under test (default build/stfs)
#
# Every run of a tool starts from a fresh mount (so the first `du -s` is
# cold), then: du -s (cold), du -s (warm), ls -lR | wc -l, find -type f |
# wc -l, the same three walks again (the steady state of an unchanged
# tree), cat of every checkpoint object, cat of one 256 MiB object; then it
# unmounts.  stfs runs with the engine down (a dead port) for those; then,
# per run, fresh mounts of stfs with the engine simulator (scripts/stsim.py
# on the namespace's scenario) up: a cold `du -s` (engine up, BENCH_MIX), and
# the diagnostics below.  The requests on object keys (GET, HEAD) of each
# cold `du -s` are counted in s3rver's log.  stfs walks MNT/jobs (its
# pseudo-files included, as a user would); s3fs and rclone walk
# BUCKET/seatunnel/checkpoint.  The raw column is curl: one paged
# ListObjectsV2 (max-keys=1000) for the metadata rows, one curl process
# GETting every object in turn over one keep-alive connection for "read
# all" (the parallel-8 figure is printed below the table), one GET for the
# 256 MiB object.
set -u

ROOT=$(cd "$(dirname "$0")/.." && pwd)
STFS=${STFS_BIN:-$ROOT/build/stfs}
RUNS=${BENCH_RUNS:-3}
BUCKET=ckpt
PREFIX=seatunnel/checkpoint
BIGPREFIX=bigobj
BIGJOB=900000000000000001
BIGKEY=$BIGPREFIX/$BIGJOB/1700000000000-1-1-1.ser
BIGSIZE=$((256 * 1024 * 1024))

STFS_DEPS_EXTRA="s3fs rclone hyperfine" "$ROOT/scripts/deps.sh" || exit 1
[ -x "$STFS" ] || make -s -C "$ROOT" build/stfs || exit 1
for c in s3fs rclone fusermount3 curl python3 node; do
	command -v $c >/dev/null || {
		echo "bench: $c missing" >&2
		exit 1
	}
done

T=$(mktemp -d /tmp/stfs-bench.XXXXXX)
MOUNTS=()   # mountpoints currently mounted by us
MPIDS=()    # pids of their daemons (same index)
S3DIR=""
SIMPID=""
MIX=${BENCH_MIX:-RUNNING=70,FAILED=15,SAVEPOINT_DONE=10,FINISHED=5}

freeport() {
	python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'
}

# unmount one mountpoint and wait for its daemon (by pid) to exit
umount_one() {
	local mnt=$1 pid=$2 i
	fusermount3 -u "$mnt" 2>/dev/null || fusermount -u "$mnt" 2>/dev/null ||
		fusermount3 -uz "$mnt" 2>/dev/null
	for ((i = 0; i < 50; i++)); do
		kill -0 "$pid" 2>/dev/null || return 0
		sleep 0.1
	done
	kill "$pid" 2>/dev/null
	sleep 0.3
	kill -9 "$pid" 2>/dev/null
	return 0
}

umount_all() {
	local i
	for i in "${!MOUNTS[@]}"; do
		umount_one "${MOUNTS[$i]}" "${MPIDS[$i]}"
	done
	MOUNTS=()
	MPIDS=()
}

cleanup() {
	umount_all
	[ -n "$SIMPID" ] && kill "$SIMPID" 2>/dev/null
	[ -n "$S3DIR" ] && "$ROOT/scripts/s3rver.sh" stop "$S3DIR"
	rm -rf "$T"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# wait until $1 is a mountpoint (daemon pid $2 still alive)
wait_mounted() {
	local i
	for ((i = 0; i < 200; i++)); do
		mountpoint -q "$1" && return 0
		kill -0 "$2" 2>/dev/null || return 1
		sleep 0.05
	done
	return 1
}

export AWS_ACCESS_KEY_ID=S3RVER AWS_SECRET_ACCESS_KEY=S3RVER
SIG=(--aws-sigv4 aws:amz:us-east-1:s3 --user S3RVER:S3RVER
	-H x-amz-content-sha256:UNSIGNED-PAYLOAD)

# mount_<tool> MNT: mounts the checkpoint namespace (and, for stfs, the big
# object's prefix at MNT.big); sets WALK (the directory to walk) and BIGPATH
mount_stfs() {
	local mnt=$1 pid
	mkdir -p "$mnt" "$mnt.big"
	"$STFS" -f -o "checkpoint=s3://$BUCKET/$PREFIX/,endpoint=$ENDPOINT,region=us-east-1,path_style,engine=${STFS_ENGINE:-http://127.0.0.1:$DEADPORT},timeout=5000,state_dir=$T/sd-${STFS_SD:-$run}" \
		"$mnt" >>"$T/stfs.log" 2>&1 &
	pid=$!
	wait_mounted "$mnt" $pid || return 1
	MOUNTS+=("$mnt")
	MPIDS+=($pid)
	"$STFS" -f -o "checkpoint=s3://$BUCKET/$BIGPREFIX/,endpoint=$ENDPOINT,region=us-east-1,path_style,engine=http://127.0.0.1:$DEADPORT,timeout=5000,state_dir=$T/sd2" \
		"$mnt.big" >>"$T/stfs-big.log" 2>&1 &
	pid=$!
	wait_mounted "$mnt.big" $pid || return 1
	MOUNTS+=("$mnt.big")
	MPIDS+=($pid)
	WALK=$mnt/jobs
	BIGPATH=$mnt.big/jobs/$BIGJOB/pipelines/1/checkpoints/1/${BIGKEY##*/}
}

mount_s3fs() {
	local mnt=$1 pid
	mkdir -p "$mnt"
	s3fs "$BUCKET" "$mnt" -f -o "passwd_file=$T/s3fs.passwd,url=$ENDPOINT,use_path_request_style,endpoint=us-east-1,dbglevel=warn,logfile=$T/s3fs.log" \
		>>"$T/s3fs.out" 2>&1 &
	pid=$!
	wait_mounted "$mnt" $pid || return 1
	MOUNTS+=("$mnt")
	MPIDS+=($pid)
	WALK=$mnt/$PREFIX
	BIGPATH=$mnt/$BIGKEY
}

mount_rclone() {
	local mnt=$1 pid
	mkdir -p "$mnt"
	env -u AWS_CA_BUNDLE RCLONE_CONFIG="$T/rclone.conf" rclone mount \
		"s3rver:$BUCKET" "$mnt" --log-file "$T/rclone.log" \
		--log-level NOTICE >>"$T/rclone.out" 2>&1 &
	pid=$!
	wait_mounted "$mnt" $pid || return 1
	MOUNTS+=("$mnt")
	MPIDS+=($pid)
	WALK=$mnt/$PREFIX
	BIGPATH=$mnt/$BIGKEY
}

now() { date +%s.%N; }

# timed SIZE OP TOOL RUN CMD...: runs CMD (stdout saved to $T/last.out),
# appends "size op tool run seconds" to the results
timed() {
	local size=$1 op=$2 tool=$3 run=$4 t0 t1
	shift 4
	t0=$(now)
	"$@" >"$T/last.out" 2>>"$T/errors.log"
	t1=$(now)
	printf '%s\t%s\t%s\t%s\t%s\n' "$size" "$op" "$tool" "$run" \
		"$(python3 -c "print(f'{$t1-$t0:.4f}')")" >>"$T/results.tsv"
	printf '%s\t%s\t%s\t%s\t%s\n' "$size" "$op" "$tool" "$run" \
		"$(head -c 60 "$T/last.out" | tr '\n\t' '  ')" >>"$T/outputs.tsv"
}

op_du() { du -s "$1"; }
op_lsr() { ls -lR "$1" | wc -l; }
op_find() { find "$1" -type f | wc -l; }
op_readall() { find "$1" -type f -name '*.ser*' -exec cat {} + | wc -c; }
op_big() { cat "$1" >/dev/null && echo ok; }

# raw: paged ListObjectsV2 of the prefix, max-keys=1000, following tokens
raw_list() {
	local tok="" page n=0 keys=0
	while :; do
		if [ -n "$tok" ]; then
			page=$(curl -sS -G "${SIG[@]}" --data-urlencode "continuation-token=$tok" \
				--data-urlencode list-type=2 --data-urlencode max-keys=1000 \
				--data-urlencode "prefix=$PREFIX/" "$ENDPOINT/$BUCKET")
		else
			page=$(curl -sS -G "${SIG[@]}" --data-urlencode list-type=2 \
				--data-urlencode max-keys=1000 \
				--data-urlencode "prefix=$PREFIX/" "$ENDPOINT/$BUCKET")
		fi
		n=$((n + 1))
		keys=$((keys + $(grep -o '<Key>' <<<"$page" | wc -l)))
		tok=$(sed -n 's:.*<NextContinuationToken>\([^<]*\)</NextContinuationToken>.*:\1:p' <<<"$page")
		[ -n "$tok" ] || break
	done
	echo "$keys keys in $n pages"
}
raw_get_seq() { curl -sS "${SIG[@]}" -K "$T/get.cfg" | wc -c; }
raw_get_par() { curl -sS --no-progress-meter "${SIG[@]}" --parallel --parallel-max 8 -K "$T/get.cfg" | wc -c; }
raw_big() { curl -sS "${SIG[@]}" -o /dev/null -w '%{size_download}\n' "$ENDPOINT/$BUCKET/$BIGKEY"; }

# requests on object keys (GET, HEAD) s3rver logged since line $1 of its
# log ("<key> 20x <ms> <size>")
s3_gets() {
	tail -n +"$(($1 + 1))" "$S3DIR/s3rver.log" | sed 's/\x1b\[[0-9;]*m//g' |
		grep -cE "^info: /?$PREFIX/[^ ]+ 20[06] "
}
s3_log_lines() { wc -l <"$S3DIR/s3rver.log"; }

stfs_counters() {
	grep -E '^stfs_(backend_(list|read|stat)_requests|backend_read_bytes|http_requests|http_retries|http_errors|fuse_getattr|fuse_readdir|fuse_lookup|fuse_getxattr)[a-z_]*_total ' \
		"$1/.stfs/stats" 2>/dev/null | tr '\n' ';'
}

# ---------------------------------------------------------------------------
setup_size() {
	local n=$1 jobs got t0
	S3DIR=$T/s3-$n
	local port
	port=$(freeport)
	DEADPORT=$(freeport)
	ENDPOINT=http://127.0.0.1:$port
	"$ROOT/scripts/s3rver.sh" start "$S3DIR" "$port" >/dev/null || return 1
	# genstate adds orphan jobs and a few .sertmp objects: 37 jobs -> 40
	# directories, 2,002 objects; the orphan count grows with the job
	# count, so a second pass corrects the number of jobs
	jobs=$((n / 50 - 3))
	NS=$T/state/checkpoint
	for pass in 1 2; do
		rm -rf "$T/state"
		python3 "$ROOT/scripts/genstate.py" --out "$T/state" --jobs $jobs \
			--pipelines 2 --checkpoints 25 --seed 5 --mix "$MIX" \
			--now-ms 1700000000000 >"$T/gen.log" 2>&1 || {
			cat "$T/gen.log"
			return 1
		}
		got=$(find "$NS" -mindepth 1 -maxdepth 1 -type d | wc -l)
		[ "$got" -eq $((n / 50)) ] && break
		[ $pass = 1 ] && jobs=$((jobs - got + n / 50))
	done
	got=$(find "$NS" -type f | wc -l)
	NDIRS=$(find "$NS" -mindepth 1 -maxdepth 1 -type d | wc -l)
	NBYTES=$(find "$NS" -type f -printf '%s\n' | awk '{s+=$1} END {print s}')
	NOBJ=$got
	: >"$T/up.cfg"
	: >"$T/get.cfg"
	while IFS= read -r -d '' f; do
		rel=${f#"$NS"/}
		printf 'upload-file = "%s"\nurl = "%s/%s/%s/%s"\noutput = "/dev/null"\n' \
			"$f" "$ENDPOINT" "$BUCKET" "$PREFIX" "$rel" >>"$T/up.cfg"
		printf 'url = "%s/%s/%s/%s"\n' "$ENDPOINT" "$BUCKET" "$PREFIX" "$rel" >>"$T/get.cfg"
	done < <(find "$NS" -type f -print0)
	# markers: s3rver hides "directories" that hold only sub-directories
	for m in seatunnel/ $PREFIX/ $BIGPREFIX/; do
		printf 'upload-file = "/dev/null"\nurl = "%s/%s/%s"\noutput = "/dev/null"\n' \
			"$ENDPOINT" "$BUCKET" "$m" >>"$T/up.cfg"
	done
	t0=$(now)
	curl -sS --no-progress-meter "${SIG[@]}" --parallel --parallel-max 8 -w '%{http_code}\n' \
		-K "$T/up.cfg" 2>>"$T/errors.log" | sort | uniq -c >"$T/up.codes"
	echo "bench: $NOBJ objects ($NBYTES bytes) in $NDIRS job directories uploaded in $(python3 -c "print(f'{$(now)-$t0:.1f}')") s: $(tr -s ' \n' ' ' <"$T/up.codes")(code counts)"
	if [ "${BENCH_NO_BIGOBJ:-0}" != 1 ]; then
		head -c $BIGSIZE /dev/urandom >"$T/big.bin"
		curl -sS "${SIG[@]}" -o /dev/null -w '' -T "$T/big.bin" "$ENDPOINT/$BUCKET/$BIGKEY"
		rm -f "$T/big.bin"
		echo "bench: uploaded one 256 MiB object $BIGKEY"
	fi
	# the engine of the namespace, for the engine-up rows
	rm -f "$T/sim.port"
	python3 "$ROOT/scripts/stsim.py" --scenario "$T/state/scenario.json" \
		--host 127.0.0.1 --port 0 --port-file "$T/sim.port" >"$T/sim.log" 2>&1 &
	SIMPID=$!
	for ((i = 0; i < 100; i++)); do
		[ -s "$T/sim.port" ] && break
		sleep 0.05
	done
	[ -s "$T/sim.port" ] || {
		echo "bench: the engine simulator did not start" >&2
		cat "$T/sim.log" >&2
		return 1
	}
	SIMURL=http://127.0.0.1:$(cat "$T/sim.port")
	echo "bench: job states $(python3 -c 'import collections,json,sys; c=collections.Counter(j["jobStatus"] for j in json.load(open(sys.argv[1]))["jobs"]); print(", ".join(f"{k} {v}" for k, v in c.most_common()))' "$T/state/scenario.json") (+ orphans), engine simulator at $SIMURL"
	echo 'S3RVER:S3RVER' >"$T/s3fs.passwd"
	chmod 600 "$T/s3fs.passwd"
	cat >"$T/rclone.conf" <<EOF
[s3rver]
type = s3
provider = Other
access_key_id = S3RVER
secret_access_key = S3RVER
endpoint = $ENDPOINT
region = us-east-1
force_path_style = true
EOF
}

bench_size() {
	local n=$1 run tool RUNS=$RUNS
	[ "$n" -gt 2000 ] && RUNS=${BENCH_BIG_RUNS:-1}
	setup_size "$n" || {
		echo "bench: setup for $n objects failed" >&2
		return 1
	}
	for ((run = 1; run <= RUNS; run++)); do
		echo "bench: $n objects, run $run/$RUNS"
		timed $n du_cold raw $run raw_list
		timed $n read_all raw $run raw_get_seq
		timed $n read_all_par8 raw $run raw_get_par
		[ "${BENCH_NO_BIGOBJ:-0}" = 1 ] || timed $n big raw $run raw_big
		# the engine up (the simulator on the namespace's scenario): a
		# fresh mount and state_dir, a cold du -s (before the other tools,
		# as the engine-down one)
		if STFS_ENGINE=$SIMURL STFS_SD=up-$run mount_stfs "$T/mnt-stfs"; then
			l0=$(s3_log_lines)
			timed $n du_cold_up stfs $run op_du "$WALK"
			printf '%s\t%s\t%s\t%s\n' "$n" "$run" stfs-up "$(s3_gets "$l0")" >>"$T/gets.tsv"
			printf '%s\t%s\t%s\n' "$n" "$run" \
				"$(stfs_counters "$T/mnt-stfs")" >>"$T/counters-up.tsv"
			umount_all
		fi
		for tool in stfs s3fs rclone; do
			"mount_$tool" "$T/mnt-$tool" || {
				echo "bench: $tool mount failed (see $tool logs)" >&2
				tail -5 "$T/$tool"*.log "$T/$tool.out" 2>/dev/null >&2
				umount_all
				continue
			}
			l0=$(s3_log_lines)
			timed $n du_cold $tool $run op_du "$WALK"
			printf '%s\t%s\t%s\t%s\n' "$n" "$run" "$tool" "$(s3_gets "$l0")" >>"$T/gets.tsv"
			[ $tool = stfs ] && printf '%s\t%s\t%s\n' "$n" "$run" \
				"$(stfs_counters "$T/mnt-stfs")" >>"$T/counters.tsv"
			timed $n du_warm $tool $run op_du "$WALK"
			timed $n ls_lR $tool $run op_lsr "$WALK"
			timed $n find $tool $run op_find "$WALK"
			[ $tool = stfs ] && printf '%s\t%s\t%s\n' "$n" "$run" \
				"$(stfs_counters "$T/mnt-stfs")" >>"$T/counters-meta.tsv"
			# the same walks once more: the steady state of an
			# unchanged tree (the first du -s after the cold one
			# makes one GETATTR per directory, as the kernel marks
			# the atime of each listing it read stale; README
			# "Performance, as measured here")
			timed $n du_steady $tool $run op_du "$WALK"
			timed $n ls_lR_steady $tool $run op_lsr "$WALK"
			timed $n find_steady $tool $run op_find "$WALK"
			[ $tool = stfs ] && printf '%s\t%s\t%s\n' "$n" "$run" \
				"$(stfs_counters "$T/mnt-stfs")" >>"$T/counters-steady.tsv"
			timed $n read_all $tool $run op_readall "$WALK"
			[ "${BENCH_NO_BIGOBJ:-0}" = 1 ] || timed $n big $tool $run op_big "$BIGPATH"
			[ $tool = stfs ] && [ "${BENCH_NO_BIGOBJ:-0}" != 1 ] &&
				printf '%s\t%s\t%s\n' "$n" "$run" \
					"$(stfs_counters "$T/mnt-stfs.big")" >>"$T/counters-big.tsv"
			umount_all
		done
		# a second first mount of the namespace, with the state_dir of the
		# first: the checkpoint types decoded then are remembered
		if mount_stfs "$T/mnt-stfs"; then
			timed $n du_cold_known stfs $run op_du "$WALK"
			umount_all
		fi
		# diagnostic: stfs's checkpoint subtrees alone, without the
		# per-job savepoints/ whose links need the type of every
		# checkpoint object (a fresh state_dir)
		if STFS_SD=pipes-$run mount_stfs "$T/mnt-stfs"; then
			timed $n du_cold_pipes stfs $run bash -c 'du -sc "$1"/*/pipelines | tail -1' _ "$WALK"
			printf '%s\t%s\t%s\n' "$n" "$run" \
				"$(stfs_counters "$T/mnt-stfs")" >>"$T/counters-pipes.tsv"
			umount_all
		fi
	done
	"$ROOT/scripts/s3rver.sh" stop "$S3DIR"
	S3DIR=""
	kill "$SIMPID" 2>/dev/null
	wait "$SIMPID" 2>/dev/null
	SIMPID=""
	python3 "$ROOT/scripts/bench-report.py" "$T" "$n" "$NOBJ" "$NDIRS" \
		"$NBYTES" "$RUNS" "$BIGSIZE"
}

start=$(now)
if [ "${BENCH_BIG:-0}" = 1 ]; then
	SIZES="2000 20000"
else
	SIZES=${BENCH_OBJECTS:-2000}
	[ "$SIZES" = 2000 ] &&
		echo "bench: 20,000-object mode skipped (BENCH_BIG=1 or BENCH_OBJECTS=20000 runs it; ~10 min per run)"
fi
rc=0
for n in $SIZES; do
	bench_size "$n" || rc=1
done
if [ -s "$T/errors.log" ]; then
	echo "bench: stderr of the timed commands (first lines):"
	sort "$T/errors.log" | uniq -c | sort -rn | head -8
fi
# the local section (issue 11): stfs over a local namespace vs the raw dir
[ "${BENCH_NO_LOCAL:-0}" = 1 ] || "$ROOT/scripts/bench-local.sh" || rc=1
# the WebHDFS section (issue 10): stfs vs `hdfs dfs` on a real MiniDFSCluster
[ "${BENCH_NO_HDFS:-0}" = 1 ] || "$ROOT/scripts/bench-hdfs.sh" || rc=1
echo "bench: total $(python3 -c "print(f'{$(now)-$start:.0f}')") s"
exit $rc
