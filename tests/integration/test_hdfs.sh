#!/bin/bash
# The HDFS backend on a real mount over a real HDFS: Hadoop 3.5.0's
# MiniDFSCluster (scripts/hadoop.sh, built by Maven on first use).  A
# generated namespace is uploaded through WebHDFS, mounted through hdfs://
# and compared with the same namespace mounted through file://, then: the
# local suite's checks (union listing, du, tar, stat/read/stat, inodes
# across a remount, rsync), paging with dfs.ls.limit 7, deletion by the
# rules (release + rm -r, EPERM, EBUSY) checked in HDFS itself, and a
# frozen (kill -STOP) namenode.  STFS_BIN overrides the binary under test.
. "$(dirname "$0")/lib.sh"
STFS=${STFS_BIN:-$STFS}

need_hadoop

TMO=2000 # request deadline of every mount, ms
HU=stfs  # the HDFS user everything is written and read as
STATE=$T/state
python3 "$ROOT/scripts/genstate.py" --out "$STATE" --jobs 10 --seed 3 \
	>"$T/gen.log" 2>&1 || { cat "$T/gen.log"; exit 1; }
NS=$STATE/checkpoint
HNS=/seatunnel/checkpoint
hdfs_py() { python3 "$ROOT/scripts/webhdfs.py" "$1" "http://127.0.0.1:$HP" "$HU" "${@:2}"; }
# hdfs_files REL: "path size" of every file below $HNS/REL, asked HDFS itself
hdfs_files() { hdfs_py files "$HNS/$1"; }

H=$T/hdfs
# a small listing limit, so that LISTSTATUS_BATCH really pages
STFS_HDFS_LIST_LIMIT=7 start_hdfs "$H"
HP=$(sed -n 's/^http=//p' "$H/ready")
RPC=$(sed -n 's/^rpc=//p' "$H/ready")
ok "a real HDFS (MiniDFSCluster, Hadoop 3.5.0) is up: rpc $RPC, http $HP"
nfiles=$(find "$NS" -type f | wc -l)
check_eq "uploaded $nfiles files through WebHDFS" "$nfiles" "$(hdfs_py upload "$NS" "$HNS" 2>"$T/upload.err")"
check_eq "HDFS holds the same files and sizes" \
	"$(cd "$NS" && find . -type f -printf '%P %s\n' | sort)" "$(hdfs_files "")"

remote_jobs "$STATE" "$NS"
sim_ctl "$PORT" POST /__sim/job "{\"jobId\":\"$PROT_ID\",\"jobStatus\":\"FAILED\"}" >/dev/null
remote_ref "$STATE" "$NS" "$TMO"
# mount_hdfs MNT STATE_DIR [EXTRA_OPTS]: hdfs://<rpc address>, the HTTP port by option
mount_hdfs() {
	mount_stfs "$1" -o "checkpoint=hdfs://127.0.0.1:$RPC$HNS/,hdfs_http_port=$HP,hdfs_user=$HU,state_dir=$2,$COMMON${3:+,$3}"
}
tree() { (cd "$1/jobs" && find . -printf '%p %y\n' -path '*checkpoints*' -type f -printf '%p %s\n' | sort); }

M=$T/hd
mount_hdfs "$M" "$T/sd-hd" || {
	bad "hdfs:// mount"
	finish
	exit 1
}
ok "hdfs:// mount (RPC address in the URI, HTTP port by hdfs_http_port)"
MPID=$STFS_PID

# -- the local suite's checks -------------------------------------------------
check_eq "jobs/ is the union of storage and engine" "$WANT_JOBS" "$(ls "$M/jobs" | sort)"
L1=$(listing "$T/mloc")
L2=$(listing "$M")
check "checkpoint files are listed ($(echo "$L1" | grep -c .))" test -n "$L1"
check_eq "same checkpoint files and sizes as file://" "$L1" "$L2"
errs=0
while read -r p _; do
	cmp -s "$T/mloc/jobs/$p" "$M/jobs/$p" || {
		echo "    differs: $p"
		errs=$((errs + 1))
	}
done <<<"$L1"
check_eq "same bytes in every checkpoint file" 0 "$errs"
check_eq "the same tree as file:// (every entry, types and sizes)" "$(tree "$T/mloc")" "$(tree "$M")"

check_du_raw "$M" "$NS" hdfs_files

mkdir -p "$T/untar"
(cd "$M/jobs" && tar -cf - --exclude=latest ./*/pipelines 2>"$T/tar.err") | tar -C "$T/untar" -xf -
check "tar of jobs/*/pipelines exits cleanly" test ! -s "$T/tar.err"
errs=0
for f in $(cd "$T/untar" && find . -type f -name '*.ser*'); do
	cmp -s "$T/untar/$f" "$NS/$(echo "$f" | awk -F/ '{print $2"/"$NF}')" || errs=$((errs + 1))
done
n=$(cd "$T/untar" && find . -type f -name '*.ser*' | wc -l)
raw=$(cd "$NS" && find . -mindepth 2 -maxdepth 2 -type f -name '*.ser*' -path './[0-9]*' | wc -l)
check_eq "tar round trip holds every object" "$raw" "$n"
check_eq "tar round trip is byte-identical" 0 "$errs"

errs=0
for f in "$M"/jobs/*/status "$M"/jobs/*/deletable $(find "$M/jobs" -path '*checkpoints*' -type f | head -20); do
	s1=$(stat -c %s "$f")
	r=$(wc -c <"$f")
	s2=$(stat -c %s "$f")
	[ "$s1" == "$r" ] && [ "$r" == "$s2" ] || { echo "    $f: $s1 $r $s2"; errs=$((errs + 1)); }
done
check_eq "stat, read, stat agree" 0 "$errs"
# reads at and past the end, answered without the namenode's 403
f=$(find "$M/jobs" -path '*checkpoints*' -name '*.ser' -type f | head -1)
sz=$(stat -c %s "$f")
check_eq "a read at the end of a file returns 0 bytes" 0 \
	"$(dd if="$f" bs=1 skip="$sz" count=10 2>/dev/null | wc -c)"
check_eq "a read of the last 3 bytes returns 3" 3 \
	"$(dd if="$f" bs=1 skip=$((sz - 3)) count=10 2>/dev/null | wc -c)"

find "$M/jobs" -printf '%i %P\n' | sort >"$T/ino1"
rsync -a "$M/jobs/" "$T/rsync/" 2>"$T/rsync1.err"
check "rsync -a of the mount exits cleanly" test ! -s "$T/rsync1.err"
unmount_stfs "$M"
mount_hdfs "$M" "$T/sd-hd"
MPID=$STFS_PID
find "$M/jobs" -printf '%i %P\n' | sort >"$T/ino2"
check "inode numbers are equal across a remount" cmp -s "$T/ino1" "$T/ino2"
n=$(rsync -a --stats "$M/jobs/" "$T/rsync/" 2>&1 | sed -n 's/^Number of regular files transferred: //p')
check_eq "a second rsync -a transfers nothing" 0 "$n"

# -- paging: the namenode's dfs.ls.limit is 7 --------------------------------
big=$(for id in $storage_ids; do echo "$(hdfs_files "$id" | wc -l) $id"; done | sort -rn | head -1)
check "a job directory holds more than one LISTSTATUS_BATCH page (${big% *} files)" test "${big% *}" -gt 7
check "no WebHDFS warnings in the mount's log" \
	bash -c "! grep -E 'webhdfs: .*(HTTP|unparsable|does not advance)' '$T/stfs-hd.log'"

# -- deletion through WebHDFS -------------------------------------------------
check "release of a FAILED job" bash -c "echo release > '$M/jobs/$REL_ID/restore'"
check "the released job's files are in HDFS before rm" test -n "$(hdfs_files "$REL_ID")"
rm -r "$M/jobs/$REL_ID" 2>"$T/rm.err"
check "rm -r of the released FAILED job exits 0" test $? = 0 -a ! -s "$T/rm.err"
check_eq "no file of the job is left in HDFS" "" "$(hdfs_files "$REL_ID")"
check "the job's directory is gone from HDFS (emptied, then removed)" \
	bash -c "! python3 '$ROOT/scripts/webhdfs.py' exists http://127.0.0.1:$HP $HU '$HNS/$REL_ID'"
check "the FAILED job stays listed (the engine remembers it)" test -d "$M/jobs/$REL_ID"

rp=$(ls "$M/jobs/$PROT_ID/pipelines" | grep -E '^[0-9]+$' | head -1)
obj=$(ls "$M/jobs/$PROT_ID/pipelines/$rp/checkpoints/latest/" | grep '\.ser$' | head -1)
before=$(hdfs_files "$PROT_ID")
check "rm of an unreleased restore point fails with EPERM" \
	fails_with 'Operation not permitted' rm -f "$M/jobs/$PROT_ID/pipelines/$rp/checkpoints/latest/$obj"
check "the restore point is still in HDFS" grep -q "^$obj " <<<"$before"
check_eq "nothing of the protected job was deleted" "$before" "$(hdfs_files "$PROT_ID")"

before=$(hdfs_files "$RUN_ID")
check "rm -r of a RUNNING job fails with EBUSY" \
	fails_with 'Device or resource busy' rm -rf "$M/jobs/$RUN_ID"
check_eq "nothing of the RUNNING job was deleted" "$before" "$(hdfs_files "$RUN_ID")"
check "the RUNNING job has files in HDFS" test -n "$before"
unmount_stfs "$M"

# -- a frozen namenode: errors within the deadline, the daemon survives -------
mount_hdfs "$M-stop" "$T/sd-stop" storage_ttl=300
sleep 0.5
SPD=$STFS_PID
cid=$(ls "$T/mloc/jobs/$ORPH_ID/pipelines/1/checkpoints" | grep -E '^[0-9]+$' | head -1)
obj=$(ls "$T/mloc/jobs/$ORPH_ID/pipelines/1/checkpoints/$cid" | grep -vx info | head -1)
kill -STOP "$HPID"
t0=$(date +%s%N)
ls "$M-stop/jobs/$ORPH_ID/pipelines/1/checkpoints/$cid" >"$T/ls-stop" 2>&1
rc1=$?
dt1=$(ms_since "$t0")
t0=$(date +%s%N)
cat "$M-stop/jobs/$ORPH_ID/pipelines/1/checkpoints/$cid/$obj" >"$T/cat-stop" 2>&1
rc2=$?
dt2=$(ms_since "$t0")
# health while frozen: after kill -CONT any call that succeeds clears it
cat "$M-stop/.stfs/health" >"$T/health-stop" 2>&1
kill -CONT "$HPID"
errpat='Input/output error|timed out|temporarily unavailable'
check "ls on a frozen namenode answers or fails cleanly (rc $rc1, ${dt1} ms)" \
	bash -c "[ $rc1 = 0 ] || grep -qE '$errpat' '$T/ls-stop'"
check "cat on a frozen namenode fails (rc $rc2, ${dt2} ms)" \
	bash -c "[ $rc2 != 0 ] && grep -qE '$errpat' '$T/cat-stop'"
check "both return within the deadline plus a margin (${dt1} ms, ${dt2} ms)" \
	test "$dt1" -lt $((TMO + 1500)) -a "$dt2" -lt $((TMO + 1500))
check "the daemon survives a frozen namenode" alive "$SPD"
check ".stfs/health shows the timeout" grep -qiE 'degraded|timed? ?out' "$T/health-stop"
# the namenode that timed out is not asked for one deadline (README
# "Failure modes"): reads work again within it plus a margin
for i in $(seq $((TMO / 250 + 8))); do
	cmp -s "$T/mloc/jobs/$ORPH_ID/pipelines/1/checkpoints/$cid/$obj" \
		"$M-stop/jobs/$ORPH_ID/pipelines/1/checkpoints/$cid/$obj" 2>/dev/null && break
	sleep 0.25
done
check "reads work again after kill -CONT (try $i)" \
	cmp -s "$T/mloc/jobs/$ORPH_ID/pipelines/1/checkpoints/$cid/$obj" \
	"$M-stop/jobs/$ORPH_ID/pipelines/1/checkpoints/$cid/$obj"
STFS_PID=$SPD
unmount_stfs "$M-stop"

"$ROOT/scripts/hadoop.sh" stop "$H"
finish
