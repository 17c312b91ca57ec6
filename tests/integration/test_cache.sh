#!/bin/bash
# Caching across walks (issue 11) on a real mount over the local backend and
# the engine simulator, with the default lifetimes: a walk over an unchanged
# tree renders no pseudo-file twice, a change made to storage or to the
# engine between two walks is visible in the second walk, and the live files
# (.stfs/audit, .stfs/stats) show the current state at every read.
. "$(dirname "$0")/lib.sh"

STATE=$T/state
python3 "$ROOT/scripts/genstate.py" --out "$STATE" --jobs 40 --seed 11 \
	--pipelines 2 --checkpoints 3 >"$T/gen.log" 2>&1 || {
	cat "$T/gen.log"
	exit 1
}
NS=$STATE/checkpoint
start_sim "$STATE/scenario.json" a
PORT=$SIM_PORT_a
M=$T/mnt
AUD=$T/audit.log
# the default cache_ttl (3 s) and storage_ttl (5 s); engine_ttl 1 s so the
# engine change below is seen within the test's wait
OPTS="checkpoint=file://$NS/,engine=http://127.0.0.1:$PORT,state_dir=$T/sd,audit_log=$AUD,timeout=2000,orphan_grace=10m,engine_ttl=1000"
mount_stfs "$M" -o "$OPTS" || {
	finish
	exit 1
}

stat_of() { # stat_of NAME: a counter of .stfs/stats
	awk -v k="$1" '$1 == k { print $2 }' "$M/.stfs/stats"
}
walk() { find "$M/jobs" -type f -exec cat {} + >/dev/null 2>&1; }

# ---- an unchanged tree: the second walk renders nothing
walk
sleep 4 # longer than cache_ttl: a time window alone must not re-render
m0=$(stat_of stfs_pcache_misses_total)
walk
sleep 4 # (so that this read of .stfs/stats is fresh, cached or not)
m1=$(stat_of stfs_pcache_misses_total)
check "pseudo-file render counter read" test -n "$m0" -a -n "$m1"
# (the live files -- restore, .stfs/stats -- count as live_renders)
echo "  (renders in the second walk: $((m1 - m0)))"
check "second walk of an unchanged tree renders no pseudo-file" \
	test $((m1 - m0)) = 0

# ---- the kernel keeps unchanged listings (README "Performance, as measured
# here"): a walk of an unchanged tree, within cache_ttl of the last, reaches
# no readdir
find "$M/jobs" >/dev/null
d0=$(stat_of stfs_fuse_readdir_total)
find "$M/jobs" >/dev/null
d1=$(stat_of stfs_fuse_readdir_total)
check "readdir counter read" test -n "$d0" -a -n "$d1"
check_eq "a walk of an unchanged tree makes no readdir call" 0 $((d1 - d0))

# ---- stfs.prom: rendered once per version of its sources (a stat and a
# read of an unchanged one render nothing), its daemon series live
renders() { echo $(($(stat_of stfs_pcache_misses_total) + $(stat_of stfs_live_renders_total))); }
cat "$M/stfs.prom" >/dev/null
r0=$(renders)
r1=$(renders) # what reading .stfs/stats itself renders
stat "$M/stfs.prom" >/dev/null
cat "$M/stfs.prom" >/dev/null
r2=$(renders)
echo "  (renders by a stat and a read of stfs.prom: $((r2 - r1 - (r1 - r0))))"
check "a stat and a read of an unchanged stfs.prom render nothing" \
	test $((r2 - r1)) = $((r1 - r0))
prom_val() { awk -v k="$1" '$1 == k { print $2 }' "$M/stfs.prom"; }
refused0=$(prom_val stfs_deletions_refused_total)

# ---- the live files: an rm is in .stfs/audit at once
RUN=$(engine_jobs_tsv "$PORT" | awk -F'\t' '$2 == "RUNNING" { print $1; exit }')
OBJ=$(find "$M/jobs/$RUN/pipelines" -name '*.ser' -o -type f -path '*checkpoints/*' 2>/dev/null |
	grep -v '/status$' | head -1)
[ -n "$OBJ" ] || OBJ=$(find "$M/jobs/$RUN/pipelines" -path '*/checkpoints/*' -type f | head -1)
cat "$M/.stfs/audit" >/dev/null # rendered (and, before issue 11, cached)
rm -f "$OBJ" 2>/dev/null
REL=${OBJ#"$M"}
check "rm of a running job's object is refused and its object stays" \
	test -e "$OBJ"
check "the refusal is in .stfs/audit at once" \
	grep -qF " path=$REL " "$M/.stfs/audit"
check_eq "stfs.prom counts the refusal at once" "$((refused0 + 1))" \
	"$(prom_val stfs_deletions_refused_total)"
g0=$(stat_of stfs_fuse_read_total)
g1=$(stat_of stfs_fuse_read_total)
check "the read counter moves between two reads of .stfs/stats" \
	test "$g1" -gt "$g0"

# ---- a change to storage between two walks is seen by the second walk
J=$(engine_jobs_tsv "$PORT" | awk -F'\t' '$2 == "FINISHED" { print $1; exit }')
before=$(cat "$M/jobs/$J/status")
n_before=$(find "$M/jobs/$J" | wc -l)
find "$M/jobs" >/dev/null
SRC=$(ls "$NS/$J" | grep -- '-1-[0-9]*\.ser$' | head -1)
cp "$NS/$J/$SRC" "$NS/$J/1796124899999-1-1-999.ser"
sleep 6 # storage_ttl
find "$M/jobs" >/dev/null
sleep 0.5 # the relisting runs in the background: a walk after it
check "a checkpoint object added to storage shows in the next walk" \
	test "$(find "$M/jobs/$J" | wc -l)" -gt "$n_before"
after=$(cat "$M/jobs/$J/status")
check "the job's status is re-rendered after the storage change" \
	test "$before" != "$after"

# ---- an object removed from storage (not through stfs) between two walks
# is gone from the second walk's listing and from stat
GONE=$(ls "$NS/$J" | grep -- '-1-[0-9]*\.ser$' | grep -v 1796124899999 | head -1)
find "$M/jobs" >/dev/null
GONE_AT=$(find "$M/jobs/$J/pipelines" -name "$GONE" | head -1)
check "the object to remove is in the tree" test -n "$GONE_AT"
rm -f "$NS/$J/$GONE"
sleep 6 # storage_ttl
find "$M/jobs" >/dev/null
sleep 0.5 # the relisting runs in the background: a walk after it
check "an object removed from storage is gone from the next walk" \
	test -z "$(find "$M/jobs/$J/pipelines" -name "$GONE")"
check "and stat of it says ENOENT" test ! -e "$GONE_AT"

# ---- a change to the engine between two walks is seen by the second walk
RUN2=$(engine_jobs_tsv "$PORT" | awk -F'\t' '$2 == "RUNNING" { print $1 }' | tail -1)
check_eq "status before the engine change" RUNNING \
	"$(awk '$1 == "state" { print $2 }' "$M/jobs/$RUN2/status")"
find "$M/jobs" >/dev/null
sim_ctl "$PORT" POST /__sim/job "{\"jobId\":\"$RUN2\",\"jobStatus\":\"FAILED\"}" >/dev/null
sleep 2 # engine_ttl
find "$M/jobs" >/dev/null
sleep 0.5 # the engine is asked again in the background: a walk after it
find "$M/jobs" >/dev/null
check_eq "status after the engine change" FAILED \
	"$(awk '$1 == "state" { print $2 }' "$M/jobs/$RUN2/status")"
check "stfs.prom shows the engine change" \
	grep -q "^seatunnel_job_state{job_id=\"$RUN2\",.*state=\"FAILED\"} 1$" "$M/stfs.prom"

unmount_stfs "$M"

# ---- a pseudo-file whose text the cache cannot keep (cache_max_entries=1:
# a cheap one is never stored) is rendered once by a `cat`, and a `stat` of
# an unchanged one renders nothing: its size is kept for its version
# (README "Performance"); cache_ttl=0 so that every stat, lookup and fstat
# reaches the daemon.  The live files render once per open, not per fstat.
M2=$T/mnt2
mount_stfs "$M2" -o "$OPTS,cache_max_entries=1,cache_ttl=0" || {
	finish
	exit 1
}
stat2() { awk -v k="$1" '$1 == k { print $2 }' "$M2/.stfs/stats"; }
renders2() { echo $(($(stat2 stfs_pcache_misses_total) + $(stat2 stfs_live_renders_total))); }
P=$M2/jobs/$J/pipelines/1/status
cat "$M2/jobs/$J/status" >/dev/null # the one entry the cache holds
stat "$P" >/dev/null                 # the first stat renders it
r0=$(renders2)
r1=$(renders2) # what reading .stfs/stats itself renders
sz=$(stat -c %s "$P")
r2=$(renders2)
check_eq "a stat of an unchanged pseudo-file the cache has no room for renders nothing" \
	0 $((r2 - r1 - (r1 - r0)))
got=$(cat "$P" | wc -c)
r3=$(renders2)
check_eq "a cat of it renders it once" 1 $((r3 - r2 - (r1 - r0)))
check_eq "and reads as many bytes as its stat said" "$sz" "$got"
stat "$P" >/dev/null
r4=$(renders2)
check_eq "a stat after the cat renders nothing" 0 $((r4 - r3 - (r1 - r0)))
cat "$M2/jobs/$J/restore" >/dev/null
r5=$(renders2)
# live: its lookup's and cat's fstat's renders (the size now), and the
# open's (the content read); the open itself renders once
check_eq "a cat of a live file (restore) renders it at its lookup, fstat and open only" \
	3 $((r5 - r4 - (r1 - r0)))

# ---- the live files show the current state at every read (issue 11):
# `restore` right after a release, `.stfs/health` right after the engine
# went away (each read after a stat and a read that cached nothing)
FJ=$(engine_jobs_tsv "$PORT" | awk -F'\t' '$2 == "FAILED" { print $1; exit }')
check_eq "restore of a FAILED job before its release" protected \
	"$(head -1 "$M2/jobs/$FJ/restore")"
echo release >"$M2/jobs/$FJ/restore"
check_eq "restore says released at once" released \
	"$(head -1 "$M2/jobs/$FJ/restore")"
check "health says the engine is ok" grep -q '^engine  *ok ' "$M2/.stfs/health"

kill "$SIM_PID_a"
wait "$SIM_PID_a" 2>/dev/null
sleep 1.5 # engine_ttl
ls "$M2/jobs" >/dev/null
sleep 0.5 # the engine is asked again in the background
ls "$M2/jobs" >/dev/null
check "health says the engine is degraded at the next read" \
	grep -q '^engine  *degraded ' "$M2/.stfs/health"

# ---- jobs/ is listed from names kept for the job ids it was listed from
# (README "Performance"): a job that appears in storage, or goes, between
# two listings shows in the second (with the engine gone, so that its
# answers do not change meanwhile)
NEWJ=999000000000000001
ls "$M2/jobs" >/dev/null
mkdir "$NS/$NEWJ"
cp "$NS/$J/1796124899999-1-1-999.ser" "$NS/$NEWJ/"
sleep 6 # storage_ttl
ls "$M2/jobs" >/dev/null
sleep 0.5 # the relisting runs in the background: a listing after it
check "a job added to storage is in the next listing of jobs/" \
	bash -c "ls '$M2/jobs' | grep -qx $NEWJ"
rm -rf "${NS:?}/$NEWJ"
sleep 6
ls "$M2/jobs" >/dev/null
sleep 0.5
check "a job removed from storage is gone from the next listing of jobs/" \
	bash -c "! ls '$M2/jobs' | grep -qx $NEWJ"
unmount_stfs "$M2"
finish
