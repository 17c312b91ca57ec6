#!/bin/bash
# stfs installed like a system tool and mounted the ways an operator does:
# `make install` into a scratch prefix, the systemd unit checked by
# systemd-analyze, the man page rendered by man(1), readiness through the
# real sd_notify protocol, an /etc/fstab line through mount(8) and
# mount.fuse3, `mount -t fuse.stfs`, auto_unmount after kill -9, and
# `make uninstall`.
. "$(dirname "$0")/lib.sh"

P=$T/usr # PREFIX
E=$T/etc # SYSCONFDIR
UNIT=$P/lib/systemd/system/stfs@.service
STATE=$T/state
python3 "$ROOT/scripts/genstate.py" --out "$STATE" --jobs 6 --seed 5 \
	>"$T/gen.log" 2>&1 || { cat "$T/gen.log"; exit 1; }
start_sim "$STATE/scenario.json" a
PORT=$SIM_PORT_a

# ---- make install / the files
make -s -C "$ROOT" install PREFIX="$P" SYSCONFDIR="$E" >"$T/install.log" 2>&1
check "make install succeeds" test $? = 0
for f in "$P/bin/stfs" "$P/share/man/man1/stfs.1" \
	"$P/share/stfs/example.conf" "$P/share/stfs/stfs-alerts.yml" "$UNIT" \
	"$E/stfs/stfs.conf"; do
	check "installed ${f#"$T"/}" test -s "$f"
done
check_eq "the binary is executable" 755 "$(stat -c %a "$P/bin/stfs")"
check_eq "the installed stfs.conf is private (it may hold secrets)" 600 \
	"$(stat -c %a "$E/stfs/stfs.conf")"
check "the unit runs the installed binary with the installed config" \
	grep -qF "ExecStart=$P/bin/stfs -f -o config=$E/stfs/stfs.conf,auto_unmount %f" "$UNIT"
check "the unit is Type=notify, Restart=on-failure" \
	bash -c "grep -qx 'Type=notify' '$UNIT' && grep -qx 'Restart=on-failure' '$UNIT'"

# ---- systemd-analyze verify: clean, and it does catch a broken unit
out=$(MANPATH=$P/share/man systemd-analyze verify "$UNIT" 2>&1)
rc=$?
check_eq "systemd-analyze verify accepts the unit (rc, output)" "0:" "$rc:$out"
sed 's/^Type=notify/Type=notifyy/' "$UNIT" >"$T/broken@.service"
out=$(systemd-analyze verify --man=no "$T/broken@.service" 2>&1)
check "systemd-analyze verify reports a broken copy (the check can fail)" \
	test -n "$out"

# ---- the man page: renders without warnings, documents every option
warn=$(MANWIDTH=80 man --warnings -l "$P/share/man/man1/stfs.1" 2>&1 >/dev/null)
check_eq "man -l --warnings renders stfs.1 without warnings" "" "$warn"
MANWIDTH=200 man -l "$P/share/man/man1/stfs.1" 2>/dev/null | col -b >"$T/man.txt"
missing=""
# the stfs section of --help (libfuse's own options follow "FUSE options")
for k in $("$P/bin/stfs" --help 2>&1 | sed '/FUSE options/q' |
	sed -n 's/^ *-o \([a-z_]*\).*/\1/p' | sort -u); do
	grep -qE "(^|[^a-z_])$k([^a-z_]|$)" "$T/man.txt" || missing="$missing $k"
done
check_eq "every stfs option of --help is in the man page" "" "$missing"

# a configuration file an operator would write
CONF=$T/stfs.conf
cat >"$CONF" <<EOF
checkpoint = file://$STATE/checkpoint/
engine = http://127.0.0.1:$PORT
imap = file://$STATE/imap/
state_dir = $T/statedir
timeout = 2000
EOF
chmod 600 "$CONF"
# jobs/ = storage ∪ engine
want_jobs=$({
	ls "$STATE/checkpoint" | grep -E '^[0-9]+$'
	engine_jobs_tsv "$PORT" | cut -f1
} | sort -u | grep -c .)

# ---- readiness: READY=1 over $NOTIFY_SOCKET once the mount answers
M1=$T/m-notify
mkdir -p "$M1"
python3 - "$T/notify.sock" "$M1" >"$T/notify.out" 2>&1 <<'PY' &
import os, socket, sys
path, mnt = sys.argv[1], sys.argv[2]
s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
s.bind(path)
s.settimeout(20)
try:
    while True:
        msg = s.recv(4096).decode()
        if "READY=1" in msg.split("\n"):
            # at READY the tree must already answer
            print("ready", len(os.listdir(mnt)) > 0, flush=True)
            break
except socket.timeout:
    print("timeout", flush=True)
PY
LPID=$!
PIDS+=("$LPID")
for _ in $(seq 100); do [ -S "$T/notify.sock" ] && break; sleep 0.05; done
NOTIFY_SOCKET=$T/notify.sock "$P/bin/stfs" -f -o "config=$CONF" "$M1" \
	>"$T/stfs-notify.log" 2>&1 &
NPID=$!
PIDS+=("$NPID")
MOUNTS+=("$M1")
wait "$LPID"
check_eq "sd_notify READY=1 arrives after the mount answers" "ready True" \
	"$(cat "$T/notify.out")"
fusermount3 -u "$M1"
for _ in $(seq 400); do kill -0 "$NPID" 2>/dev/null || break; sleep 0.05; done
check "the daemon exits after fusermount3 -u" bash -c "! kill -0 $NPID 2>/dev/null"

# ---- an /etc/fstab line and mount -t fuse.stfs, through mount(8) and
# mount.fuse3.  mount(8) runs helpers with a fixed PATH (/usr/local/bin,
# /usr/bin, ...), where `make install` with the default PREFIX puts stfs; the
# scratch prefix is bind-mounted over /usr/local/bin in a private mount
# namespace, so the real system sees nothing of it.
{
	declare -f ns_drop_inherited_fuse
	echo ns_drop_inherited_fuse
	cat <<'NS'
set -u
P=$1 CONF=$2 M2=$3 M3=$4 T=$5
mount --bind "$P/bin" /usr/local/bin || { echo "bind=failed"; exit 0; }
echo "stfs  $M2  fuse.stfs  config=$CONF,_netdev  0 0" >"$T/fstab"
out=$(mount -a -T "$T/fstab" 2>&1)
echo "fstab_rc=$?:$out"
echo "fstab_type=$(findmnt -n -o FSTYPE "$M2")"
echo "fstab_jobs=$(ls "$M2/jobs" 2>/dev/null | grep -c .)"
umount "$M2"
echo "fstab_umount=$?:$(mountpoint -q "$M2" && echo still-mounted)"
out=$(mount -t fuse.stfs stfs "$M3" -o "config=$CONF" 2>&1)
echo "type_rc=$?:$out"
echo "type_jobs=$(ls "$M3/jobs" 2>/dev/null | grep -c .)"
umount "$M3"
echo "type_umount=$?:$(mountpoint -q "$M3" && echo still-mounted)"
NS
} >"$T/in-ns.sh"
# A private namespace copies every mount of its parent, another suite's
# FUSE mounts too; the copy keeps that connection, so the other suite's
# daemon would outlive its unmount until the namespace ends.  in-ns.sh (and
# test_signals.sh) drop the copies first (lib.sh ns_drop_inherited_fuse).
mkdir -p "$T/probe-ns"
ns_probe() { # ns_probe DROP: a namespace, with or without the drop, then the unmount
	mount_stfs "$T/m-probe" -o "checkpoint=file://$T/probe-ns/" || return 1
	local pid=$STFS_PID ns alive=gone
	rm -f "$T/ns-ready"
	unshare -m --propagation private bash -c \
		"$(declare -f ns_drop_inherited_fuse); $1; touch '$T/ns-ready'; exec sleep 30" &
	ns=$!
	for _ in $(seq 100); do [ -e "$T/ns-ready" ] && break; sleep 0.05; done
	fusermount3 -u "$T/m-probe"
	for _ in $(seq 40); do kill -0 "$pid" 2>/dev/null || break; sleep 0.05; done
	kill -0 "$pid" 2>/dev/null && alive=alive
	kill "$ns"
	wait "$ns" 2>/dev/null
	for _ in $(seq 100); do kill -0 "$pid" 2>/dev/null || break; sleep 0.05; done
	echo "$alive"
}
check_eq "a namespace that keeps its copy keeps the daemon after its unmount (why the drop)" \
	alive "$(ns_probe true)"
check_eq "a namespace that drops the copies lets the daemon exit at its unmount" \
	gone "$(ns_probe ns_drop_inherited_fuse)"
M2=$T/m-fstab M3=$T/m-type
mkdir -p "$M2" "$M3"
unshare -m --propagation private bash "$T/in-ns.sh" "$P" "$CONF" "$M2" "$M3" "$T" \
	>"$T/ns.out" 2>&1
r() { sed -n "s/^$1=//p" "$T/ns.out"; }
check_eq "fstab line (fuse.stfs): mount -a -T mounts it" "0:" "$(r fstab_rc)"
check_eq "the fstab mount is fuse.stfs" "fuse.stfs" "$(r fstab_type)"
check_eq "jobs/ through the fstab mount" "$want_jobs" "$(r fstab_jobs)"
check_eq "umount of the fstab mount" "0:" "$(r fstab_umount)"
check_eq "mount -t fuse.stfs stfs DIR -o config=" "0:" "$(r type_rc)"
check_eq "jobs/ through mount -t fuse.stfs" "$want_jobs" "$(r type_jobs)"
check_eq "umount of the mount -t mount" "0:" "$(r type_umount)"
check "nothing of the namespace is left mounted here" \
	bash -c "! mountpoint -q '$M2' && ! mountpoint -q '$M3'"

# pid_of_mount MNT: the PID of the installed stfs serving MNT (by PID only)
pid_of_mount() {
	local d
	for d in /proc/[0-9]*; do
		[ "$(readlink "$d/exe" 2>/dev/null)" = "$P/bin/stfs" ] || continue
		tr '\0' ' ' <"$d/cmdline" 2>/dev/null | grep -qF " $1 " &&
			echo "${d#/proc/}" && return 0
	done
	return 1
}

# ---- the "prog#source" form of type fuse (any path), with auto_unmount:
# kill -9 of the daemon leaves no dead mount behind
M4=$T/m-kill
mkdir -p "$M4"
MOUNTS+=("$M4")
out=$(mount -t fuse "$P/bin/stfs#stfs" "$M4" -o "config=$CONF,auto_unmount" 2>&1)
check_eq "mount -t fuse PATH#stfs with auto_unmount" "0:" "$?:$out"
check_eq "jobs/ through it" "$want_jobs" "$(ls "$M4/jobs" 2>/dev/null | grep -c .)"
KPID=$(pid_of_mount "$M4")
[ -n "$KPID" ] && PIDS+=("$KPID")
check "found the daemon of that mount" test -n "$KPID"
[ -n "$KPID" ] && kill -9 "$KPID"
# gone from the mount table, not mountpoint(1): its stat of a dead FUSE
# mount fails (ENOTCONN) before auto_unmount's helper has unmounted it
gone=no
for _ in $(seq 400); do
	awk -v m="$M4" '$5 == m { f = 1 } END { exit !f }' /proc/self/mountinfo || {
		gone=yes
		break
	}
	sleep 0.05
done
check_eq "auto_unmount: kill -9 of the daemon leaves no mount behind" yes "$gone"
check "no 'Transport endpoint is not connected' after kill -9" \
	bash -c "ls '$M4' >/dev/null 2>&1"

# ---- make uninstall removes what install put, keeps the operator's config
make -s -C "$ROOT" uninstall PREFIX="$P" SYSCONFDIR="$E" >>"$T/install.log" 2>&1
check "make uninstall succeeds" test $? = 0
left=$(find "$P" -type f | sed "s|^$T/||")
check_eq "make uninstall removes every installed file" "" "$left"
check "make uninstall keeps SYSCONFDIR/stfs/stfs.conf" test -s "$E/stfs/stfs.conf"

finish
