#!/bin/bash
# The HDFS backend on an HA pair of real namenodes: Hadoop 3.5.0's
# MiniDFSCluster with MiniDFSNNTopology.simpleHATopology() (scripts/hadoop.sh
# start DIR ha).  The namenodes come from an imported seatunnel.yaml
# (fs.defaultFS hdfs://<nameservice>, dfs.nameservices, dfs.ha.namenodes,
# http-address), listed standby first: the StandbyException fails over and
# the active one is remembered.  Then the active namenode is switched,
# again and again, in the middle of long listings (dfs.ls.limit 2: many
# LISTSTATUS_BATCH pages) and of a cat of a large file: nothing is lost and
# no call fails.  A killed namenode fails over too.
. "$(dirname "$0")/lib.sh"
STFS=${STFS_BIN:-$STFS}

need_hadoop

HU=stfs
STATE=$T/state
python3 "$ROOT/scripts/genstate.py" --out "$STATE" --jobs 6 --seed 5 \
	>"$T/gen.log" 2>&1 || { cat "$T/gen.log"; exit 1; }
NS=$STATE/checkpoint
HNS=/seatunnel/checkpoint

H=$T/hdfs
STFS_HDFS_LIST_LIMIT=2 start_hdfs "$H" ha
NN0=$(sed -n 's/^nn0_http=//p' "$H/ready")
NN1=$(sed -n 's/^nn1_http=//p' "$H/ready")
NSVC=$(sed -n 's/^nameservice=//p' "$H/ready")
ok "an HA pair of real namenodes is up ($NSVC: nn0 http $NN0 active, nn1 http $NN1 standby)"
check "the standby answers WebHDFS with 403 StandbyException" bash -c \
	"curl -s -w '%{http_code}' 'http://127.0.0.1:$NN1/webhdfs/v1/?op=GETFILESTATUS&user.name=$HU' | grep -q 'StandbyException.*403\$'"
up() { python3 "$ROOT/scripts/webhdfs.py" "$1" "http://127.0.0.1:$NN0" "$HU" "${@:2}"; }
nfiles=$(find "$NS" -type f | wc -l)
check_eq "uploaded $nfiles files through the active namenode" "$nfiles" "$(up upload "$NS" "$HNS")"
# a large file under a job (shown in its other/ directory)
BIGJOB=$(cd "$NS" && ls | grep -E '^[0-9]+$' | head -1)
head -c $((24 << 20)) /dev/urandom >"$T/big.bin"
up put "$T/big.bin" "$HNS/$BIGJOB/big.bin"

# the operator's seatunnel.yaml: the standby is named first
plugin_yaml "$T/seatunnel.yaml" "namespace: $HNS/" "storage.type: hdfs" \
	"fs.defaultFS: hdfs://$NSVC" \
	"seatunnel.hadoop.dfs.nameservices: $NSVC" \
	"seatunnel.hadoop.dfs.ha.namenodes.$NSVC: nn2,nn1" \
	"seatunnel.hadoop.dfs.namenode.http-address.$NSVC.nn1: 127.0.0.1:$NN0" \
	"seatunnel.hadoop.dfs.namenode.http-address.$NSVC.nn2: 127.0.0.1:$NN1" \
	"seatunnel.hadoop.dfs.namenode.rpc-address.$NSVC.nn1: 127.0.0.1:8020" \
	"seatunnel.hadoop.dfs.namenode.rpc-address.$NSVC.nn2: 127.0.0.1:8021"

start_sim "$STATE/scenario.json" a
PORT=$SIM_PORT_a
COMMON="engine=http://127.0.0.1:$PORT,imap=file://$STATE/imap/,timeout=3000,orphan_grace=10m"
mount_stfs "$T/mloc" -o "checkpoint=file://$NS/,state_dir=$T/sd-loc,$COMMON" || {
	finish
	exit 1
}
M=$T/ha
mount_stfs "$M" -o "seatunnel_yaml=$T/seatunnel.yaml,hdfs_user=$HU,storage_ttl=0,cache_ttl=0,state_dir=$T/sd-ha,$COMMON" || {
	bad "mount from the seatunnel.yaml's HA keys"
	finish
	exit 1
}
MPID=$STFS_PID
ok "mount from the seatunnel.yaml's HA keys (checkpoint=hdfs://$NSVC/…)"
tree() { (cd "$1/jobs" && find . -path '*/other' -prune -o -printf '%p %y\n' -path '*checkpoints*' -type f -printf '%p %s\n' | sort); }
WANT=$(tree "$T/mloc")
check_eq "the tree over HA equals file:// ($(echo "$WANT" | wc -l) entries)" "$WANT" "$(tree "$M")"
check "the standby named first was failed over" \
	grep -q "namenode http://127.0.0.1:$NN1 is standby; trying the next one" "$T/stfs-ha.log"
n1=$(grep -c "is standby" "$T/stfs-ha.log")
tree "$M" >/dev/null
check_eq "the active namenode is remembered (no new standby answers)" "$n1" "$(grep -c "is standby" "$T/stfs-ha.log")"
check "the one that answered is asked first (.stfs/config)" \
	grep -qx "hdfs_active = http://127.0.0.1:$NN0" "$M/.stfs/config"
check_eq "the big file reads back whole" "$(md5sum <"$T/big.bin")" "$(md5sum <"$M/jobs/$BIGJOB/other/big.bin")"

# the same HA keys in the hdfs-site.xml an hdfs_site_path names (README
# "HDFS"), the standby first again
cat >"$T/hdfs-site.xml" <<EOF
<configuration>
  <property><name>dfs.nameservices</name><value>$NSVC</value></property>
  <property><name>dfs.ha.namenodes.$NSVC</name><value>nn2,nn1</value></property>
  <property><name>dfs.namenode.http-address.$NSVC.nn1</name><value>127.0.0.1:$NN0</value></property>
  <property><name>dfs.namenode.http-address.$NSVC.nn2</name><value>127.0.0.1:$NN1</value></property>
</configuration>
EOF
plugin_yaml "$T/seatunnel-site.yaml" "namespace: $HNS/" "storage.type: hdfs" \
	"fs.defaultFS: hdfs://$NSVC" "hdfs_site_path: $T/hdfs-site.xml"
if mount_stfs "$T/hasite" -o "seatunnel_yaml=$T/seatunnel-site.yaml,hdfs_user=$HU,state_dir=$T/sd-hasite,$COMMON"; then
	check "hdfs_site_path's HA keys give the namenodes (.stfs/config)" \
		grep -qx "namenodes = 127.0.0.1:$NN1,127.0.0.1:$NN0" "$T/hasite/.stfs/config"
	check_eq "and the tree over them equals file://" "$WANT" "$(tree "$T/hasite")"
	unmount_stfs "$T/hasite"
else
	bad "mount from a seatunnel.yaml whose hdfs_site_path holds the HA keys"
fi
STFS_PID=$MPID

# -- switches of the active namenode during listings and reads --------------
# walkers: find over the whole tree and cat of the big file, in a loop,
# while the active namenode is switched 7 times, each time with 800 ms
# when both are standby
: >"$T/walk.bad"
(
	i=0
	while [ ! -e "$T/stop" ]; do
		tree "$M" >"$T/walk.out" 2>"$T/walk.err"
		if [ -s "$T/walk.err" ] || [ "$(cat "$T/walk.out")" != "$WANT" ]; then
			echo "walk $i differs" >>"$T/walk.bad"
			diff <(echo "$WANT") "$T/walk.out" | head -5 >>"$T/walk.bad"
			cat "$T/walk.err" >>"$T/walk.bad"
		fi
		i=$((i + 1))
		echo "$i" >"$T/walks"
	done
) &
W1=$!
PIDS+=("$W1")
(
	i=0
	while [ ! -e "$T/stop" ]; do
		# O_DIRECT: every read goes to the daemon, not the page cache
		md5=$(dd if="$M/jobs/$BIGJOB/other/big.bin" iflag=direct bs=1M 2>"$T/cat.err" | md5sum)
		grep -q 'copied' "$T/cat.err" && : >"$T/cat.err"
		[ "$md5" == "$(md5sum <"$T/big.bin")" ] && [ ! -s "$T/cat.err" ] ||
			echo "cat $i: $md5 $(cat "$T/cat.err")" >>"$T/walk.bad"
		i=$((i + 1))
		echo "$i" >"$T/cats"
	done
) &
W2=$!
PIDS+=("$W2")
sleep 1
for n in 1 0 1 0 1 0 1; do
	# 800 ms with no active namenode, as in a real failover
	"$ROOT/scripts/hadoop.sh" active "$H" "$n" 800 || bad "namenode $n becomes active"
	sleep 1.5
done
touch "$T/stop"
wait "$W1" "$W2"
check "7 switches of the active namenode: $(cat "$T/walks") walks and $(cat "$T/cats") cats of 24 MiB (O_DIRECT), none lost anything or failed" \
	test ! -s "$T/walk.bad"
[ -s "$T/walk.bad" ] && head -20 "$T/walk.bad"
check "the walkers really overlapped the switches" test "$(cat "$T/walks")" -ge 4 -a "$(cat "$T/cats")" -ge 2
check "the mount followed the switches (standby answers in its log)" \
	test "$(grep -c "is standby" "$T/stfs-ha.log")" -gt "$n1"
ls "$M/jobs/$BIGJOB/other" >/dev/null
check "after the last switch namenode 1 is asked first (.stfs/config)" \
	grep -qx "hdfs_active = http://127.0.0.1:$NN1" "$M/.stfs/config"
check "the daemon is alive" alive "$MPID"
check "no failed WebHDFS call in the log" \
	bash -c "! grep -E 'webhdfs: (LISTSTATUS|GETFILESTATUS|OPEN|DELETE)' '$T/stfs-ha.log'"
grep -E 'webhdfs: (LISTSTATUS|GETFILESTATUS|OPEN|DELETE)' "$T/stfs-ha.log" | head -3

unmount_stfs "$M"
"$ROOT/scripts/hadoop.sh" stop "$H"
finish
