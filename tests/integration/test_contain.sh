#!/bin/bash
# Containment of the namespace roots (README "Who can read what", stfs(1)
# SECURITY): a root is pinned at mount through real directories only, a root
# or parent that another user owns or can write is refused, and a root that
# becomes a symlink after mount is never followed.  Files owned by "another
# user" are made by chown to a uid no one uses; the mount is root's.
. "$(dirname "$0")/lib.sh"

[ "$(id -u)" = 0 ] || { bad "test_contain needs root"; finish; exit 1; }
EVIL=4242 # a uid owning nothing else on this host

OLD='2020-01-01 00:00:00'
# mkns DIR ID: a dead job with a superseded checkpoint and a restore point
mkns() {
	mkdir -p "$1/$2"
	head -c 64 /dev/urandom >"$1/$2/1600000000000-1-1-1.ser"
	head -c 64 /dev/urandom >"$1/$2/1600000001000-2-1-2.ser"
	touch -d "$OLD" "$1/$2"/*
}
count() { find "$1" -type f 2>/dev/null | wc -l; }
# eventually CMD...: CMD succeeds within 3 s (a stale listing is served
# while the next one is made)
eventually() {
	for _ in $(seq 30); do
		"$@" 2>/dev/null && return 0
		sleep 0.1
	done
	return 1
}

# the files an attacker wants root to show or delete
OUT=$T/outside SECRET=$T/secret
OJ=700000000000000001
# settle MNT: let the listing that a first look starts land
settle() {
	ls "$1/jobs" >/dev/null 2>&1
	sleep 0.5
	ls "$1/jobs" >/dev/null 2>&1
	sleep 0.3
}
# reset_outside: the outside job as it was (a test that failed deleted it)
reset_outside() { rm -rf "$OUT" && mkns "$OUT" $OJ; }
reset_outside
mkdir -p "$SECRET/0/engine"
echo "password=hunter2" >"$SECRET/0/engine/1700000000000"
chmod 0700 "$SECRET" && chmod 0600 "$SECRET/0/engine/1700000000000"

echo '{"jobs":[]}' >"$T/scen.json"
start_sim "$T/scen.json" a
BASE="engine=http://127.0.0.1:$SIM_PORT_a,state_dir=$T/sd,timeout=2000,orphan_grace=1m,storage_ttl=0,cache_ttl=0,decision_age=0"

# try_mount MNT OPTS: 0 when mounted, else 1 and the daemon has exited
try_mount() {
	local mnt=$1 log
	log=$T/stfs-$(basename "$mnt").log
	mkdir -p "$mnt"
	"$STFS" -f -o "$2" "$mnt" >"$log" 2>&1 &
	local pid=$!
	PIDS+=("$pid")
	MOUNTS+=("$mnt")
	for _ in $(seq 200); do
		mountpoint -q "$mnt" && { STFS_PID=$pid; return 0; }
		kill -0 "$pid" 2>/dev/null || return 1
		sleep 0.05
	done
	return 1
}
# nothing_outside MNT: the outside job and the secret are not reachable,
# and root's release + rm -r of what would be the outside orphan deletes
# nothing there
nothing_outside() {
	local m=$1 rc=0
	[ ! -e "$m/jobs/$OJ" ] || { echo "    $m/jobs/$OJ exists"; rc=1; }
	! grep -rqs hunter2 "$m/imap/" || { echo "    the secret is read"; rc=1; }
	(echo release >"$m/jobs/$OJ/restore") 2>/dev/null
	rm -rf "$m/jobs/$OJ" 2>/dev/null
	[ "$(count "$OUT")" = 2 ] || { echo "    outside files deleted"; rc=1; }
	return $rc
}

# expect_refused MNT OPTS DESC PATTERN: the mount is refused with a log line
# matching PATTERN; one that mounts fails, and is checked for what leaks
expect_refused() {
	if try_mount "$1" "$2"; then
		bad "$3: mounted"
		check "... and shows nothing outside it" nothing_outside "$1"
		fusermount3 -u "$1"
	else
		check "refused: $3" grep -q "$4" "$T/stfs-$(basename "$1").log"
	fi
}

echo "== a /tmp-style parent another user created first"
TMPD=$T/tmp
mkdir -p "$TMPD" && chmod 1777 "$TMPD"
mkdir -p "$TMPD/seatunnel"
ln -s "$OUT" "$TMPD/seatunnel/checkpoint_snapshot"
ln -s "$SECRET" "$TMPD/seatunnel/imap"
chown -h -R $EVIL:$EVIL "$TMPD/seatunnel"
expect_refused "$T/m1" "checkpoint=file://$TMPD/seatunnel/checkpoint_snapshot/,imap=file://$TMPD/seatunnel/imap/,$BASE" \
	"below a directory of uid $EVIL, named with its owner" "$TMPD/seatunnel.*owned by uid $EVIL"
check_eq "the outside files are all there" 2 "$(count "$OUT")"
check_eq "the secret is still there" 1 "$(count "$SECRET")"

echo "== a root directory another user owns, trusted with namespace_owner"
NS2=$T/tmp/seatunnel2
mkdir -p "$NS2/ck"
mkns "$NS2/ck" 700000000000000002
chown -R $EVIL:$EVIL "$NS2"
expect_refused "$T/m2" "checkpoint=file://$NS2/ck/,$BASE" \
	"a namespace of uid $EVIL without namespace_owner" "owned by uid $EVIL"
M2b=$T/m2b
if try_mount "$M2b" "checkpoint=file://$NS2/ck/,namespace_owner=$EVIL,$BASE"; then
	check "namespace_owner=$EVIL: the job is listed" test -d "$M2b/jobs/700000000000000002"
	fusermount3 -u "$M2b"
else
	bad "namespace_owner=$EVIL: not mounted: $(tail -2 "$T/stfs-m2b.log")"
fi

echo "== group- or world-writable parents"
GW=$T/gw
mkdir -p "$GW/ns"
mkns "$GW/ns" 700000000000000003
chmod 0775 "$GW"
expect_refused "$T/m3" "checkpoint=file://$GW/ns/,$BASE" "group-writable parent" "$GW.*writable"
chmod 0755 "$GW"

echo "== a root that is a symlink at mount"
reset_outside
mkdir -p "$T/safe"
ln -s "$OUT" "$T/safe/link"
expect_refused "$T/m4" "checkpoint=file://$T/safe/link/,$BASE" "the root is a symlink" "$T/safe/link.*symbolic link"
check_eq "the outside files are all there" 2 "$(count "$OUT")"

echo "== a root swapped for a symlink after mount"
reset_outside
NS5=$T/safe/ns IM5=$T/safe/imap
J5=700000000000000005
mkns "$NS5" $J5
mkdir -p "$IM5/0/engine" && echo "job5" >"$IM5/0/engine/1700000000001"
M5=$T/m5
try_mount "$M5" "checkpoint=file://$NS5/,imap=file://$IM5/,$BASE" ||
	{ bad "mount of a safe namespace: $(tail -2 "$T/stfs-m5.log")"; finish; exit 1; }
check "before the swap: the job is listed" test -d "$M5/jobs/$J5"
check "before the swap: imap/ is read" grep -q job5 "$M5/imap/0/engine/1700000000001"
mv "$NS5" "$NS5.old" && ln -s "$OUT" "$NS5"
mv "$IM5" "$IM5.old" && ln -s "$SECRET" "$IM5"
settle "$M5"
check "after the swap: the outside job is not listed" bash -c "! ls '$M5/jobs' | grep -q $OJ"
check "after the swap: the pinned job is still listed" test -d "$M5/jobs/$J5"
check "after the swap: imap/ shows the pinned directory" grep -q job5 "$M5/imap/0/engine/1700000000001"
check "after the swap: nothing outside, release + rm -r deletes nothing" nothing_outside "$M5"
check_eq "the outside files are all there" 2 "$(count "$OUT")"
# the pinned directories go away for good, the symlinks stay
rm -rf "$NS5.old" "$IM5.old"
reset_outside
settle "$M5"
check "pinned root deleted, symlink in its place: no outside job" bash -c "! ls '$M5/jobs' | grep -q $OJ"
check "... nothing outside" nothing_outside "$M5"
check "... imap/ shows no secret" bash -c "! ls -R '$M5/imap' 2>/dev/null | grep -q 1700000000000"
check_eq "the secret is still there" 1 "$(count "$SECRET")"
# a real directory in its place again: picked up
rm "$NS5" && J6=700000000000000006 && mkns "$NS5" $J6
check "a real directory recreated at the root path is listed" eventually test -d "$M5/jobs/$J6"
fusermount3 -u "$M5"

finish
