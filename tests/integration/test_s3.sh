#!/bin/bash
# The S3 backend on a real mount, against both fake S3 servers: plain
# s3rver 3.7.1 and the SigV4-verifying fork (every request checked).  For
# each, a generated namespace is uploaded, mounted through s3:// and
# compared with the same namespace mounted through file://, then:
# the local suite's checks (union listing, du, tar, stat/read/stat,
# inodes across a remount, rsync, getfattr), hostile key names, paging
# with max-keys 7, deletion by the rules (release + rm -r, EPERM, EBUSY)
# checked in the bucket itself, and a stopped (kill -STOP) server.  The
# fork also gets a wrong secret (EACCES, health degraded); the plain one
# runs behind scripts/faultproxy.py for 503 SlowDown storms and a server
# that returns keys holding "..".  Needs node/npm (scripts/s3rver.sh
# installs s3rver once).  STFS_BIN overrides the binary under test.
. "$(dirname "$0")/lib.sh"
STFS=${STFS_BIN:-$STFS}

if ! command -v node >/dev/null || ! command -v npm >/dev/null; then
	# deps.sh installs them: their absence is a broken machine, not a pass
	bad "node and npm are needed to run s3rver (scripts/deps.sh installs them)"
	finish
	exit 1
fi

TMO=2000 # request deadline of every mount, ms
STATE=$T/state
python3 "$ROOT/scripts/genstate.py" --out "$STATE" --jobs 10 --seed 3 \
	>"$T/gen.log" 2>&1 || { cat "$T/gen.log"; exit 1; }
NS=$STATE/checkpoint
PREFIX=seatunnel/checkpoint
export AWS_ACCESS_KEY_ID=S3RVER AWS_SECRET_ACCESS_KEY=S3RVER
SIG=(--aws-sigv4 aws:amz:us-east-1:s3 --user S3RVER:S3RVER
	-H x-amz-content-sha256:UNSIGNED-PAYLOAD)

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
# enc STR [SAFE]: percent-encoded as AWS wants (keep A-Za-z0-9 and SAFE)
enc() { python3 -c 'import sys,urllib.parse;print(urllib.parse.quote(sys.argv[1],safe=sys.argv[2]))' "$1" "${2--_.~/}"; }
ms_since() { echo $((($(date +%s%N) - $1) / 1000000)); }
alive() { kill -0 "$1" 2>/dev/null; }

start_sim "$STATE/scenario.json" a
PORT=$SIM_PORT_a
# what the engine knows, asked directly
engine_jobs_tsv "$PORT" >"$T/engine.tsv"
storage_ids=$(cd "$NS" && ls | grep -E '^[0-9]+$' | sort)
engine_ids=$(cut -f1 "$T/engine.tsv" | sort)
WANT_JOBS=$(printf '%s\n%s\n' "$storage_ids" "$engine_ids" | sort -u | grep .)
state_of() { awk -F'\t' -v i="$1" '$1 == i { print $2 }' "$T/engine.tsv"; }
pick() { # pick STATE...: the first job with storage in one of the states
	local id s
	for id in $storage_ids; do
		s=$(state_of "$id")
		for w in "$@"; do [ "$s" == "$w" ] && { echo "$id"; return; }; done
	done
}
REL_ID=$(pick FAILED)                                              # released, rm -r
PROT_ID=$(for id in $storage_ids; do [ "$id" != "$REL_ID" ] && echo "$id"; done |
	while read -r id; do case $(state_of "$id") in FAILED | UNKNOWABLE) echo "$id"; break ;; esac; done)
RUN_ID=$(pick RUNNING)
ORPH_ID=$(for id in $storage_ids; do [ -z "$(state_of "$id")" ] && echo "$id"; done | head -1)
if [ -z "$REL_ID" ] || [ -z "$PROT_ID" ] || [ -z "$RUN_ID" ] || [ -z "$ORPH_ID" ]; then
	bad "the generated scenario has FAILED, FAILED/UNKNOWABLE, RUNNING and orphan jobs with storage"
	finish
	exit 1
fi
# the protected job is a second FAILED one
sim_ctl "$PORT" POST /__sim/job "{\"jobId\":\"$PROT_ID\",\"jobStatus\":\"FAILED\"}" >/dev/null

COMMON="engine=http://127.0.0.1:$PORT,imap=file://$STATE/imap/,timeout=$TMO,orphan_grace=10m"
mount_stfs "$T/mloc" -o "checkpoint=file://$NS/,state_dir=$T/sd-loc,$COMMON" || {
	finish
	exit 1
}
LOC_PID=$STFS_PID

# upload_ns PORT: every file of the namespace, plus a zero-byte marker per
# directory (s3rver omits a "directory" holding only sub-directories from
# CommonPrefixes; Hadoop connectors may write such markers too, and stfs
# must hide them).  Prints the distinct HTTP codes.
upload_ns() {
	local e=http://127.0.0.1:$1/ckpt cfg=$T/upload-$1.cfg f d rel
	: >"$cfg"
	while IFS= read -r -d '' f; do
		rel=${f#"$NS"/}
		printf 'upload-file = "%s"\nurl = "%s/%s/%s"\noutput = "/dev/null"\n' \
			"$f" "$e" "$PREFIX" "$rel" >>"$cfg"
	done < <(find "$NS" -type f -print0)
	# markers: "-T file" would append the file's name to a URL ending in
	# '/', so these are PUTs of an empty body
	: >"$cfg.m"
	while IFS= read -r -d '' d; do
		rel=${d#"$NS"}
		printf 'url = "%s/%s%s/"\noutput = "/dev/null"\n' \
			"$e" "$PREFIX" "$rel" >>"$cfg.m"
	done < <(find "$NS" -type d -print0)
	printf 'url = "%s/seatunnel/"\noutput = "/dev/null"\n' "$e" >>"$cfg.m"
	{
		curl -sS --no-progress-meter "${SIG[@]}" --parallel --parallel-max 8 \
			-w '%{http_code}\n' -K "$cfg"
		curl -sS --no-progress-meter "${SIG[@]}" --parallel --parallel-max 8 \
			-X PUT --data-binary '' -w '%{http_code}\n' -K "$cfg.m"
	} | sort -u | tr -d '\n'
}
# put PORT KEY FILE: one object (KEY relative to the bucket) -> HTTP code
put() {
	curl -s -o /dev/null -w '%{http_code}' "${SIG[@]}" -T "$3" \
		"http://127.0.0.1:$1/ckpt/$(enc "$2")"
}
# bucket_keys PORT KEYPREFIX: the keys under it, asked by a signed listing
bucket_keys() {
	curl -s -m 5 "${SIG[@]}" \
		"http://127.0.0.1:$1/ckpt?list-type=2&prefix=$(enc "$2" -_.~)" |
		grep -o '<Key>[^<]*</Key>' | sed 's/<Key>//; s/<\/Key>//'
}
# mount_s3 MNT ENDPOINT_PORT STATE_DIR [EXTRA_OPTS]
mount_s3() {
	mount_stfs "$1" -o "checkpoint=s3://ckpt/$PREFIX/,endpoint=http://127.0.0.1:$2,region=us-east-1,path_style,state_dir=$3,$COMMON${4:+,$4}"
}
listing() { (cd "$1/jobs" && find . -path '*checkpoints*' -type f -printf '%p %s\n' | sort); }
# tree: every entry's path and type, with sizes of the storage objects
tree() { (cd "$1/jobs" && find . -printf '%p %y\n' -path '*checkpoints*' -type f -printf '%p %s\n' | sort); }
# fails_with PATTERN CMD...: the command fails and says PATTERN
fails_with() {
	local pat=$1 err
	shift
	err=$("$@" 2>&1) && return 1
	echo "$err" | grep -qE "$pat" || { echo "    got: $err"; return 1; }
}

# ---------------------------------------------------------------------------
# checks shared by both servers.  V: variant name, SP: server port,
# SD: server directory.
variant() {
	V=$1
	local flag=$2 M=$T/s3-$1 errs n id raw mnt f s1 r s2 p
	SD=$T/srv-$V
	SP=$(free_port)
	"$ROOT/scripts/s3rver.sh" start "$SD" "$SP" $flag >/dev/null || {
		bad "[$V] s3rver starts"
		return 1
	}
	SPID=$(cat "$SD/s3rver.pid")
	PIDS+=("$SPID")
	local nfiles
	nfiles=$(find "$NS" -type f | wc -l)
	check_eq "[$V] uploaded $nfiles files (all 200)" 200 "$(upload_ns "$SP")"

	mount_s3 "$M" "$SP" "$T/sd-$V" || {
		bad "[$V] s3:// mount (see the daemon log above)"
		return 1
	}
	ok "[$V] s3:// mount"

	# -- the local suite's checks -------------------------------------------
	check_eq "[$V] jobs/ is the union of storage and engine" "$WANT_JOBS" "$(ls "$M/jobs" | sort)"
	local L1 L2
	L1=$(listing "$T/mloc")
	L2=$(listing "$M")
	check "[$V] checkpoint files are listed ($(echo "$L1" | grep -c .))" test -n "$L1"
	check_eq "[$V] same checkpoint files and sizes as file://" "$L1" "$L2"
	errs=0
	while read -r p _; do
		cmp -s "$T/mloc/jobs/$p" "$M/jobs/$p" || {
			echo "    differs: $p"
			errs=$((errs + 1))
		}
	done <<<"$L1"
	check_eq "[$V] same bytes in every checkpoint file" 0 "$errs"
	check "[$V] no marker object shows up as an empty name" \
		bash -c "! find '$M/jobs' -name '' 2>/dev/null | grep -q ."

	errs=0 n=0
	for id in $storage_ids; do
		[ -n "$(find "$NS/$id" -mindepth 1 -type d -print -quit)" ] && continue
		raw=$(find "$NS/$id" -type f -printf '%s\n' | awk '{s+=$1} END {print s+0}')
		mnt=$(du -sb --exclude=latest --exclude=status --exclude=info "$M/jobs/$id/pipelines" | cut -f1)
		n=$((n + 1))
		[ "$raw" == "$mnt" ] || { echo "    $id: raw $raw, mount $mnt"; errs=$((errs + 1)); }
	done
	check_eq "[$V] du -sb of pipelines/ equals the raw bytes ($n jobs)" 0 "$errs"

	mkdir -p "$T/untar-$V"
	(cd "$M/jobs" && tar -cf - --exclude=latest ./*/pipelines 2>"$T/tar-$V.err") |
		tar -C "$T/untar-$V" -xf -
	check "[$V] tar of jobs/*/pipelines exits cleanly" test ! -s "$T/tar-$V.err"
	errs=0
	for f in $(cd "$T/untar-$V" && find . -type f -name '*.ser*'); do
		cmp -s "$T/untar-$V/$f" "$NS/$(echo "$f" | awk -F/ '{print $2"/"$NF}')" || errs=$((errs + 1))
	done
	n=$(cd "$T/untar-$V" && find . -type f -name '*.ser*' | wc -l)
	raw=$(cd "$NS" && find . -mindepth 2 -maxdepth 2 -type f -name '*.ser*' -path './[0-9]*' | wc -l)
	check_eq "[$V] tar round trip holds every object" "$raw" "$n"
	check_eq "[$V] tar round trip is byte-identical" 0 "$errs"

	errs=0
	for f in "$M"/jobs/*/status "$M"/jobs/*/metrics "$M"/jobs/*/deletable \
		$(find "$M/jobs" -path '*checkpoints*' -type f | head -20); do
		s1=$(stat -c %s "$f")
		r=$(wc -c <"$f")
		s2=$(stat -c %s "$f")
		[ "$s1" == "$r" ] && [ "$r" == "$s2" ] || { echo "    $f: $s1 $r $s2"; errs=$((errs + 1)); }
	done
	check_eq "[$V] stat, read, stat agree" 0 "$errs"
	check "[$V] st_blocks is ceil(size/512)" bash -c "
		find '$M/jobs' -type f -printf '%s %b\n' | awk '{ if (\$2 != int((\$1+511)/512)) exit 1 }'"
	check "[$V] getfattr -R -d over the whole tree exits 0" \
		bash -c "getfattr -R -d '$M/jobs' '$M/by-state' >/dev/null 2>'$T/getfattr-$V.err'"

	find "$M/jobs" -printf '%i %P\n' | sort >"$T/ino1-$V"
	rsync -a "$M/jobs/" "$T/rsync-$V/" 2>"$T/rsync1-$V.err"
	check "[$V] rsync -a of the mount exits cleanly" test ! -s "$T/rsync1-$V.err"
	unmount_stfs "$M"
	mount_s3 "$M" "$SP" "$T/sd-$V"
	find "$M/jobs" -printf '%i %P\n' | sort >"$T/ino2-$V"
	check "[$V] inode numbers are equal across a remount" cmp -s "$T/ino1-$V" "$T/ino2-$V"
	n=$(rsync -a --stats "$M/jobs/" "$T/rsync-$V/" 2>&1 | sed -n 's/^Number of regular files transferred: //p')
	check_eq "[$V] a second rsync -a transfers nothing" 0 "$n"
	listing "$M" >"$T/list-s3-$V"
	unmount_stfs "$M"
	# the same bucket as s3n:// (Hadoop's older scheme, served by the s3
	# backend: conf refused it before the one scheme table)
	mkdir -p "$T/sd-$V-s3n"
	check "[$V] checkpoint=s3n:// mounts" mount_stfs "$M" -o \
		"checkpoint=s3n://ckpt/$PREFIX/,endpoint=http://127.0.0.1:$SP,region=us-east-1,path_style,state_dir=$T/sd-$V-s3n,$COMMON"
	listing "$M" >"$T/list-s3n-$V"
	check "[$V] s3n:// shows the tree s3:// shows" bash -c \
		"test -s '$T/list-s3-$V' && cmp -s '$T/list-s3-$V' '$T/list-s3n-$V'"
	unmount_stfs "$M"

	# -- hostile key names under a job: other/<name>, same bytes --------------
	local good=("sp ace.bin" "pl+us.bin" "eq=ual.bin" "100%.bin" "st*r.bin"
		"ti~lde.bin" "café.bin" "..dots.bin") hostile=(
		$'ctl\001x.bin' $'nl\nx.bin' $'del\x7fx.bin') codes="" k
	for k in "${good[@]}" "${hostile[@]}"; do
		printf 'hostile %s\n' "$k" >"$T/h.tmp"
		codes+=$(put "$SP" "$PREFIX/$PROT_ID/$k" "$T/h.tmp")
	done
	check_eq "[$V] hostile keys uploaded" "$(printf '200%.0s' "${good[@]}" "${hostile[@]}")" "$codes"

	mount_s3 "$M" "$SP" "$T/sd-$V"
	local MSP=$STFS_PID
	errs=0
	for k in "${good[@]}"; do
		printf 'hostile %s\n' "$k" >"$T/h.tmp"
		cmp -s "$T/h.tmp" "$M/jobs/$PROT_ID/other/$k" || { echo "    other/$k differs or is missing"; errs=$((errs + 1)); }
	done
	check_eq "[$V] valid hostile names are under other/ with their bytes" 0 "$errs"
	n=$(ls -A "$M/jobs/$PROT_ID/other" 2>/dev/null | LC_ALL=C grep -c $'[\x01-\x1f\x7f]')
	check_eq "[$V] names with control characters are not listed" 0 "$n"
	check "[$V] no '..' component anywhere in the tree" \
		bash -c "! find '$M/jobs' -name '..' | grep -q ."
	check "[$V] the daemon is alive after hostile names" alive "$MSP"

	# -- paging: max-keys 7 gives the same tree as 1000 ----------------------
	local before after
	before=$(grep -c 'continuation-token' "$SD/s3rver.log")
	STFS_S3_MAX_KEYS=7 mount_s3 "$M-p7" "$SP" "$T/sd-$V-p7"
	local P7=$STFS_PID
	tree "$M" >"$T/tree1000-$V"
	tree "$M-p7" >"$T/tree7-$V"
	after=$(grep -c 'continuation-token' "$SD/s3rver.log")
	check "[$V] the max-keys 7 mount really pages ($((after - before)) continued lists)" \
		test "$after" -gt "$before"
	check "[$V] max-keys 7 lists the same tree as 1000 ($(wc -l <"$T/tree7-$V") entries)" \
		cmp -s "$T/tree1000-$V" "$T/tree7-$V"
	STFS_PID=$P7
	unmount_stfs "$M-p7"
	STFS_PID=$MSP

	# -- deletion through S3 --------------------------------------------------
	check "[$V] release of a FAILED job" bash -c "echo release > '$M/jobs/$REL_ID/restore'"
	check "[$V] the released job's objects are in the bucket before rm" \
		test -n "$(bucket_keys "$SP" "$PREFIX/$REL_ID/")"
	rm -r "$M/jobs/$REL_ID" 2>"$T/rm-$V.err"
	check "[$V] rm -r of the released FAILED job exits 0" test $? = 0 -a ! -s "$T/rm-$V.err"
	check_eq "[$V] no object of the job is left in the bucket (listing)" "" \
		"$(bucket_keys "$SP" "$PREFIX/$REL_ID/" | grep -v "/$REL_ID/\$")"
	check_eq "[$V] no object of the job is left in s3rver's data dir" "" \
		"$(find "$SD/data/ckpt/$PREFIX/$REL_ID" -name '*._S3rver_object' ! -name '._S3rver_object' 2>/dev/null)"
	check "[$V] the FAILED job stays listed (the engine remembers it)" test -d "$M/jobs/$REL_ID"

	local rp obj
	rp=$(ls "$M/jobs/$PROT_ID/pipelines" | grep -E '^[0-9]+$' | head -1)
	obj=$(ls "$M/jobs/$PROT_ID/pipelines/$rp/checkpoints/latest/" | grep '\.ser$' | head -1)
	before=$(bucket_keys "$SP" "$PREFIX/$PROT_ID/" | sort)
	check "[$V] rm of an unreleased restore point fails with EPERM" \
		fails_with 'Operation not permitted' rm -f "$M/jobs/$PROT_ID/pipelines/$rp/checkpoints/latest/$obj"
	check "[$V] the restore point is still in the bucket" \
		grep -qxF "$PREFIX/$PROT_ID/$obj" <<<"$before"
	check_eq "[$V] nothing of the protected job was deleted" "$before" \
		"$(bucket_keys "$SP" "$PREFIX/$PROT_ID/" | sort)"

	before=$(bucket_keys "$SP" "$PREFIX/$RUN_ID/" | sort)
	check "[$V] rm -r of a RUNNING job fails with EBUSY" \
		fails_with 'Device or resource busy' rm -rf "$M/jobs/$RUN_ID"
	check_eq "[$V] nothing of the RUNNING job was deleted" "$before" \
		"$(bucket_keys "$SP" "$PREFIX/$RUN_ID/" | sort)"
	check "[$V] the RUNNING job has objects in the bucket" test -n "$before"
	check "[$V] no s3 HTTP warnings in the mount's log" \
		bash -c "! grep -E 's3: .*(HTTP|unparsable)' '$T/stfs-s3-$V.log'"
	unmount_stfs "$M"

	# -- a stopped server: errors within the deadline, the daemon survives -----
	# storage_ttl=300: what the mount listed at start is stale when asked
	mount_s3 "$M-stop" "$SP" "$T/sd-$V-stop" storage_ttl=300
	sleep 0.5
	local SPD=$STFS_PID cid t0 dt1 dt2
	cid=$(ls "$T/mloc/jobs/$ORPH_ID/pipelines/1/checkpoints" | grep -E '^[0-9]+$' | head -1)
	obj=$(ls "$T/mloc/jobs/$ORPH_ID/pipelines/1/checkpoints/$cid" | grep -vx info | head -1)
	kill -STOP "$SPID"
	t0=$(date +%s%N)
	ls "$M-stop/jobs/$ORPH_ID/pipelines/1/checkpoints/$cid" >"$T/ls-stop-$V" 2>&1
	local rc1=$?
	dt1=$(ms_since "$t0")
	t0=$(date +%s%N)
	cat "$M-stop/jobs/$ORPH_ID/pipelines/1/checkpoints/$cid/$obj" >"$T/cat-stop-$V" 2>&1
	local rc2=$?
	dt2=$(ms_since "$t0")
	kill -CONT "$SPID"
	local errpat='Input/output error|timed out|temporarily unavailable'
	# ls may answer from what it listed before (stale but browsable) or fail
	check "[$V] ls on a stopped server answers or fails cleanly (rc $rc1, ${dt1} ms)" \
		bash -c "[ $rc1 = 0 ] || grep -qE '$errpat' '$T/ls-stop-$V'"
	check "[$V] cat on a stopped server fails (rc $rc2, ${dt2} ms)" \
		bash -c "[ $rc2 != 0 ] && grep -qE '$errpat' '$T/cat-stop-$V'"
	check "[$V] both return within the deadline plus a margin (${dt1} ms, ${dt2} ms)" \
		test "$dt1" -lt $((TMO + 1500)) -a "$dt2" -lt $((TMO + 1500))
	check "[$V] the daemon survives a stopped server" alive "$SPD"
	# a timed-out read is answered from memory for a second, and the store
	# that did not answer is not asked again for one deadline (README
	# "Failure modes"): by then reads work again
	sleep "$(awk -v t=$TMO 'BEGIN { print t / 1000 + 0.3 }')"
	check "[$V] reads work again after kill -CONT" \
		cmp -s "$T/mloc/jobs/$ORPH_ID/pipelines/1/checkpoints/$cid/$obj" \
		"$M-stop/jobs/$ORPH_ID/pipelines/1/checkpoints/$cid/$obj"
	STFS_PID=$SPD
	unmount_stfs "$M-stop"
	return 0
}

# ---------------------------------------------------------------------------
# the verifying fork only: a wrong secret
wrong_secret() {
	local M=$T/s3-wrong cid p
	p=$(ls "$T/mloc/jobs/$RUN_ID/pipelines" | grep -E '^[0-9]+$' | head -1)
	cid=$(ls "$T/mloc/jobs/$RUN_ID/pipelines/$p/checkpoints" | grep -E '^[0-9]+$' | head -1)
	AWS_SECRET_ACCESS_KEY=wrong mount_s3 "$M" "$SP" "$T/sd-wrong" || {
		bad "[verify] mount with a wrong secret"
		return
	}
	check "[verify] wrong secret: ls of a job's checkpoints/ says Permission denied" \
		fails_with 'Permission denied' ls "$M/jobs/$RUN_ID/pipelines/$p/checkpoints"
	check "[verify] wrong secret: ls of a checkpoint says Permission denied" \
		fails_with 'Permission denied' ls "$M/jobs/$RUN_ID/pipelines/$p/checkpoints/$cid"
	check "[verify] wrong secret: reading an object says Permission denied" \
		fails_with 'Permission denied' cat "$M/jobs/$RUN_ID/pipelines/$p/checkpoints/$cid/x.ser"
	check "[verify] wrong secret: .stfs/health says degraded" \
		grep -q degraded "$M/.stfs/health"
	check "[verify] wrong secret: the secret is not in the log" \
		bash -c "! grep -q 'S3RVER:wrong\|:wrong' '$T/stfs-s3-wrong.log'"
	unmount_stfs "$M"
}

# ---------------------------------------------------------------------------
# the plain server behind faultproxy: 503 storms and '..' keys
proxy_ctl() { curl -s -m 5 -X "${2:-GET}" ${1:+--data "$1"} "http://127.0.0.1:$FP_PORT/__fault"; }
faults() {
	local M=$T/s3-proxy pf=$T/fp.port cid objs t0 dt rc
	python3 "$ROOT/scripts/faultproxy.py" --upstream "http://127.0.0.1:$SP" \
		--port 0 --port-file "$pf" >"$T/fp.log" 2>&1 &
	local FPID=$!
	PIDS+=("$FPID")
	for _ in $(seq 100); do
		[ -s "$pf" ] && break
		sleep 0.05
	done
	FP_PORT=$(cat "$pf")
	# two 24 MiB objects for the sequential stream (README "Performance")
	head -c $((24 << 20)) /dev/urandom >"$T/big1.bin"
	head -c $((24 << 20)) /dev/urandom >"$T/big2.bin"
	check_eq "[proxy] big objects uploaded" 200200 \
		"$(put "$SP" "$PREFIX/$PROT_ID/big1.bin" "$T/big1.bin")$(put "$SP" "$PREFIX/$PROT_ID/big2.bin" "$T/big2.bin")"
	check "[proxy] faultproxy answers its control endpoint" \
		bash -c "curl -s -m 2 http://127.0.0.1:$FP_PORT/__fault | grep -q '\"mode\": \"none\"'"
	mount_s3 "$M" "$FP_PORT" "$T/sd-proxy" || {
		bad "[proxy] mount through faultproxy"
		return
	}
	local PPD=$STFS_PID
	cid=$(ls "$T/mloc/jobs/$ORPH_ID/pipelines/1/checkpoints" | grep -E '^[0-9]+$' | head -1)
	local D=jobs/$ORPH_ID/pipelines/1/checkpoints/$cid
	mapfile -t objs < <(ls "$T/mloc/$D")
	check "[proxy] reads pass through the proxy (SigV4 intact)" \
		cmp -s "$T/mloc/$D/${objs[0]}" "$M/$D/${objs[0]}"

	# the other/ objects of the hostile-name check: never read by this
	# daemon (its start-up scan reads checkpoints only)
	local O=$M/jobs/$PROT_ID/other
	printf 'hostile %s\n' "pl+us.bin" >"$T/h1.tmp"
	printf 'hostile %s\n' "eq=ual.bin" >"$T/h2.tmp"
	ls "$O" >/dev/null
	proxy_ctl '{"mode":"next","n":2}' POST >/dev/null
	check "[proxy] a read succeeds through 2 x 503 SlowDown (retries)" \
		cmp -s "$T/h1.tmp" "$O/pl+us.bin"
	check_eq "[proxy] both 503s were served" 2 \
		"$(proxy_ctl | python3 -c 'import json,sys; print(json.load(sys.stdin)["faulted"])')"

	proxy_ctl '{"mode":"percent","percent":100}' POST >/dev/null
	t0=$(date +%s%N)
	cat "$O/eq=ual.bin" >/dev/null 2>"$T/storm.err"
	rc=$?
	dt=$(ms_since "$t0")
	check "[proxy] a permanent 503 storm fails the read with EIO (rc $rc)" \
		bash -c "[ $rc != 0 ] && grep -q 'Input/output error' '$T/storm.err'"
	check "[proxy] ... within the deadline plus a margin (${dt} ms)" test "$dt" -lt $((TMO + 1500))
	check "[proxy] the daemon survives the storm" alive "$PPD"
	proxy_ctl '{"mode":"none"}' POST >/dev/null
	check "[proxy] reads work again after the storm" cmp -s "$T/h2.tmp" "$O/eq=ual.bin"
	check "[proxy] .stfs/health shows the storm's error" grep -qi 'slowdown\|503\|error' "$M/.stfs/health"

	# a big object read in one stream: every byte right, however read
	local B1=$O/big1.bin B2=$O/big2.bin want got gets0
	want=$(sha256sum <"$T/big1.bin")
	gets0=$(proxy_ctl | python3 -c 'import json,sys; print(json.load(sys.stdin)["forwarded"])')
	check_eq "[stream] cat of a 24 MiB object: the raw object's sha256" "$want" "$(sha256sum <"$B1")"
	got=$(($(proxy_ctl | python3 -c 'import json,sys; print(json.load(sys.stdin)["forwarded"])') - gets0))
	# 128 KiB, 256 KiB, then one GET for the rest (one per window: 9)
	check "[stream] ... in a few GETs, not one per window ($got)" test "$got" -le 5
	dd if="$B1" of="$T/dd.out" bs=1M skip=7 count=9 status=none
	dd if="$T/big1.bin" of="$T/dd.want" bs=1M skip=7 count=9 status=none
	check "[stream] dd bs=1M skip=7 count=9 equals the raw bytes" cmp -s "$T/dd.want" "$T/dd.out"
	check_eq "[stream] a read at an odd offset past 16 MiB" \
		"$(tail -c +$((16 * 1048576 + 12345)) "$T/big1.bin" | head -c 100000 | sha256sum)" \
		"$(tail -c +$((16 * 1048576 + 12345)) "$B1" | head -c 100000 | sha256sum)"
	check_eq "[stream] a read past the end is empty" 0 \
		"$(dd if="$B1" bs=1M skip=30 count=1 status=none | wc -c)"
	want=$(sha256sum <"$T/big2.bin")
	sha256sum <"$B2" >"$T/r1.sum" &
	local RP=$!
	sha256sum <"$B2" >"$T/r2.sum"
	wait "$RP"
	check_eq "[stream] two concurrent readers, first" "$want" "$(cat "$T/r1.sum")"
	check_eq "[stream] two concurrent readers, second" "$want" "$(cat "$T/r2.sum")"
	# GETs that stall half-way: an error within deadlines, never wrong
	# bytes (every GET of the object stalls; tests/backends/test_s3.c cuts
	# the stream alone)
	proxy_ctl '{"mode":"stall","match":"big1.bin"}' POST >/dev/null
	python3 -c "import os,sys; fd=os.open(sys.argv[1],os.O_RDONLY); os.posix_fadvise(fd,0,0,os.POSIX_FADV_DONTNEED)" "$B1"
	STFS_PID=$PPD
	unmount_stfs "$M"
	mount_s3 "$M" "$FP_PORT" "$T/sd-proxy"
	PPD=$STFS_PID
	t0=$(date +%s%N)
	cat "$B1" >"$T/stall.out" 2>"$T/stall.err"
	rc=$?
	dt=$(ms_since "$t0")
	check "[stream] a stalled stream fails the read (rc $rc: $(head -c 80 "$T/stall.err"))" test "$rc" != 0
	check "[stream] ... within a few deadlines (${dt} ms)" test "$dt" -lt $((4 * TMO + 3000))
	got=$(stat -c %s "$T/stall.out")
	check "[stream] ... and what it gave before is the object's first $got bytes" \
		cmp -s -n "$got" "$T/stall.out" "$T/big1.bin"
	check "[stream] the daemon survives the stall" alive "$PPD"
	proxy_ctl '{"mode":"none"}' POST >/dev/null

	# keys holding '..': the server stores ".../DOTDOT/...", the proxy
	# answers "..", stfs must ignore them and stay inside the tree
	echo escape >"$T/esc.tmp"
	local codes
	codes=$(put "$SP" "$PREFIX/$ORPH_ID/DOTDOT/escape1.bin" "$T/esc.tmp")
	codes+=$(put "$SP" "$PREFIX/$ORPH_ID/DOTDOT/DOTDOT/escape2.bin" "$T/esc.tmp")
	codes+=$(put "$SP" "$PREFIX/$ORPH_ID/xDOTDOTx" "$T/esc.tmp")
	check_eq "[proxy] '..' keys uploaded" 200200200 "$codes"
	proxy_ctl '{"rewrite":[["DOTDOT",".."]]}' POST >/dev/null
	STFS_PID=$PPD
	unmount_stfs "$M"
	mount_s3 "$M" "$FP_PORT" "$T/sd-proxy"
	PPD=$STFS_PID
	find "$M/jobs/$ORPH_ID" >"$T/dotdot.find" 2>&1
	check "[proxy] no entry of a '..' key appears" \
		bash -c "! grep -q 'escape' '$T/dotdot.find'"
	check "[proxy] a name merely containing '..' is listed" \
		test -f "$M/jobs/$ORPH_ID/other/x..x"
	check "[proxy] the job's checkpoints are still listed" \
		cmp -s "$T/mloc/$D/${objs[0]}" "$M/$D/${objs[0]}"
	check "[proxy] nothing outside jobs/ appeared" \
		bash -c "! find '$M' -maxdepth 1 -name 'escape*' | grep -q ."
	check "[proxy] the daemon is alive after '..' keys" alive "$PPD"
	proxy_ctl '{"rewrite":[]}' POST >/dev/null
	unmount_stfs "$M"
	kill "$FPID" 2>/dev/null
	wait "$FPID" 2>/dev/null
}

run_variant() { # run_variant NAME [--verify]
	variant "$@"
	local rc=$?
	if [ "$rc" = 0 ]; then
		[ "$1" == verify ] && wrong_secret
		[ "$1" == plain ] && faults
	fi
	"$ROOT/scripts/s3rver.sh" stop "$SD"
}

run_variant plain
run_variant verify --verify

# ---------------------------------------------------------------------------
# first contact with the engine up (README "Performance"): a cold du -s of
# a fresh mount reads each checkpoint object at most once, whatever the job
# state.  A mix of running, failed and savepoint-done jobs (and orphans),
# each holding more objects than the read-ahead cache keeps windows (64),
# so that a header read and the summary `info` needs cannot share one.
first_contact() {
	local FC=$T/fc M=$T/s3-fc SD=$T/srv-fc SP fcport gets nser dup l0
	python3 "$ROOT/scripts/genstate.py" --out "$FC" --jobs 6 --pipelines 2 \
		--checkpoints 40 --seed 7 --now-ms 1700000000000 \
		--mix RUNNING=50,FAILED=25,SAVEPOINT_DONE=25 >"$T/gen-fc.log" 2>&1 || {
		bad "[first contact] genstate --mix"
		cat "$T/gen-fc.log"
		return
	}
	local NS=$FC/checkpoint # upload_ns reads it
	nser=$(find "$NS" -type f -name '*.ser' | wc -l)
	start_sim "$FC/scenario.json" fc
	fcport=$SIM_PORT_fc
	SP=$(free_port)
	"$ROOT/scripts/s3rver.sh" start "$SD" "$SP" >/dev/null || {
		bad "[first contact] s3rver starts"
		return
	}
	PIDS+=("$(cat "$SD/s3rver.pid")")
	check_eq "[first contact] uploaded $nser .ser objects (all 200)" 200 "$(upload_ns "$SP")"
	local C="engine=http://127.0.0.1:$fcport,timeout=$TMO,orphan_grace=10m"
	mount_stfs "$T/mloc-fc" -o "checkpoint=file://$NS/,state_dir=$T/sd-fcl,$C" || {
		bad "[first contact] file:// mount"
		return
	}
	local LPID=$STFS_PID
	# cache_ttl 30 s: the cold walk is younger than the mount's listing
	# whatever the machine's load, so each job's `deletable` is
	# predicted from it (no listing of its own)
	mount_stfs "$M" -o "checkpoint=s3://ckpt/$PREFIX/,endpoint=http://127.0.0.1:$SP,region=us-east-1,path_style,state_dir=$T/sd-fc,$C,cache_ttl=30000" || {
		bad "[first contact] s3:// mount"
		return
	}
	l0=$(wc -l <"$SD/s3rver.log")
	du -s "$M/jobs" >/dev/null 2>"$T/du-fc.err"
	check "[first contact] cold du -s exits cleanly" test ! -s "$T/du-fc.err"
	# the object GETs of the walk ("<key> 206 <ms> <size>" lines)
	tail -n +"$((l0 + 1))" "$SD/s3rver.log" | sed 's/\x1b\[[0-9;]*m//g' |
		grep -oE "^info: /?$PREFIX/[^ ]+ 20[06] " | awk '{ print $2 }' >"$T/fc-gets"
	gets=$(wc -l <"$T/fc-gets")
	dup=$(sort "$T/fc-gets" | uniq -d | wc -l)
	check "[first contact] the cold du -s reads at most one GET per .ser ($gets GETs, $nser .ser)" \
		test "$gets" -le "$nser" -a "$gets" -gt 0
	check_eq "[first contact] no object is read twice" 0 "$dup"
	# the listings of the walk: each job's `deletable` listed its job
	# afresh (two ListObjectsV2 a job: 2 x $njobs); it is predicted from
	# the mount's listing now, younger than cache_ttl
	local lists njobs
	njobs=$(find "$NS" -mindepth 1 -maxdepth 1 -type d -name '[0-9]*' | wc -l)
	lists=$(tail -n +"$((l0 + 1))" "$SD/s3rver.log" | sed 's/\x1b\[[0-9;]*m//g' |
		grep -c '^info: list-type=2')
	check "[first contact] the cold du -s lists fewer times than there are jobs ($lists listings, $njobs jobs)" \
		test "$lists" -lt "$njobs"
	# every entry, and what is decoded from the objects: each `info` and
	# pipeline `status` (but its job state: S3 dates an object by its
	# upload, so the orphans are young there)
	local d
	for d in "$T/mloc-fc" "$M"; do
		(cd "$d/jobs" && find . -printf '%p %y\n' | sort &&
			find . -regextype egrep -regex '.*/(info|pipelines/[0-9]+/status)' |
			sort | xargs grep -H . | grep -v ':state ') >"$d.fc"
	done
	check "[first contact] the mount shows what file:// shows ($(wc -l <"$M.fc") lines: entries, savepoint links, info and pipeline status)" \
		cmp -s "$T/mloc-fc.fc" "$M.fc"
	diff "$T/mloc-fc.fc" "$M.fc" | head -5
	check "[first contact] SAVEPOINT_DONE jobs show savepoint links" \
		test -n "$(find "$M/jobs"/*/savepoints -type l | head -1)"
	# a warm ls -lR reaches the daemon for almost nothing: ls asks every
	# entry for a security label and ACLs, which stfs has not; answered
	# "not supported", ls stops asking on this device (ENODATA made it ask
	# 3 times per entry at every walk)
	local x0 x1 nent
	ls -lR "$M/jobs" >/dev/null 2>&1
	nent=$(find "$M/jobs" | wc -l)
	x0=$(awk '$1 == "stfs_fuse_getxattr_total" { print $2 }' "$M/.stfs/stats")
	ls -lR "$M/jobs" >/dev/null 2>"$T/lsr-fc.err"
	x1=$(awk '$1 == "stfs_fuse_getxattr_total" { print $2 }' "$M/.stfs/stats")
	check "[first contact] a warm ls -lR exits cleanly" test ! -s "$T/lsr-fc.err"
	check "[first contact] a warm ls -lR of $nent entries asks at most 10 xattrs ($((x1 - x0)))" \
		test -n "$x0" -a -n "$x1" -a "$((x1 - x0))" -le 10
	check "[first contact] a security label is not supported (EOPNOTSUPP)" \
		fails_with 'Operation not supported' getfattr -n security.selinux "$M/jobs"
	# an rm decides on a fresh listing, not on the one `deletable` was
	# predicted from: a released FAILED job gains an object in raw storage
	# (newer than the release, which it voids); the rm of its restore
	# point must see it and refuse, and the object stays in the bucket
	local fj rp robj rkey
	fj=$(engine_jobs_tsv "$fcport" | awk -F'\t' '$2 == "FAILED" { print $1 }' |
		while read -r id; do [ -d "$NS/$id" ] && { echo "$id"; break; }; done)
	rp=$(ls "$M/jobs/$fj/pipelines" 2>/dev/null | head -1)
	robj=$(ls "$M/jobs/$fj/pipelines/$rp/checkpoints/latest/" 2>/dev/null | grep '\.ser$' | head -1)
	rkey=$PREFIX/$fj/$robj
	check_eq "[first contact] a FAILED job's restore point is in the bucket ($fj)" \
		"$rkey" "$(bucket_keys "$SP" "$rkey")"
	check "[first contact] release of the FAILED job" \
		bash -c "echo release > '$M/jobs/$fj/restore'"
	sleep 2.5 # past decision_age: the rm asks afresh
	check "[first contact] deletable predicts the restore points may go" \
		grep -qE '^restore_points +[0-9]+ yes' "$M/jobs/$fj/deletable"
	echo "written after the release" >"$T/fc-new.bin"
	check_eq "[first contact] an object appears in raw storage" 200 \
		"$(put "$SP" "$PREFIX/$fj/fc-after-release.bin" "$T/fc-new.bin")"
	check "[first contact] rm of the restore point fails: the new object voids the release" \
		fails_with 'Operation not permitted' rm -f "$M/jobs/$fj/pipelines/$rp/checkpoints/latest/$robj"
	check_eq "[first contact] the restore point is still in the bucket" "$rkey" \
		"$(bucket_keys "$SP" "$rkey")"
	check "[first contact] user.stfs.state is still served" \
		bash -c "getfattr -n user.stfs.state --only-values '$M/jobs/$(ls "$M/jobs" | head -1)' | grep -q ."
	unmount_stfs "$M"
	STFS_PID=$LPID
	unmount_stfs "$T/mloc-fc"
	"$ROOT/scripts/s3rver.sh" stop "$SD"
}
first_contact

# a ca_file that is missing or holds no PEM certificate fails the mount at
# once, naming the file (it used to mount, then every call failed); no
# request is needed to tell
bad_ca() { # NAME URI FILE WHY
	refused_mount "$1" "ca_file $3: $4" \
		"checkpoint=$2,endpoint=https://127.0.0.1:1,region=us-east-1,path_style,state_dir=$T/sd-$1,$COMMON,ca_file=$3"
}
head -c 300 /dev/urandom >"$T/junk.pem"
bad_ca mca1 "s3://ckpt/$PREFIX/" "$T/none.pem" "No such file or directory"
bad_ca mca2 "s3://ckpt/$PREFIX/" "$T/junk.pem" "holds no PEM certificate"
bad_ca mca3 "oss://ckpt/$PREFIX/" "$T/junk.pem" "holds no PEM certificate"
bad_ca mca4 "gs://ckpt/$PREFIX/" "$T/none.pem" "No such file or directory"
check "the file:// daemon is still alive" alive "$LOC_PID"
STFS_PID=$LOC_PID
unmount_stfs "$T/mloc"
finish
