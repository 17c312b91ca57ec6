#!/bin/bash
# Logs and signals on a mounted daemon, read from what really reached
# syslog: a private rsyslogd (Debian's) takes /dev/log for the test and
# writes every message to a file.  Checked: a backgrounded stfs logs to
# syslog, log_level filters, SIGUSR2 cycles the level, SIGHUP re-reads the
# config file (log_level applied, other changes named), reopens audit_log
# after logrotate moved it and drops the caches; a bad config on SIGHUP keeps
# the old one; no secret reaches the log.
. "$(dirname "$0")/lib.sh"

command -v rsyslogd >/dev/null || {
	bad "rsyslogd is missing (scripts/deps.sh installs rsyslog)"
	finish
	exit 1
}
# /dev/log taken by another syslog: run this suite in a private mount
# namespace with ours bound over it (nothing of it is seen outside)
if [ -e /dev/log ] && [ -z "$STFS_SIG_NS" ]; then
	exec unshare -m --propagation private env STFS_SIG_NS=1 bash "$0" "$@"
fi

LOG=$T/syslog.txt
SOCK=/dev/log
if [ -n "$STFS_SIG_NS" ]; then
	SOCK=$T/log.sock
	ns_drop_inherited_fuse
fi
cat >"$T/rsyslog.conf" <<EOF
global(workDirectory="$T")
module(load="imuxsock" SysSock.Name="$SOCK" SysSock.Use="on")
template(name="t" type="string" string="%syslogseverity-text% %programname%: %msg%\n")
*.* action(type="omfile" file="$LOG" template="t")
EOF
rsyslogd -n -f "$T/rsyslog.conf" -i "$T/rsyslog.pid" >"$T/rsyslogd.out" 2>&1 &
RPID=$!
PIDS+=("$RPID")
for _ in $(seq 100); do [ -S "$SOCK" ] && break; sleep 0.05; done
[ -S "$SOCK" ] || { bad "rsyslogd did not create $SOCK"; cat "$T/rsyslogd.out"; finish; exit 1; }
if [ -n "$STFS_SIG_NS" ]; then
	mount --bind "$SOCK" /dev/log
fi
# our own socket: remove it with rsyslogd
[ -z "$STFS_SIG_NS" ] && trap 'cleanup; rm -f /dev/log' EXIT
logger -t stfs-test "probe $$"
for _ in $(seq 100); do grep -q "probe $$" "$LOG" 2>/dev/null && break; sleep 0.05; done
check "a logger(1) line reaches the syslog file (the rig works)" grep -q "probe $$" "$LOG"

STATE=$T/state
python3 "$ROOT/scripts/genstate.py" --out "$STATE" --jobs 4 --seed 9 \
	>"$T/gen.log" 2>&1 || { cat "$T/gen.log"; exit 1; }
start_sim "$STATE/scenario.json" a
PORT=$SIM_PORT_a
CONF=$T/stfs.conf
SECRET=sEcReT-$RANDOM-pw
write_conf() { # write_conf LOG_LEVEL [EXTRA LINE]
	cat >"$CONF" <<EOF
checkpoint = file://$STATE/checkpoint/
engine = http://127.0.0.1:$PORT
state_dir = $T/statedir
audit_log = $T/audit.log
engine_user = ops
engine_password = $SECRET
timeout = 1500
engine_ttl = 300
log_level = $1
$2
EOF
	chmod 600 "$CONF"
}
write_conf warning

# in the background (no -f): the daemon detaches and logs to syslog only
M=$T/mnt
mkdir -p "$M"
"$STFS" -o "config=$CONF" "$M" >"$T/stfs.out" 2>&1
check "stfs mounts in the background" mountpoint -q "$M"
MOUNTS+=("$M")
SPID=""
for d in /proc/[0-9]*; do
	[ "$(readlink "$d/exe" 2>/dev/null)" = "$(readlink -f "$STFS")" ] || continue
	tr '\0' ' ' <"$d/cmdline" | grep -qF " $M" && SPID=${d#/proc/}
done
check "found the daemon's PID" test -n "$SPID"
[ -n "$SPID" ] && PIDS+=("$SPID")

wait_log() { # wait_log REGEX: until a stfs line matches (5 s)
	for _ in $(seq 100); do
		grep -E "^[a-z]+ stfs: .*$1" "$LOG" >/dev/null 2>&1 && return 0
		sleep 0.05
	done
	return 1
}

# an engine that answers 500: "cannot list jobs" is a warning, the detail
# of each failed request a debug line
sim_ctl "$PORT" POST /__sim/fault '{"mode":"5xx"}' >/dev/null
sleep 0.4 # engine_ttl: the next listing asks the engine
ls "$M/jobs" >/dev/null 2>&1
check "a warning reaches syslog from the backgrounded daemon" \
	wait_log "engine: cannot list jobs"
check "log_level=warning keeps debug and info lines out" \
	bash -c "! grep -qE '^(debug|info) stfs' '$LOG'"
sim_ctl "$PORT" POST /__sim/fault '{"mode":"none"}' >/dev/null

# SIGUSR2 cycles: warning -> notice -> info
kill -USR2 "$SPID"
check "SIGUSR2 announces the next level (notice)" wait_log "log level is now notice"
kill -USR2 "$SPID"
check "SIGUSR2 again: info" wait_log "log level is now info"

# SIGHUP: log_level from the file, audit reopened after logrotate, caches
# dropped, other changes named
ls "$M/jobs" >/dev/null
before=$(awk '/^stfs_catalog_builds_total/ {print $2}' "$M/.stfs/stats")
mv "$T/audit.log" "$T/audit.log.1"
write_conf debug "orphan_grace = 20m"
kill -HUP "$SPID"
check "SIGHUP re-reads the config and says so" \
	wait_log "SIGHUP: configuration re-read \(log_level debug\)"
check "SIGHUP names the setting that needs a remount (orphan_grace)" \
	wait_log "applied at the next mount: orphan_grace"
sim_ctl "$PORT" POST /__sim/fault '{"mode":"5xx"}' >/dev/null
sleep 0.4 # engine_ttl: the next listing asks the engine again
ls "$M/jobs" >/dev/null 2>&1
check "log_level=debug from the re-read file lets debug lines through" \
	bash -c "for i in \$(seq 60); do grep -q '^debug stfs' '$LOG' && exit 0; sleep 0.05; done; exit 1"
sim_ctl "$PORT" POST /__sim/fault '{"mode":"none"}' >/dev/null
check "the daemon is still mounted after SIGHUP (libfuse's handler would unmount)" \
	mountpoint -q "$M"
ls "$M/jobs" >/dev/null
after=$(awk '/^stfs_catalog_builds_total/ {print $2}' "$M/.stfs/stats")
check "SIGHUP dropped the catalog (the next ls relists: $before -> $after)" \
	test "${after:-0}" -gt "${before:-0}"
j=$(ls "$M/jobs" | head -1)
rm "$M/jobs/$j/pipelines/1/checkpoints/latest" 2>/dev/null
for _ in $(seq 40); do [ -s "$T/audit.log" ] && break; sleep 0.05; done
check "after logrotate + SIGHUP the audit goes to a new audit_log" \
	test -s "$T/audit.log"

# a broken config on SIGHUP keeps the old one
write_conf bogus
kill -HUP "$SPID"
check "a bad config on SIGHUP is refused with file:line" \
	wait_log "SIGHUP: configuration not re-read.*log_level"
check "the mount survives a bad SIGHUP" bash -c "ls '$M/jobs' >/dev/null"

check "no secret in syslog" bash -c "! grep -qF '$SECRET' '$LOG'"

fusermount3 -u "$M"
finish
