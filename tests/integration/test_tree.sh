#!/bin/bash
# The merged tree on a real mount over the local backend and the engine
# simulator, checked with the tools operators and backup programs use.
. "$(dirname "$0")/lib.sh"

STATE=$T/state
python3 "$ROOT/scripts/genstate.py" --out "$STATE" --jobs 30 --seed 7 \
	--doc-jobs 2 --imap >"$T/gen.log" 2>&1 || { cat "$T/gen.log"; exit 1; }
NS=$STATE/checkpoint
start_sim "$STATE/scenario.json" a
PORT=$SIM_PORT_a
M=$T/mnt
OPTS="checkpoint=file://$NS/,engine=http://127.0.0.1:$PORT,imap=file://$STATE/imap/,state_dir=$T/statedir,timeout=2000,orphan_grace=10m"
mount_stfs "$M" -o "$OPTS" || { finish; exit 1; }

# what the engine knows, asked directly
engine_jobs_tsv "$PORT" >"$T/engine.tsv"
storage_ids=$(cd "$NS" && ls | grep -E '^[0-9]+$' | sort)
engine_ids=$(cut -f1 "$T/engine.tsv" | sort)
want=$(printf '%s\n%s\n' "$storage_ids" "$engine_ids" | sort -u | grep .)
got=$(ls "$M/jobs" | sort)
check_eq "jobs/ is the union of storage and engine ($(echo "$want" | wc -l) jobs)" "$want" "$got"

sp_only=$(ls "$NS/savepoint" 2>/dev/null | head -1)
if [ -n "$sp_only" ]; then
	check "a job with documented savepoint data is listed" test -d "$M/jobs/$sp_only"
fi
check ".stfs is hidden from the root listing" bash -c "! ls -a '$M' | grep -q '^.stfs$'"
check ".stfs/config is reachable by path" grep -q '^checkpoint' "$M/.stfs/config"

# state per job: engine's where it knows, ORPHAN/UNKNOWN where it doesn't
errs=0
while IFS=$'\t' read -r id st name; do
	s=$(getfattr --only-values -n user.stfs.state "$M/jobs/$id" 2>/dev/null)
	[ "$s" == "$st" ] || { echo "    $id: $s != $st"; errs=$((errs + 1)); }
	grep -q "^state *$st" "$M/jobs/$id/status" || errs=$((errs + 1))
	test -L "$M/by-state/$st/$id" || errs=$((errs + 1))
done <"$T/engine.tsv"
check_eq "engine states in xattr, status and by-state" 0 "$errs"
orph=0
for id in $storage_ids; do
	grep -q "^$id	" "$T/engine.tsv" && continue
	s=$(getfattr --only-values -n user.stfs.state "$M/jobs/$id")
	case $s in ORPHAN | UNKNOWN) orph=$((orph + 1)) ;; *) echo "    $id: $s" ;; esac
done
n_orph=$(for id in $storage_ids; do grep -q "^$id	" "$T/engine.tsv" || echo "$id"; done | wc -l)
check_eq "storage-only jobs are ORPHAN or UNKNOWN" "$n_orph" "$orph"
check "by-state/ORPHAN is a directory" test -d "$M/by-state/ORPHAN"
jobjson_ok() {
	local id
	for id in $engine_ids; do [ -f "$M/jobs/$id/job.json" ] || return 1; done
	for id in $storage_ids; do
		grep -q "^$id	" "$T/engine.tsv" && continue
		[ ! -e "$M/jobs/$id/job.json" ] || return 1
	done
}
check "engine-known jobs have job.json, storage-only ones do not" jobjson_ok

# job.json is the engine's job-info object
one=$(head -1 "$T/engine.tsv" | cut -f1)
check "job.json parses and names the job" python3 -c "
import json,sys; d=json.load(open('$M/jobs/$one/job.json')); sys.exit(d['jobId']!='$one')"

# by-name: names with '/' are written %2F
n_slash=$(cut -f3 "$T/engine.tsv" | grep -c / || true)
if [ "$n_slash" -gt 0 ]; then
	check "by-name escapes '/' as %2F" bash -c "ls '$M/by-name' | grep -q '%2F'"
fi
check "by-name links resolve to job directories" bash -c "
	for d in '$M'/by-name/*/*; do [ -d \"\$d\" ] || exit 1; done"

# du -sb of every real-layout job's pipelines/ (less the pseudo-files) equals the raw bytes
errs=0 n=0
for id in $storage_ids; do
	[ -n "$(find "$NS/$id" -mindepth 1 -type d -print -quit)" ] && continue # doc layout
	raw=$(find "$NS/$id" -type f -printf '%s\n' | awk '{s+=$1} END {print s+0}')
	mnt=$(du -sb --exclude=latest --exclude=status --exclude=info "$M/jobs/$id/pipelines" | cut -f1)
	n=$((n + 1))
	[ "$raw" == "$mnt" ] || { echo "    $id: raw $raw, mount $mnt"; errs=$((errs + 1)); }
done
check_eq "du -sb of pipelines/ (less status, latest, info) equals the raw bytes ($n jobs)" 0 "$errs"

# every raw object appears exactly once, under its own name, same bytes
errs=0
while read -r f; do
	id=${f%%/*}
	name=${f#*/}
	pid=$(echo "$name" | cut -d- -f3)
	cid=$(echo "$name" | cut -d- -f4 | cut -d. -f1)
	cmp -s "$NS/$f" "$M/jobs/$id/pipelines/$pid/checkpoints/$cid/$name" || errs=$((errs + 1))
done < <(cd "$NS" && find . -type f -name '*.ser*' -path './[0-9]*' -printf '%P\n' |
	awk -F/ 'NF==2')
check_eq "real-layout objects are byte-identical under checkpoints/<cid>/" 0 "$errs"

# tar of the mount, extracted, is byte-identical to the raw files
mkdir -p "$T/untar"
(cd "$M/jobs" && tar -cf - --exclude=latest ./*/pipelines 2>"$T/tar.err") | tar -C "$T/untar" -xf -
check "tar of jobs/*/pipelines exits cleanly" test ! -s "$T/tar.err"
errs=0
for f in $(cd "$T/untar" && find . -type f -name '*.ser*'); do
	cmp -s "$T/untar/$f" "$NS/$(echo "$f" | awk -F/ '{print $2"/"$NF}')" || errs=$((errs + 1))
done
cnt=$(cd "$T/untar" && find . -type f -name '*.ser*' | wc -l)
rawcnt=$(cd "$NS" && find . -mindepth 2 -maxdepth 2 -type f -name '*.ser*' -path './[0-9]*' | wc -l)
check_eq "tar round trip holds every real-layout object" "$rawcnt" "$cnt"
check_eq "tar round trip is byte-identical" 0 "$errs"

# documented layout: <cid>/<task-location>/state-data
doc=$(cd "$NS" && find . -mindepth 4 -type f -name state-data -path './[0-9]*' -printf '%P\n' | head -1)
if [ -n "$doc" ]; then
	id=$(echo "$doc" | cut -d/ -f1)
	rest=$(echo "$doc" | cut -d/ -f2-)
	pid=$(echo "$rest" | cut -d/ -f1)
	cid=$(echo "$rest" | cut -d/ -f2)
	tl=$(echo "$rest" | cut -d/ -f3-)
	check "documented layout: checkpoints/<cid>/<task-location>/state-data" \
		cmp -s "$NS/$doc" "$M/jobs/$id/pipelines/$pid/checkpoints/$cid/$tl"
	maxcid=$(ls "$NS/$id/$pid" | sort -n | tail -1)
	check_eq "documented layout: latest is the greatest checkpoint id" "$maxcid" \
		"$(readlink "$M/jobs/$id/pipelines/$pid/checkpoints/latest")"
fi
spdoc=$(cd "$NS" && find savepoint -type f -printf '%P\n' 2>/dev/null | head -1)
if [ -n "$spdoc" ]; then
	id=${spdoc%%/*}
	check "documented savepoint data under savepoints/" \
		cmp -s "$NS/savepoint/$spdoc" "$M/jobs/$id/savepoints/${spdoc#*/}"
fi

# latest = greatest write timestamp among finished .ser (real layout)
errs=0 n=0
for id in $storage_ids; do
	for p in $(ls "$NS/$id" | grep '\.ser$' | cut -d- -f3 | sort -u); do
		best=$(ls "$NS/$id" | grep "^[0-9]*-[0-9]*-$p-[0-9]*\.ser$" | sort -t- -k1,1n -k2,2n | tail -1)
		cid=$(echo "$best" | cut -d- -f4 | cut -d. -f1)
		got=$(readlink "$M/jobs/$id/pipelines/$p/checkpoints/latest")
		n=$((n + 1))
		[ "$cid" == "$got" ] || { echo "    $id/$p: $got, want $cid"; errs=$((errs + 1)); }
	done
done
check_eq "latest -> the greatest write timestamp ($n pipelines)" 0 "$errs"
rp=$(find "$M/jobs" -path '*/checkpoints/latest' | head -1)
if [ -n "$rp" ]; then
	obj=$(ls "$rp/" | grep -v sertmp | head -1)
	check_eq "user.stfs.restore_point on the restore point" yes \
		"$(getfattr --only-values -n user.stfs.restore_point "$rp/$obj")"
fi

# real-layout savepoints appear as links under savepoints/
spl=$(find "$M/jobs" -maxdepth 3 -path '*/savepoints/*' -type l | head -1)
if [ -n "$spl" ]; then
	check "a savepoint link resolves to its checkpoint directory" test -d "$spl/"
	f=$(ls "$spl/" | grep '\.ser$' | head -1)
	check_eq "the linked object is a savepoint" savepoint \
		"$(getfattr --only-values -n user.stfs.checkpoint_type "$spl/$f")"
fi

# a running job that was not resumed from a savepoint holds none: listing
# its savepoints/ reads no checkpoint header
reads() { sed -n 's/^stfs_backend_read_requests_total //p' "$M/.stfs/stats"; }
run=$(ls "$M/by-state/RUNNING" | while read -r id; do
	[ -d "$NS/$id" ] && grep -q '"isStartWithSavePoint":false' "$M/jobs/$id/job.json" && echo "$id"; done | head -1)
if [ -n "$run" ]; then
	r0=$(reads)
	ls "$M/jobs/$run/savepoints" >/dev/null
	cat "$M/jobs/$run/deletable" >/dev/null
	check_eq "savepoints/ of a running, not resumed job reads no header" "$r0" "$(reads)"
fi

# stat, read, stat agree; sizes are exact
errs=0
for f in "$M"/jobs/*/status "$M"/jobs/*/metrics "$M"/jobs/*/job.json "$M/stfs.prom"; do
	s1=$(stat -c %s "$f")
	r=$(wc -c <"$f")
	s2=$(stat -c %s "$f")
	[ "$s1" == "$r" ] && [ "$r" == "$s2" ] || { echo "    $f: $s1 $r $s2"; errs=$((errs + 1)); }
done
check_eq "stat, read, stat agree on pseudo-files" 0 "$errs"
check "st_blocks is ceil(size/512)" bash -c "
	find '$M/jobs' -type f -printf '%s %b\n' | awk '{ if (\$2 != int((\$1+511)/512)) exit 1 }'"
check "mtimes come from the sources (none in the future)" bash -c "
	now=\$(date +%s); find '$M/jobs' -printf '%T@\n' | awk -v n=\$now '{ if (\$1 > n + 1) exit 1 }'"

# imap/: raw WAL files as they are, and a decoded summary beside each map
errs=0 n=0
while read -r f; do
	n=$((n + 1))
	cmp -s "$STATE/imap/$f" "$M/imap/$f" || errs=$((errs + 1))
done < <(cd "$STATE/imap" && find . -type f -printf '%P\n')
check_eq "imap/ holds the $n WAL files byte for byte" 0 "$errs"
two=$(cd "$STATE/imap" && for m in */*/; do [ "$(ls "$m" | wc -l)" -ge 2 ] && echo "${m%/}"; done | head -1)
if [ -n "$two" ]; then
	old=$(ls "$STATE/imap/$two" | sort -n | head -1)
	check "the older region of $two is reported superseded" \
		grep -q "^$old .*superseded" "$M/imap/$two.summary"
	check "the summary counts tombstones" grep -q '^tombstones' "$M/imap/$two.summary"
fi

# Prometheus text
# promtool comes with the deps step (Debian's prometheus): missing is a failure
check "promtool accepts every metrics file and stfs.prom" bash -c "
	command -v promtool >/dev/null || { echo 'promtool missing'; exit 1; }
	for f in '$M'/jobs/*/metrics '$M/stfs.prom'; do
		out=\$(promtool check metrics <\"\$f\" 2>&1) || { echo \"\$f: \$out\"; exit 1; }
		[ -z \"\$out\" ] || { echo \"\$f: \$out\"; exit 1; }
	done"
check "metrics has the job state sample" grep -q '^seatunnel_job_state{' "$M/jobs/$one/metrics"

# xattrs: getfattr -d works everywhere, listxattr never fails
check "getfattr -d on a job directory shows user.stfs.state" \
	bash -c "getfattr -d '$M/jobs/$one' | grep -q user.stfs.state"
check "getfattr -R -d over the whole tree exits 0" \
	bash -c "getfattr -R -d '$M/jobs' '$M/by-state' >/dev/null 2>'$T/getfattr.err'"

# inode numbers: stable within a mount and across a remount
find "$M/jobs" -printf '%i %P\n' | sort >"$T/ino1"
rsync -a "$M/jobs/" "$T/rsync/" 2>"$T/rsync1.err"
check "rsync -a of the mount exits cleanly" test ! -s "$T/rsync1.err"
unmount_stfs "$M"
mount_stfs "$M" -o "$OPTS"
find "$M/jobs" -printf '%i %P\n' | sort >"$T/ino2"
check "inode numbers are equal across a remount" cmp -s "$T/ino1" "$T/ino2"
n=$(rsync -a --stats "$M/jobs/" "$T/rsync/" 2>&1 | sed -n 's/^Number of regular files transferred: //p')
check_eq "a second rsync -a transfers nothing" 0 "$n"

# restic reads the tree (listxattr must not fail)
export RESTIC_PASSWORD=stfs-test
restic init -q -r "$T/restic" >/dev/null 2>&1
restic backup -q -r "$T/restic" "$M/jobs" >"$T/restic.log" 2>&1
check "restic backup of jobs/ succeeds" test $? = 0

# remount read-only: every mutation gets EROFS (R5)
unmount_stfs "$M"
mount_stfs "$M" -o "$OPTS,ro"
# with ro nothing can be changed: EROFS/EPERM at once, storage untouched
(cd "$NS" && find . -printf '%P %s %T@\n' | sort) >"$T/before"
job=$(echo "$storage_ids" | head -1)
obj=$(find "$M/jobs/$job/pipelines" -type f -name '*.ser' | head -1)
refused() { # refused CMD...: fails with EROFS or EPERM
	local err
	err=$("$@" 2>&1) && return 1
	echo "$err" | grep -qE 'Read-only file system|Operation not permitted'
}
check "rm of a checkpoint object is refused" refused rm -f "$obj"
check "rm -r of a job is refused" refused rm -rf "$M/jobs/$job"
check "touch is refused" refused touch "$M/jobs/$job/newfile"
check "mkdir is refused" refused mkdir "$M/jobs/$job/d"
check "mv is refused" refused mv "$obj" "$obj.x"
check "chmod is refused" refused chmod 600 "$obj"
check "writing a file is refused" refused bash -c "echo x >> '$obj'"
check "ln -s is refused" refused ln -s x "$M/jobs/$job/l"
check "setfattr is refused" refused setfattr -n user.x -v 1 "$obj"
(cd "$NS" && find . -printf '%P %s %T@\n' | sort) >"$T/after"
check "the storage is unchanged after every refused call" cmp -s "$T/before" "$T/after"

# engine trouble: the tree stays browsable from storage, within the deadline
kill -STOP "$SIM_PID_a"
sleep 3.5 # let the cached lists expire
t0=$(date +%s%N)
ls "$M/jobs" >"$T/ls-hung" 2>&1
cat "$M/jobs/$job/status" >"$T/st-hung" 2>&1
dt=$((($(date +%s%N) - t0) / 1000000))
t0=$(date +%s%N)
timeout -s INT 0.5 cat "$M/cluster/overview.json" >/dev/null 2>&1
dt2=$((($(date +%s%N) - t0) / 1000000))
kill -CONT "$SIM_PID_a"
check "ls and cat return within the deadline while the engine hangs (${dt} ms)" test "$dt" -lt 6000
check "Ctrl-C interrupts a cat waiting on a hung engine (${dt2} ms)" test "$dt2" -lt 1500
check "storage jobs are still listed while the engine hangs" grep -q "^$job$" "$T/ls-hung"
# 60 readers of cluster/ against a hung engine: one fetch in flight, the
# others wait for it or take the stale copy; the mount is not stalled
kill -STOP "$SIM_PID_a"
sleep 3.5
cpids=()
t0=$(date +%s%N)
for _ in $(seq 60); do
	cat "$M/cluster/overview.json" >/dev/null 2>&1 &
	cpids+=($!)
done
sleep 0.3
t1=$(date +%s%N)
ls "$M/jobs" >"$T/ls-hung2" 2>&1
dls=$((($(date +%s%N) - t1) / 1000000))
wait "${cpids[@]}"
dt=$((($(date +%s%N) - t0) / 1000000))
kill -CONT "$SIM_PID_a"
check "60 parallel cat cluster/overview.json return within the deadline while the engine hangs (${dt} ms)" \
	test "$dt" -lt 4500
check "ls jobs/ from another shell is not stalled meanwhile (${dls} ms)" test "$dls" -lt 1000
check "... and lists the storage jobs" grep -q "^$job$" "$T/ls-hung2"
sim_ctl "$PORT" POST /__sim/fault '{"mode":"garbage"}' >/dev/null
sleep 3.5
ls "$M/jobs" >/dev/null # starts a background refresh, which fails
sleep 3.5               # ... and the pseudo-file cache expires
check "status says the engine is unreachable on garbage answers" \
	grep -q 'engine unreachable\|last known' "$M/jobs/$job/status"
sim_ctl "$PORT" POST /__sim/fault '{"mode":"none"}' >/dev/null

unmount_stfs "$M"
check "the daemon exits after unmount" bash -c "! kill -0 $STFS_PID 2>/dev/null"

# several engines: a dead first one fails over to the live one
mount_stfs "$M" -o "checkpoint=file://$NS/,engine=http://127.0.0.1:1,engine=http://127.0.0.1:$PORT,state_dir=$T/statedir,timeout=2000"
one_state=$(head -1 "$T/engine.tsv" | cut -f2)
check_eq "a dead first engine URL fails over to the second" "$one_state" \
	"$(getfattr --only-values -n user.stfs.state "$M/jobs/$one" 2>/dev/null)"
unmount_stfs "$M"

# 2.3.x: one finished job without its DAG makes /finished-jobs (and the list
# of its state) a 500; only that job may turn UNKNOWN (needs the simulator's
# __missingDag, scripts/stsim.py --version 2.3)
failed_ids=$(for id in $storage_ids; do
	grep -q "^$id	FAILED	" "$T/engine.tsv" && echo "$id"
done)
bad_id=$(echo "$failed_ids" | head -1)
good_id=$(echo "$failed_ids" | sed -n 2p)
run_id=$(awk -F'\t' '$2 == "RUNNING" { print $1; exit }' "$T/engine.tsv")
if [ -n "$bad_id" ] && [ -n "$good_id" ] && [ -n "$run_id" ]; then
	sim_ctl "$PORT" POST /__sim/job "{\"jobId\":\"$bad_id\",\"__missingDag\":true}" >/dev/null
	code=$(curl -s -o /dev/null -w '%{http_code}' -m 5 "http://127.0.0.1:$PORT/finished-jobs/")
	check_eq "the simulator answers /finished-jobs/ with a 500 (missing DAG)" 500 "$code"
	mount_stfs "$M" -o "$OPTS"
	check_eq "a job whose own answers fail is UNKNOWN" UNKNOWN \
		"$(getfattr --only-values -n user.stfs.state "$M/jobs/$bad_id" 2>/dev/null)"
	check_eq "another FAILED job keeps its state (per-state list, then job-info)" FAILED \
		"$(getfattr --only-values -n user.stfs.state "$M/jobs/$good_id" 2>/dev/null)"
	check_eq "a running job keeps its state" RUNNING \
		"$(getfattr --only-values -n user.stfs.state "$M/jobs/$run_id" 2>/dev/null)"
	n_unknown=0
	for id in $engine_ids; do
		[ -L "$M/by-state/UNKNOWN/$id" ] && n_unknown=$((n_unknown + 1))
	done
	check_eq "only that engine job is UNKNOWN" 1 "$n_unknown"
	unmount_stfs "$M"
	sim_ctl "$PORT" POST /__sim/job "{\"jobId\":\"$bad_id\",\"__missingDag\":false}" >/dev/null
else
	bad "the scenario has two FAILED jobs in storage and a RUNNING one"
fi

# mount(8) from an fstab line runs "stfs <device> <mountpoint> -o ..."
mount_stfs "$M" stfs -o "$OPTS"
check "an fstab-style invocation (device argument) mounts" test -d "$M/jobs/$job"
unmount_stfs "$M"

# ---- hostile names and ids (issue 7 B9, B10): a separate small cluster
H=$T/hostile
mkdir -p "$H/ns/5001" "$H/ns/05001" "$H/ns/5002" "$H/ns/5003" "$H/imap/c1/m1/1"
old=202001010000
for d in 5001 05001 5002 5003; do
	printf 'x%.0s' $(seq 64) >"$H/ns/$d/1577836800000-1-1-1.ser"
	touch -t $old "$H/ns/$d/1577836800000-1-1-1.ser"
done
mkdir -p "$H/imap/c1/"$'evil\nstate       FINISHED\e[31m'/1
: >"$H/imap/c1/"$'evil\nstate       FINISHED\e[31m'/1/wal.txt
: >"$H/imap/c1/m1/1/wal.txt"
mkdir -p "$H/imap/c1/m1/"$'r\e]0;pwn\a'
: >"$H/imap/c1/m1/"$'r\e]0;pwn\a'/wal.txt
python3 - "$H/scenario.json" <<'PY'
import json, sys
forge = "x\nstate       FINISHED\nreleased    yes\ndeletable   yes\n\x1b]0;pwned\x07\x1b[2J\u202e"
jobs = [
    {"jobId": "5001", "jobName": forge, "jobStatus": "FAILED",
     "createTime": "2020-01-01 00:00:00", "finishTime": "2020-01-01 00:10:00",
     "errorMsg": "bad \x1b[31mthing\x1b[0m\rdeletable   yes\nat stack",
     "jobDag": {"jobId": "5001", "pipelineEdges": {"1": []}},
     "metrics": {"SinkWriteCount": "3", "SourceReceivedCount": "-4",
                 "TableSinkWriteCount": {"db.\x1b[31mt": "3", "Sink[0].db.t9": "2"}}},
    # the engine writes an id with a leading zero: it is job 5002
    {"jobId": "05002", "jobName": "lead", "jobStatus": "RUNNING",
     "createTime": "2020-01-01 00:00:00",
     "jobDag": {"jobId": "05002", "pipelineEdges": {"1": []}}, "metrics": {}},
    # a jobStatus stfs does not know
    {"jobId": "5003", "jobName": "new", "jobStatus": "REVIVING\x1b[5m",
     "createTime": "2020-01-01 00:00:00",
     "jobDag": {"jobId": "5003", "pipelineEdges": {"1": []}}, "metrics": {}},
]
json.dump({"format": "stsim-scenario/1", "timezone": "UTC", "jobs": jobs},
          open(sys.argv[1], "w"))
PY
start_sim "$H/scenario.json" h
HM=$T/mh
mount_stfs "$HM" -o "checkpoint=file://$H/ns/,engine=http://127.0.0.1:$SIM_PORT_h,imap=file://$H/imap/,state_dir=$T/statedir-h,timeout=2000,orphan_grace=10m"
st=$(cat "$HM/jobs/5001/status")
check "status of a job whose name holds newlines has one state line" \
	test "$(grep -c '^state' <<<"$st")" = 1
check "... and one released and one deletable line" \
	test "$(grep -c '^released' <<<"$st")" = 1 -a "$(grep -c '^deletable' <<<"$st")" = 1
check_eq "... the state line is the engine's" "state       FAILED" "$(grep '^state' <<<"$st")"
check_eq "... the name is shown escaped on one line" \
	'name        x\nstate       FINISHED\nreleased    yes\ndeletable   yes\n\x1b]0;pwned\x07\x1b[2J\xe2\x80\xae' \
	"$(grep '^name' <<<"$st")"
check_eq "... the error message too (its first line)" \
	'error       bad \x1b[31mthing\x1b[0m\rdeletable   yes' "$(grep '^error' <<<"$st")"
nocc() { # nocc FILE...: no control byte but newline, no C1/bidi in UTF-8
	! cat "$@" | LC_ALL=C grep -qP '[\x00-\x09\x0b-\x1f\x7f]|\xc2[\x80-\x9f]|\xe2\x80[\xaa-\xae]'
}
check "status, pipeline status, deletable hold no control character" \
	nocc "$HM/jobs/5001/status" "$HM/jobs/5001/pipelines/1/status" "$HM/jobs/5001/deletable"
check "metrics hold no control character" nocc "$HM/jobs/5001/metrics" "$HM/stfs.prom"
if command -v promtool >/dev/null; then
	check "promtool accepts the hostile job's metrics" bash -c "
		promtool check metrics <'$HM/jobs/5001/metrics' >/dev/null 2>&1"
fi
check "a 3.x table key gets a vertex and a table label" grep -qF \
	'seatunnel_job_table_sink_write_count_total{job_id="5001",job_name="x\nstate       FINISHED\nreleased    yes\ndeletable   yes\n\\x1b]0;pwned\\x07\\x1b[2J\\xe2\\x80\\xae",vertex="Sink[0]",table="db.t9"} 2' \
	"$HM/jobs/5001/metrics"
check "a negative counter sample is dropped" bash -c "
	! grep -q '^seatunnel_job_source_received_count_total' '$HM/jobs/5001/metrics'"
check "imap summaries hold no control character" nocc "$HM"/imap/c1/*.summary
check "... and show the map and region names escaped" bash -c "
	grep -qF 'evil\\nstate       FINISHED\\x1b[31m' '$HM'/imap/c1/evil*.summary &&
	grep -qF 'r\\x1b]0;pwn\\x07' '$HM/imap/c1/m1.summary'"
# B10: one canonical id everywhere
ls "$HM/jobs" >"$T/h-jobs"
check_eq "jobs/ lists each job once, canonical ids only" "5001 5002 5003" "$(sort "$T/h-jobs" | xargs)"
check_eq "the engine's 05002 is job 5002 (RUNNING)" RUNNING \
	"$(getfattr --only-values -n user.stfs.state "$HM/jobs/5002" 2>/dev/null)"
check "... and not an orphan" test ! -e "$HM/by-state/ORPHAN/5002"
for p in jobs/05001 jobs/05002 jobs/005001 jobs/+5001 "jobs/ 5001" jobs/5001x \
	by-state/RUNNING/05002 by-state/FAILED/05001; do
	err=$(stat "$HM/$p" 2>&1 >/dev/null)
	check_eq "stat $p is ENOENT" ENOENT "$(errno_of_msg <<<"$err")"
done
check "the non-canonical storage directory 05001 is untouched" \
	test -s "$H/ns/05001/1577836800000-1-1-1.ser"
# a jobStatus stfs does not know: shown as the engine said, UNKNOWN for the rules
st=$(cat "$HM/jobs/5003/status")
check_eq "an unknown jobStatus is shown as the engine said it" \
	'state       UNKNOWN (the engine says "REVIVING\x1b[5m", a state stfs does not know)' \
	"$(grep '^state' <<<"$st")"
check "... and rm is refused as for UNKNOWN (R3)" bash -c "
	grep -q '^deletable *no EAGAIN R3' <<<'$st' &&
	! rm -f '$HM/jobs/5003/pipelines/1/checkpoints/1/1577836800000-1-1-1.ser' 2>/dev/null &&
	test -s '$H/ns/5003/1577836800000-1-1-1.ser'"
unmount_stfs "$HM"

# options are checked before mounting
out=$("$STFS" -o timeout=abc "$T/nomnt" 2>&1)
rc=$?
check "a bad option value is refused before mounting (rc=$rc)" test "$rc" = 1 -a -n "$out"
printf 'checkpoint = file:///tmp/x/\nbogus line\n' >"$T/bad.conf"
out=$("$STFS" -o config="$T/bad.conf" "$T/nomnt" 2>&1)
check "a bad config line is reported with file and line" grep -q "bad.conf:2:" <<<"$out"
out=$("$STFS" -o secret_key=hunter2 "$T/nomnt" 2>&1)
check "a secret on the command line is refused" test $? = 1
out=$("$STFS" -o engine=http://ops:PASSWORD-9@m1:8080 "$T/nomnt" 2>&1)
rc=$?
check "an engine URL with credentials is refused without echoing them (rc=$rc)" \
	bash -c "test $rc = 1 && grep -q 'http://\*\*\*@m1:8080' <<<'$out' && ! grep -q PASSWORD <<<'$out'"
printf 'seatunnel:\n engine:\n  http:\n   enable-basic-auth: true\n   basic-auth-password: YAML-SECRET-3\n' >"$T/st.yaml"
chmod 644 "$T/st.yaml"
out=$("$STFS" -o seatunnel_yaml="$T/st.yaml" "$T/nomnt" 2>&1)
rc=$?
check "a seatunnel.yaml holding a secret and readable by others is refused (rc=$rc)" \
	bash -c "test $rc = 1 && grep -q 'st.yaml:5:.*chmod 600' <<<'$out' && ! grep -q YAML-SECRET <<<'$out'"
finish
