#!/bin/bash
# R4 (README "Deleting safely"): only root and members of delete_group may delete or
# release.  A root mount with allow_other,delete_group=stfsdel, used by a
# non-root user outside the group, then inside it.  Set-up as README "Testing" says; /dev/fuse's mode, /etc/fuse.conf, the user and the group are restored
# in cleanup.
. "$(dirname "$0")/lib.sh"
cp "$STFS" "$T/stfs-bin" && STFS=$T/stfs-bin

[ "$(id -u)" = 0 ] || { echo "test_perms: needs root"; bad "run as root"; finish; exit 1; }
U=stfsuser G=stfsdel
FUSE_MODE=$(stat -c %a /dev/fuse)
cp -p /etc/fuse.conf "$T/fuse.conf.orig" 2>/dev/null
HAD_CONF=$([ -e /etc/fuse.conf ] && echo 1)
HAD_USER=$(id "$U" >/dev/null 2>&1 && echo 1)
HAD_GROUP=$(getent group "$G" >/dev/null && echo 1)
perms_cleanup() {
	cleanup
	chmod "$FUSE_MODE" /dev/fuse
	if [ -n "$HAD_CONF" ]; then cp -p "$T/fuse.conf.orig" /etc/fuse.conf 2>/dev/null ||
		cat "$T/fuse.conf.orig" >/etc/fuse.conf; fi
	[ -n "$HAD_USER" ] || userdel -r "$U" >/dev/null 2>&1
	[ -n "$HAD_GROUP" ] || groupdel "$G" >/dev/null 2>&1
	rm -rf "$T"
}
# the original fuse.conf lives in $T: keep $T until perms_cleanup restored it
KEEP_T=1
trap perms_cleanup EXIT

chmod 0666 /dev/fuse
grep -q '^user_allow_other' /etc/fuse.conf || echo user_allow_other >>/etc/fuse.conf
[ -n "$HAD_USER" ] || useradd -m "$U"
[ -n "$HAD_GROUP" ] || groupadd "$G"
gpasswd -d "$U" "$G" >/dev/null 2>&1 # start outside the group
UID_U=$(id -u "$U")
chmod 0755 "$T"
# as_user CMD: runs a shell command as the user with its current groups
as_user() { setpriv --reuid="$U" --regid="$U" --init-groups bash -c "$1"; }

NS=$T/ns SD=$T/statedir AUD=$T/audit.log
TS1=1700000000000 TS2=1700000001000 TS3=1700000002000
mkjob() {
	mkdir -p "$NS/$1" "$NS/savepoint/$1/1700/1/task-0"
	head -c 64 /dev/urandom >"$NS/$1/$TS1-1-1-1.ser"
	head -c 64 /dev/urandom >"$NS/$1/$TS2-2-1-2.ser"
	head -c 32 /dev/urandom >"$NS/$1/$TS3-3-1-3.sertmp"
	head -c 16 /dev/urandom >"$NS/savepoint/$1/1700/1/task-0/state-data"
}
raw_count() { find "$NS/$1" "$NS/savepoint/$1" -type f 2>/dev/null | wc -l; }
P1=600000000000000001 P2=600000000000000002
mkjob $P1
mkjob $P2
# README "Who can read what": a 0600 object and WAL file stay root's
PRIV=/jobs/$P2/pipelines/1/checkpoints/1/$TS1-1-1-1.ser
chmod 0600 "$NS/$P2/$TS1-1-1-1.ser"
IM=$T/imap
mkdir -p "$IM/0/engine"
echo "open wal" >"$IM/0/engine/1700000000000"
echo "password=hunter2" >"$IM/0/engine/1700000000001"
chmod 0600 "$IM/0/engine/1700000000001"
# u_cat PATH: cat as the user; prints OK or the errno name
u_cat() { as_user "cat -- '$M$1' >/dev/null" 2>&1 | errno_of_msg; }
cat >"$T/scen.json" <<EOF
{"jobs":[{"jobId":"$P1","jobName":"p1","jobStatus":"FAILED","createTime":"2024-01-01 00:00:00","finishTime":"2024-01-01 01:00:00","errorMsg":"x"},
{"jobId":"$P2","jobName":"p2","jobStatus":"FAILED","createTime":"2024-01-01 00:00:00","finishTime":"2024-01-01 01:00:00","errorMsg":"x"}]}
EOF
start_sim "$T/scen.json" a
M=$T/m
mount_stfs "$M" -o "checkpoint=file://$NS/,engine=http://127.0.0.1:$SIM_PORT_a,imap=file://$IM/,state_dir=$SD,audit_log=$AUD,timeout=2000,decision_age=0,allow_other,delete_group=$G" ||
	{ finish; exit 1; }
chmod 0755 "$M" 2>/dev/null

SUP=/jobs/$P1/pipelines/1/checkpoints/1/$TS1-1-1-1.ser
RP=/jobs/$P1/pipelines/1/checkpoints/2/$TS2-2-1-2.ser
SP=/jobs/$P1/savepoints/1700/1/task-0/state-data
TMP=/jobs/$P1/pipelines/1/checkpoints/3/$TS3-3-1-3.sertmp
# u_rm PATH: rm as the user; prints OK or the errno name
u_rm() { as_user "rm -- '$M$1'" 2>&1 | errno_of_msg; }
u_release() { as_user "echo ${2:-release} > '$M/jobs/$1/restore'" 2>&1 | errno_of_msg; }

echo "== a user outside delete_group"
check "the user reads status" as_user "grep -q '^state *FAILED' '$M/jobs/$P1/status'"
check "the user lists the tree" as_user "ls -lR '$M/jobs/$P1' >/dev/null"
check "the user reads a checkpoint" as_user "cat '$M$SUP' >/dev/null"
check_eq "the user cannot read a 0600 object" EACCES "$(u_cat "$PRIV")"
check_eq "... which shows its source mode and owner" "600 0 -rw-------" \
	"$(as_user "stat -c '%a %u %A' '$M$PRIV'")"
check "... and test -r agrees" as_user "! test -r '$M$PRIV'"
check "root reads the 0600 object" cmp -s "$NS/$P2/$TS1-1-1-1.ser" "$M$PRIV"
check_eq "the user cannot read a 0600 WAL file" EACCES "$(u_cat /imap/0/engine/1700000000001)"
check "... root can" grep -q hunter2 "$M/imap/0/engine/1700000000001"
check_eq "the user reads a 0644 WAL file" OK "$(u_cat /imap/0/engine/1700000000000)"
check "... and test -r agrees" as_user "test -r '$M/imap/0/engine/1700000000000'"
check_eq "the user cannot read .stfs/audit" EACCES "$(u_cat /.stfs/audit)"
check_eq "the user cannot read .stfs/config" EACCES "$(u_cat /.stfs/config)"
check "root reads .stfs/config" grep -q '^checkpoint' "$M/.stfs/config"
check_eq "the user reads status" OK "$(u_cat "/jobs/$P1/status")"
check_eq "deletable (user) says EACCES R4" "no EACCES R4" \
	"$(as_user "head -1 '$M/jobs/$P1/deletable'" | cut -d' ' -f1-3)"
for p in "$SUP" "$RP" "$SP" "$TMP"; do
	check_eq "user rm ${p##*/}" EACCES "$(u_rm "$p")"
	check_eq "user rm ${p##*/} audited with uid" "uid=$UID_U refused EACCES R4" \
		"$(grep -F " path=$p " "$AUD" | tail -1 | sed -n 's/.* uid=\([0-9]*\) .*/uid=\1/p') $(audit_last "$AUD" "$p")"
done
check_eq "user release" EACCES "$(u_release $P1)"
check_eq "user setfattr release" EACCES \
	"$(as_user "setfattr -n user.stfs.restore -v release '$M/jobs/$P1'" 2>&1 | errno_of_msg)"
check_eq "user release audited with uid" "op=release uid=$UID_U refused EACCES R4" \
	"$(grep -F " path=/jobs/$P1 " "$AUD" | tail -1 | sed -n 's/.* uid=\([0-9]*\) .*op=\([a-z]*\) .*/op=\2 uid=\1/p') $(audit_last "$AUD" "/jobs/$P1")"
check "no release stored" bash -c "! compgen -G '$SD/releases/*/$P1' >/dev/null"
as_user "rm -r '$M/jobs/$P1'" >/dev/null 2>&1
check_eq "user rm -r: nothing touched" 4 "$(raw_count $P1)"
check_eq "no allowed decision for the user" 0 "$(grep "uid=$UID_U " "$AUD" | grep -c outcome=allowed)"
# deletable depends on the caller: root reads P2's first, the user right after
check_eq "deletable (root) of P2" "no EPERM R2" "$(head -1 "$M/jobs/$P2/deletable" | cut -d' ' -f1-3)"
check_eq "deletable (user, just after root) of P2 says EACCES R4" "no EACCES R4" \
	"$(as_user "head -1 '$M/jobs/$P2/deletable'" | cut -d' ' -f1-3)"

echo "== the user in delete_group"
usermod -aG "$G" "$U"
check "the user is in $G" as_user "id -nG | grep -qw $G"
check_eq "a member reads .stfs/audit" OK "$(u_cat /.stfs/audit)"
check_eq "a member reads .stfs/config" OK "$(u_cat /.stfs/config)"
check_eq "a member still cannot read the 0600 object" EACCES "$(u_cat "$PRIV")"
check_eq "member release" OK "$(u_release $P1)"
check "release stored (per namespace)" compgen -G "$SD/releases/*/$P1"
check_eq "member release audited with uid" 1 \
	"$(grep -F " path=/jobs/$P1 " "$AUD" | grep op=release | grep "uid=$UID_U " | grep -c outcome=allowed)"
check_eq "deletable (member) says yes" yes "$(as_user "head -1 '$M/jobs/$P1/deletable'")"
check_eq "member rm restore point" OK "$(u_rm "$RP")"
check_eq "member rm audited with uid" "uid=$UID_U allowed" \
	"$(grep -F " path=$RP " "$AUD" | tail -1 | sed -n 's/.* uid=\([0-9]*\) .*outcome=\([a-z]*\).*/uid=\1 \2/p')"
check "member rm -r of the released job exits 0" as_user "rm -r '$M/jobs/$P1'"
check_eq "everything removed" 0 "$(raw_count $P1)"
check_eq "member rm of unreleased P2 restore point" EPERM \
	"$(u_rm "/jobs/$P2/pipelines/1/checkpoints/2/$TS2-2-1-2.ser")"
check_eq "P2 untouched" 4 "$(raw_count $P2)"

finish
