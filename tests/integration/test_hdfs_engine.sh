#!/bin/bash
# The real engine writing to the real HDFS: a SeaTunnel 2.3.8 Zeta node
# (scripts/engine.sh, -Dstfs.fs=hdfs://…) with storage.type hdfs and its IMap
# persistence on a MiniDFSCluster (scripts/hadoop.sh), stfs mounted on
# hdfs:// for both.  A streaming job checkpoints; its checkpoints are listed
# as in HDFS with the same bytes, rm of its restore point is EBUSY, the IMap
# files are seen, and once the job is cancelled (the engine deletes its
# directory) the mount shows no checkpoint left.
. "$(dirname "$0")/lib.sh"
STFS=${STFS_BIN:-$STFS}

need_hadoop
H=$T/hdfs
start_hdfs "$H"
HP=$(sed -n 's/^http=//p' "$H/ready")
RPC=$(sed -n 's/^rpc=//p' "$H/ready")
HU=root # the engine writes as the user it runs as
hd() { python3 "$ROOT/scripts/webhdfs.py" "$1" "http://127.0.0.1:$HP" "$HU" "${@:2}"; }
E=$T/eng
STFS_ENGINE_JVM_OPTS="-Dstfs.fs=hdfs://127.0.0.1:$RPC" start_engine "$E" || {
	bad "the engine on hdfs:// did not start: $(tail -3 "$E/engine.log")"
	finish
	exit 1
}
REST=$(eng rest "$E")
ok "a real Zeta node with checkpoints and IMaps on hdfs://127.0.0.1:$RPC"
J=$(eng submit "$E" stream s)
check "the streaming job runs" eng wait-state "$E" "$J" RUNNING 60
n=0
for _ in $(seq 150); do
	n=$(hd files "/seatunnel/checkpoint/$J" 2>/dev/null | grep -c '\.ser ')
	[ "$n" -ge 3 ] && break
	sleep 0.2
done
check "the engine wrote checkpoints to HDFS ($n)" test "$n" -ge 3
check "the engine wrote IMap files to HDFS" test -n "$(hd files /seatunnel/imap)"

M=$T/m
mount_stfs "$M" -o "checkpoint=hdfs://127.0.0.1:$RPC/seatunnel/checkpoint/,imap=hdfs://127.0.0.1:$RPC/seatunnel/imap/,hdfs_http_port=$HP,hdfs_user=$HU,engine=$REST,state_dir=$T/sd,timeout=5000,storage_ttl=0" || {
	bad "hdfs:// mount on the engine's storage"
	finish
	exit 1
}
check "the job is listed RUNNING" grep -q RUNNING "$M/jobs/$J/status"
# the restore point: its bytes through the mount equal HDFS's own
L=$M/jobs/$J/pipelines/1/checkpoints/latest
obj=$(ls "$L/" 2>/dev/null | grep '\.ser$' | head -1)
check "latest/ holds the newest checkpoint ($obj)" test -n "$obj"
cmp -s <(hd get "/seatunnel/checkpoint/$J/$obj") "$L/$obj"
check "its bytes through the mount equal HDFS's" test $? = 0
n=$(find "$M/jobs/$J/pipelines" -path '*checkpoints/[0-9]*' -name '*.ser' | wc -l)
check "checkpoints are listed under pipelines/ ($n)" test "$n" -ge 1
# by its own directory, not latest/ (which moves to each new checkpoint);
# the engine's retention may remove it first (ENOENT): then the newest again
for _ in 1 2 3 4 5; do
	obj=$(ls "$L/" 2>/dev/null | grep '\.ser$' | head -1)
	cid=$(echo "$obj" | sed -E 's/.*-([0-9]+)\.ser$/\1/')
	e=$(rm_errno "$M/jobs/$J/pipelines/1/checkpoints/$cid/$obj")
	[ "$e" = ENOENT ] || break
done
check_eq "rm of a RUNNING job's restore point fails with EBUSY" EBUSY "$e"
# the engine's own retention (3 checkpoints, one a second) may replace the
# object at any moment, so what proves stfs left it is that it sent no
# DELETE at all; the object is then there, or superseded by the engine
check_eq "stfs sent no DELETE for it" 0 \
	"$(awk '$1 == "stfs_backend_remove_requests_total" {print $2}' "$M/.stfs/stats")"
if hd exists "/seatunnel/checkpoint/$J/$obj"; then
	ok "the restore point is still in HDFS"
else
	cid=$(echo "$obj" | sed -E 's/.*-([0-9]+)\.ser$/\1/')
	newer=$(hd files "/seatunnel/checkpoint/$J" | awk -v c="$cid" '{n=$1; sub(/\.ser$/,"",n); sub(/.*-/,"",n); if (n+0 > c+0) k++} END {print k+0}')
	check "the restore point was replaced by the engine's retention ($newer newer checkpoints)" test "$newer" -ge 3
fi
check "IMap files of the cluster are seen through the mount" \
	test -n "$(find "$M" -path '*imap*' -type f 2>/dev/null | head -1)"

eng stop-job "$E" "$J" >/dev/null
check "cancel: CANCELED" eng wait-state "$E" "$J" CANCELED 60
for _ in $(seq 50); do
	hd exists "/seatunnel/checkpoint/$J" || break
	sleep 0.2
done
check "the engine deleted the job's directory in HDFS" bash -c "! python3 '$ROOT/scripts/webhdfs.py' exists http://127.0.0.1:$HP $HU /seatunnel/checkpoint/$J"
for i in $(seq 40); do
	n=$(find "$M/jobs/$J" -name '*.ser' 2>/dev/null | wc -l)
	[ "$n" = 0 ] && break
	sleep 0.5
done
check_eq "the mount shows no checkpoint of the cancelled job (after $((i / 2)) s)" 0 "$n"
check "no failed WebHDFS call in the log" \
	bash -c "! grep -E 'webhdfs: .*HTTP' '$T/stfs-m.log'"
unmount_stfs "$M"
eng stop "$E"
"$ROOT/scripts/hadoop.sh" stop "$H"
finish
