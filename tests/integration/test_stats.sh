#!/bin/bash
# .stfs/stats counts what the daemon is asked (README "Prometheus"): after a
# walk with every kind of call (find, ls -lR, readlink, getfattr, df, cat,
# test -r), each stfs_fuse_*_total is what `stfs -d` logged of that opcode,
# exactly; the freshness ticker's counters move by what it did (a job
# written to raw storage: one change, invalidated at two ticks, its
# missing negative entry answered ENOENT by the kernel), the kernel
# notifications are the NOTIFY lines of the -d log; and promtool accepts
# the file.  Symlinks below jobs/ are kept by the kernel (no READLINK for
# a second readlink or ls -l of an unchanged job's links) and show their
# new target within storage_ttl + cache_ttl after their job changed.
. "$(dirname "$0")/lib.sh"

STATE=$T/state
gen_state "$STATE" --jobs 6 --seed 21 --pipelines 2 --checkpoints 3
NS=$STATE/checkpoint
start_sim "$STATE/scenario.json" a
PORT=$SIM_PORT_a
M=$T/mnt
LOG=$T/stfs-mnt.log
OPTS="checkpoint=file://$NS/,engine=http://127.0.0.1:$PORT,state_dir=$T/sd,timeout=2000"
OPTS="$OPTS,engine_ttl=1000,storage_ttl=1000,cache_ttl=1000,kernel_ttl=600000"
mount_stfs "$M" -d -o "$OPTS" || {
	finish
	exit 1
}

# snap FILE: .stfs/stats as of now into FILE, and the -d log up to the
# OPEN that rendered it (the last one: nothing else runs) into FILE.log
snap() {
	sleep 0.5 # what the kernel sends by itself (RELEASE, FORGET) is in
	cat "$M/.stfs/stats" >"$1"
	sleep 0.3
	awk '/opcode: OPEN /{ n = NR } { l[NR] = $0 } END { for (i = 1; i <= n; i++) print l[i] }' \
		"$LOG" >"$1.log"
}
stat_of() { awk -v k="$2" '$1 == k { print $2 }' "$1"; }
ops_in() { # ops_in LOG OPCODE...: the requests of those opcodes
	local f=$1 re
	shift
	re=$(printf '%s|' "$@")
	grep -cE "opcode: (${re%|}) " "$f"
}

ls "$M/jobs" >/dev/null
sleep 1.5 # the ticker's first digest
find "$M/jobs" >/dev/null
ls -lR "$M" >/dev/null 2>&1
find "$M/jobs" -type l -exec readlink {} + >/dev/null
getfattr -d -m - "$M"/jobs/* >/dev/null 2>&1
df "$M" >/dev/null
cat "$M"/jobs/*/status >/dev/null
for f in "$M"/jobs/*/status; do test -r "$f"; done
exec 5<"$M/jobs" # pinned: the ticker notifies about what the kernel holds
echo 2 >/proc/sys/vm/drop_caches # unused dentries go: FORGETs
snap "$T/s1"

check "the daemon logs its requests (-d)" test "$(ops_in "$T/s1.log" GETATTR)" -gt 0
for pair in lookup:LOOKUP getattr:GETATTR readdir:READDIR,READDIRPLUS \
	opendir:OPENDIR releasedir:RELEASEDIR readlink:READLINK \
	getxattr:GETXATTR listxattr:LISTXATTR statfs:STATFS open:OPEN \
	read:READ release:RELEASE access:ACCESS; do
	c=stfs_fuse_${pair%%:*}_total
	# shellcheck disable=SC2046
	want=$(ops_in "$T/s1.log" $(tr , ' ' <<<"${pair#*:}"))
	check_eq "$c is what stfs -d logged (${pair#*:})" "$want" "$(stat_of "$T/s1" "$c")"
done
for c in lookup getattr readdir opendir readlink getxattr \
	listxattr statfs open read release; do
	check "the walk moved stfs_fuse_${c}_total" \
		test "$(stat_of "$T/s1" "stfs_fuse_${c}_total")" -gt 0
done
# with the ticker the kernel is told at the first OPENDIR not to send
# another, nor any RELEASEDIR (README "Caching in the kernel")
check_eq "one OPENDIR (answered ENOSYS), whatever the walk" 1 \
	"$(stat_of "$T/s1" stfs_fuse_opendir_total)"
check_eq "no RELEASEDIR" 0 "$(stat_of "$T/s1" stfs_fuse_releasedir_total)"
# a BATCH_FORGET is one request for many nodes
nf=$(ops_in "$T/s1.log" FORGET BATCH_FORGET)
check "stfs_fuse_forget_total counts the nodes forgotten (>= $nf requests, > 0)" \
	test "$(stat_of "$T/s1" stfs_fuse_forget_total)" -ge "$nf" -a "$nf" -gt 0

# ---- the ticker: a job written to raw storage
JOB=7700000000000000009
SRC=$(find "$NS" -name '*.ser' | head -1)
mkdir "$NS/$JOB"
cp "$SRC" "$NS/$JOB/1796124800000-1-1-1.ser"
# storage_ttl, a tick, and the next tick that hands the job over again
sleep 4
snap "$T/s2"
d() { echo $(($(stat_of "$T/s2" "$1") - $(stat_of "$T/s1" "$1"))); }
check "stfs_fresh_ticks_total moved (ticks: $(d stfs_fresh_ticks_total))" \
	test "$(d stfs_fresh_ticks_total)" -ge 2
check_eq "stfs_fresh_jobs_changed_total: the one job added" 1 "$(d stfs_fresh_jobs_changed_total)"
check_eq "stfs_kernel_jobs_invalidated_total: it, at two ticks" 2 \
	"$(d stfs_kernel_jobs_invalidated_total)"
inv=$(grep -E '^.*kernel: [0-9]+ job\(s\) changed' "$T/s2.log" |
	sed -E 's/.*kernel: ([0-9]+) job.*/\1/' | paste -sd+ | bc)
check_eq "stfs_kernel_jobs_invalidated_total is what the debug log says" \
	"${inv:-0}" "$(stat_of "$T/s2" stfs_kernel_jobs_invalidated_total)"
nn=$(grep -c 'NOTIFY: code=' "$T/s2.log")
check_eq "stfs_kernel_notifications_total is the NOTIFY lines of the -d log" \
	"$nn" "$(stat_of "$T/s2" stfs_kernel_notifications_total)"
check "the new job was notified ($(d stfs_kernel_notifications_total) notifications)" \
	test "$(d stfs_kernel_notifications_total)" -ge 2
check "a notification for the negative entry the kernel did not hold: ENOENT" \
	test "$(d stfs_kernel_notifications_enoent_total)" -ge 1
check_eq "no notification failed otherwise" 0 "$(stat_of "$T/s2" stfs_kernel_notifications_failed_total)"
check "the new job shows" test -d "$M/jobs/$JOB"

# ---- symlinks kept by the kernel while their job is unchanged
J=$(ls "$NS" | grep -v "^$JOB\$" | head -1)
L=$M/jobs/$J/pipelines/1/checkpoints/latest
exec 6<"$M/jobs/$J/pipelines/1/checkpoints" # pinned, as /jobs
# the link itself pinned too (an O_PATH descriptor): a dentry dropped by
# memory pressure or another suite's drop_caches would be looked up afresh
# and be right with or without caching, and this would test nothing
python3 -c 'import os, sys, time
fd = os.open(sys.argv[1], os.O_PATH | os.O_NOFOLLOW)
open(sys.argv[2], "w").close()
time.sleep(120)' "$L" "$T/pinned" &
PIN=$!
PIDS+=("$PIN")
for _ in $(seq 100); do [ -e "$T/pinned" ] && break; sleep 0.05; done
rl() { stat_of "$M/.stfs/stats" stfs_fuse_readlink_total; }
r0=$(rl)
old=$(readlink "$L")
r1=$(rl)
check "the first readlink of $J's latest asks the daemon ($old)" test "$r1" -gt "$r0"
readlink "$L" >/dev/null
ls -l "$(dirname "$L")" >/dev/null
cat "$L/../latest/"*.ser >/dev/null 2>&1 # follows the link
r2=$(rl)
check_eq "a second readlink, ls -l and a path through it make no READLINK call" 0 $((r2 - r1))
# a newer checkpoint of pipeline 1 in raw storage: latest points to it
SRC=$(ls "$NS/$J" | grep -- '-1-[0-9]*\.ser$' | head -1)
t0=$(date +%s%N)
cp "$NS/$J/$SRC" "$NS/$J/1896124899999-1-1-999.ser" # the newest write_ts
got=$old
for _ in $(seq 100); do
	got=$(readlink "$L")
	[ "$got" = 999 ] && break
	sleep 0.1
done
waited=$((($(date +%s%N) - t0) / 1000000))
check_eq "after the job changed, readlink shows the new target" 999 "$got"
# storage_ttl + cache_ttl (the ticker's period) + 1 s of margin
check "... within storage_ttl + cache_ttl + 1 s (${waited} ms)" test "$waited" -le 3000
check "... asked from the daemon again" test "$(rl)" -gt "$r2"
exec 6<&-
kill "$PIN" 2>/dev/null
wait "$PIN" 2>/dev/null

if command -v promtool >/dev/null; then
	out=$(promtool check metrics <"$T/s2" 2>&1)
	check_eq "promtool check metrics accepts .stfs/stats" "" "$out"
else
	bad "promtool is needed (scripts/deps.sh installs it)"
fi
exec 5<&-
unmount_stfs "$M"
finish
