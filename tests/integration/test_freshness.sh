#!/bin/bash
# Long kernel lifetimes kept exact (README "Caching in the kernel", issue 11):
# with kernel_ttl far longer than the test, a change made to raw storage or
# to the engine between two walks -- an object added, an object removed, a
# job's state changed, a job aged into ORPHAN -- is in the second walk
# (names, sizes, stat, state), because the freshness ticker invalidates
# what changed; a walk of an unchanged tree makes ~0 FUSE calls; an idle
# mount asks neither storage nor the engine.
. "$(dirname "$0")/lib.sh"

STATE=$T/state
gen_state "$STATE" --jobs 16 --seed 12 --pipelines 2 --checkpoints 3
NS=$STATE/checkpoint
start_sim "$STATE/scenario.json" a
PORT=$SIM_PORT_a
M=$T/mnt
# kernel_ttl 10 min: nothing the kernel holds expires by itself here
GRACE=25
OPTS="checkpoint=file://$NS/,engine=http://127.0.0.1:$PORT,state_dir=$T/sd,timeout=2000"
OPTS="$OPTS,engine_ttl=1000,storage_ttl=2000,cache_ttl=1000,orphan_grace=$GRACE"
mount_stfs "$M" -o "$OPTS,kernel_ttl=600000" || {
	finish
	exit 1
}
MAIN_PID=$STFS_PID
M2=$T/ref
mount_stfs "$M2" -o "$OPTS,kernel_ttl=0" || {
	finish
	exit 1
}
REF_PID=$STFS_PID

stat_of() { # stat_of NAME: a counter of .stfs/stats
	awk -v k="$1" '$1 == k { print $2 }' "$M/.stfs/stats"
}
calls() { # FUSE calls the daemon counts: every request kind but forget
	# (nodes, not requests) and the OPENDIR/RELEASEDIR the kernel sends for
	# each directory of every walk (README "Performance, as measured here")
	awk '$1 ~ /^stfs_fuse_[a-z]+_total$/ && $1 !~ /_(read_bytes|forget|opendir|releasedir)_total$/ {
		n += $2 } END { print n + 0 }' "$M/.stfs/stats"
}
walk() { find "$M/jobs" -printf '%P %y %s\n' | sort; }
state_of() { awk '$1 == "state" { print $2 }' "$M/jobs/$1/status"; }
# every pseudo-file of job $1 has the size and content it has in the
# reference mount (kernel_ttl=0: what the kernel holds expires within 1 s);
# asked up to 3 times a second apart, as the two daemons ask the engine
# at their own times (a stale kernel entry stays stale: no retry helps it)
differs_from_ref() {
	local f r
	for f in "$M/jobs/$1"/status "$M/jobs/$1"/deletable "$M/jobs/$1"/pipelines/*/status; do
		r=$M2${f#"$M"}
		if [ "$(stat -c %s "$f")" != "$(stat -c %s "$r")" ]; then
			echo "    ${f#"$M"}: stat $(stat -c %s "$f"), reference $(stat -c %s "$r")"
			return 0
		elif ! cmp -s "$f" "$r"; then
			echo "    ${f#"$M"}: content differs from the reference"
			return 0
		fi
	done
	return 1
}
same_as_ref() {
	local out
	for _ in 1 2 3; do
		out=$(differs_from_ref "$1") || return 0
		sleep 1
	done
	echo "$out"
	return 1
}

ls "$M/jobs" >/dev/null
sleep 1.5 # the ticker's first digest: replies before it are short-lived

# ---- an unchanged tree: the second walk reaches the daemon ~never
walk >"$T/w0"
walk >"$T/w1"
c0=$(calls)
c1=$(calls) # what reading .stfs/stats costs itself
walk >"$T/w2"
c2=$(calls)
echo "  (FUSE calls of a warm walk of $(wc -l <"$T/w2") entries: $((c2 - c1 - (c1 - c0))))"
check "a warm walk of an unchanged tree makes at most 5 FUSE calls" \
	test $((c2 - c1 - (c1 - c0))) -le 5
check "and shows the same tree" cmp -s "$T/w1" "$T/w2"

# ---- four changes between two walks
# Open files pin what they name: the kernel may otherwise drop unused
# entries (FORGET) under memory pressure, and a node asked afresh is fresh
# with or without the ticker, so that this would test nothing.
exec 5<"$M/jobs"
RUN=$(engine_jobs_tsv "$PORT" | awk -F'\t' '$2 == "RUNNING" { print $1; exit }')
FIN=$(engine_jobs_tsv "$PORT" | awk -F'\t' '$2 == "FINISHED" { print $1; exit }')
check "a running and a finished job" test -n "$RUN" -a -n "$FIN"
# (d) a job only storage knows, written now: UNKNOWN until orphan_grace
ORPH=7700000000000000001
mkdir "$NS/$ORPH"
SRC=$(ls "$NS/$FIN" | grep -- '-1-[0-9]*\.ser$' | head -1)
cp "$NS/$FIN/$SRC" "$NS/$ORPH/1796124800000-1-1-1.ser"
t_orph=$(date +%s)
sleep 4 # storage_ttl and a tick
walk >"$T/w3"
check "a job written to storage shows in the next walk" grep -q "^$ORPH d" "$T/w3"
# (not read: a read makes the kernel ask the attributes again, for atime)
check_eq "it is UNKNOWN within orphan_grace" UNKNOWN \
	"$(getfattr --only-values -n user.stfs.state "$M/jobs/$ORPH" 2>/dev/null)"
exec 6<"$M/jobs/$RUN/status" 7<"$M/jobs/$ORPH/status" \
	8<"$M/jobs/$FIN/pipelines/1/checkpoints"
stat "$M/jobs/$RUN/status" "$M/jobs/$ORPH/status" >/dev/null
# (a) a checkpoint object added to raw storage
cp "$NS/$FIN/$SRC" "$NS/$FIN/1796124899999-1-1-999.ser"
# (b) one removed from raw storage (not through stfs)
GONE=$(ls "$NS/$FIN" | grep -- '-2-[0-9]*\.ser$' | head -1)
GONE_AT=$(find "$M/jobs/$FIN/pipelines" -name "$GONE" | head -1)
check "the object to remove is in the tree" test -n "$GONE_AT"
exec 9<"$GONE_AT" 4<"$(dirname "$GONE_AT")"
rm -f "$NS/$FIN/$GONE"
# (c) a job's state changed in the engine
sim_ctl "$PORT" POST /__sim/job "{\"jobId\":\"$RUN\",\"jobStatus\":\"FAILED\"}" >/dev/null
# past orphan_grace for (d), and storage_ttl + two ticks for the rest
while [ $(($(date +%s) - t_orph)) -le $((GRACE + 1)) ]; do sleep 1; done
sleep 3
# a stat before any walk: the kernel's attributes themselves are fresh
check "(c) the changed job's files: sizes and contents fresh" same_as_ref "$RUN"
check "(d) the aged job's files: sizes and contents fresh" same_as_ref "$ORPH"
walk >"$T/w4"
exec 4<&- 5<&- 6<&- 7<&- 8<&- 9<&-
check "(a) an object added to storage is in the next walk" \
	grep -q "^$FIN/pipelines/1/checkpoints/999/1796124899999-1-1-999.ser f" "$T/w4"
check "(b) an object removed from storage is gone from the next walk" \
	test -z "$(grep -F "/$GONE " "$T/w4")"
check "(b) and stat of it says ENOENT" test ! -e "$GONE_AT"
check "(a) the job that gained an object: sizes and contents fresh" \
	same_as_ref "$FIN"
check_eq "(c) the engine's new state shows" FAILED "$(state_of "$RUN")"
check "(c) user.stfs.state says it too" \
	grep -q FAILED <<<"$(getfattr --only-values -n user.stfs.state "$M/jobs/$RUN" 2>/dev/null)"
check_eq "(d) the storage-only job aged into ORPHAN" ORPHAN "$(state_of "$ORPH")"

# ---- the whole walk is what the mount without kernel caching shows
(cd "$M2/jobs" && find . -printf '%P %y %s\n' | grep -v '/restore ' | sort) >"$T/walk-ref"
(cd "$M/jobs" && find . -printf '%P %y %s\n' | grep -v '/restore ' | sort) >"$T/got"
check "the walk shows the names and sizes the kernel_ttl=0 mount shows" \
	cmp -s "$T/walk-ref" "$T/got"
diff "$T/walk-ref" "$T/got" | head -5
STFS_PID=$REF_PID
unmount_stfs "$M2"
STFS_PID=$MAIN_PID
unmount_stfs "$M"

# ---- an idle mount asks neither storage nor the engine
M3=$T/mnt3
mount_stfs "$M3" -o "$OPTS,kernel_ttl=3000" && {
	walk() { find "$M3/jobs" -printf '%P %s\n' >/dev/null; }
	walk
	sleep 5 # past kernel_ttl: every long-lived reply has expired
	cat "$M3/.stfs/stats" >/dev/null # (a read relists a stale catalog)
	sleep 0.5
	b0=$(awk '$1 == "stfs_catalog_builds_total" { print $2 }' "$M3/.stfs/stats")
	sleep 1.2
	e0=$(curl -s -m 5 "http://127.0.0.1:$PORT/__sim/stats" | python3 -c 'import json,sys; print(json.load(sys.stdin)["total"])')
	sleep 6
	e1=$(curl -s -m 5 "http://127.0.0.1:$PORT/__sim/stats" | python3 -c 'import json,sys; print(json.load(sys.stdin)["total"])')
	b1=$(awk '$1 == "stfs_catalog_builds_total" { print $2 }' "$M3/.stfs/stats")
	echo "  (idle 6 s: $((e1 - e0)) engine requests, $((b1 - b0)) listings, one by the read of .stfs/stats)"
	check_eq "an idle mount sends the engine no request" 0 $((e1 - e0))
	check "an idle mount lists storage at most once (the read of .stfs/stats)" \
		test $((b1 - b0)) -le 1
	unmount_stfs "$M3"
}
finish
