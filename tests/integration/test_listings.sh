#!/bin/bash
# Listings the kernel keeps without OPENDIR (README "Caching in the kernel",
# issue 11): with FUSE_CAP_NO_OPENDIR_SUPPORT the kernel never asks stfs
# when a directory is opened and keeps every listing it read, so stfs
# drops each one when its lifetime is over.  Here, with kernel_ttl far
# longer than the test: a listing of by-state/, by-name/, imap/ or jobs/
# that changed shows the change within cache_ttl (+ the engine's and the
# storage's ages and a margin); an unchanged one is served by the kernel
# (no READDIR); below jobs/, a listing is dropped after kernel_ttl, so a
# change made while the ticker was idle shows in the first `ls` after it.
# Each change leaves the directory's mtime as it was (with a new mtime the
# kernel drops its listing by itself).
. "$(dirname "$0")/lib.sh"

STATE=$T/state
gen_state "$STATE" --jobs 12 --seed 21 --pipelines 1 --checkpoints 2
NS=$STATE/checkpoint
IM=$T/imap
FIX=$ROOT/tests/fixtures/protostuff
mkdir -p "$IM/c/m/100"
cp "$FIX/wal_state_timestamps.wal" "$IM/c/m/100/wal.txt"
start_sim "$STATE/scenario.json" a
PORT=$SIM_PORT_a
M=$T/mnt
OPTS="checkpoint=file://$NS/,imap=file://$IM/,engine=http://127.0.0.1:$PORT"
OPTS="$OPTS,state_dir=$T/sd,timeout=2000,engine_ttl=1000,storage_ttl=1000,cache_ttl=1000"
mount_stfs "$M" -o "$OPTS,kernel_ttl=600000" || {
	finish
	exit 1
}
ls "$M/jobs" >/dev/null
sleep 1.5 # the ticker's first digest

stat_of() { awk -v k="$1" '$1 == k { print $2 }' "$M/.stfs/stats"; }
readdirs() { stat_of stfs_fuse_readdir_total; }
# within WITHIN s, `ls DIR` shows (has NAME) or stops showing (lacks NAME)
# NAME; says how long it took
WITHIN=5 # cache_ttl 1 s + engine_ttl or storage_ttl 1 s + a tick + margin
shows() { # shows has|lacks DIR NAME
	local t0 i
	t0=$(date +%s%N)
	for i in $(seq $((WITHIN * 10))); do
		if ls "$2" 2>/dev/null | grep -qxF -- "$3"; then
			[ "$1" = has ] && break
		else
			[ "$1" = lacks ] && break
		fi
		sleep 0.1
	done
	echo "    (${2#"$M"}: $1 $3 after $(ms_since "$t0") ms)"
	[ "$i" -lt $((WITHIN * 10)) ]
}

RUN=$(engine_jobs_tsv "$PORT" | awk -F'\t' '$2 == "RUNNING" { print $1; exit }')
check "a running job" test -n "$RUN"
# Open directories pin their nodes: the kernel may otherwise drop an unused
# one (and its listing) under memory pressure, and a node asked afresh is
# fresh anyway, so that this would test nothing.
exec 4<"$M/by-state/RUNNING" 5<"$M/by-state/FAILED" 6<"$M/by-name" \
	7<"$M/imap/c/m" 8<"$M/imap/c/m/100" 9<"$M/jobs"
for d in by-state/RUNNING by-state/FAILED by-name imap/c/m imap/c/m/100 jobs; do
	ls "$M/$d" >/dev/null
done

# ---- an unchanged listing is the kernel's: no READDIR reaches stfs
r0=$(readdirs)
r1=$(readdirs)
ls "$M/by-state/RUNNING" "$M/jobs" >/dev/null
r2=$(readdirs)
check_eq "listing by-state/RUNNING and jobs/ again makes no READDIR" \
	0 $((r2 - r1 - (r1 - r0)))
o0=$(stat_of stfs_fuse_opendir_total)
find "$M/jobs" >/dev/null
o1=$(stat_of stfs_fuse_opendir_total)
check_eq "a walk of jobs/ sends no OPENDIR" "$o0" "$o1"

# ---- a job changing state
check "by-state/RUNNING lists the running job" shows has "$M/by-state/RUNNING" "$RUN"
sim_ctl "$PORT" POST /__sim/job "{\"jobId\":\"$RUN\",\"jobStatus\":\"FAILED\"}" >/dev/null
check "a job that failed leaves ls by-state/RUNNING" shows lacks "$M/by-state/RUNNING" "$RUN"
check "... and shows in ls by-state/FAILED" shows has "$M/by-state/FAILED" "$RUN"

# ---- a new job in the engine
NEWJ=900399999999999991
sim_ctl "$PORT" POST /__sim/job \
	"{\"jobId\":\"$NEWJ\",\"jobName\":\"brand_new_job\",\"jobStatus\":\"RUNNING\"}" >/dev/null
check "a new job's name shows in ls by-name/" shows has "$M/by-name" brand_new_job
check "... and the job in ls by-state/RUNNING" shows has "$M/by-state/RUNNING" "$NEWJ"
check "... and in ls jobs/" shows has "$M/jobs" "$NEWJ"

# ---- IMap WAL files (each directory's time kept as it was: an object
# store's "directories" have none that moves)
keep_time() { touch -r "$2" "$1"; }
t_m=$T/time-m t_100=$T/time-100
touch -r "$IM/c/m" "$t_m"
touch -r "$IM/c/m/100" "$t_100"
mkdir -p "$IM/c/m/200"
cp "$FIX/wal_checkpoint_id_map.wal" "$IM/c/m/200/wal.txt"
keep_time "$IM/c/m" "$t_m"
check "a new IMap region shows in ls imap/c/m" shows has "$M/imap/c/m" 200
cp "$FIX/wal_checkpoint_id_map.wal" "$IM/c/m/100/1_wal.txt"
keep_time "$IM/c/m/100" "$t_100"
check "a new WAL file shows in ls imap/c/m/100" shows has "$M/imap/c/m/100" 1_wal.txt
rm -f "$IM/c/m/100/1_wal.txt"
keep_time "$IM/c/m/100" "$t_100"
check "a WAL file removed leaves ls imap/c/m/100" shows lacks "$M/imap/c/m/100" 1_wal.txt
exec 4<&- 5<&- 6<&- 7<&- 8<&- 9<&-
unmount_stfs "$M"

# ---- below jobs/: a change made while the ticker was idle
M2=$T/mnt2
mount_stfs "$M2" -o "$OPTS,kernel_ttl=3000" && {
	FIN=$(cd "$NS" && ls -d */ | tr -d / | while read -r j; do
		ls "$j" | grep -q -- '-1-[0-9]*\.ser$' && { echo "$j"; break; }
	done)
	CK=$M2/jobs/$FIN/pipelines/1/checkpoints
	ls "$M2/jobs" >/dev/null
	sleep 1.5 # the first digest
	exec 4<"$CK"
	before=$(ls "$CK")
	check "a job with checkpoints" test -n "$FIN" -a -n "$before"
	sleep 5 # past kernel_ttl: the ticker is idle, the kernel holds no reply
	# the older checkpoint goes (the directory's time, its newest
	# object's, stays: the kernel cannot tell from it)
	OLD=$(ls "$NS/$FIN" | grep -- '-1-[0-9]*\.ser$' | sort -t- -k4n | head -1)
	OLDID=${OLD##*-}
	OLDID=${OLDID%.ser}
	check "the older checkpoint is listed" grep -qx "$OLDID" <<<"$before"
	rm -f "$NS/$FIN/$OLD"
	sleep 1.5 # storage_ttl
	cat "$M2/.stfs/stats" >/dev/null # relists the stale catalog (in the
	sleep 0.5                        # background), as any walk would
	check "a checkpoint removed while the ticker was idle is gone from the first ls" \
		test -z "$(ls "$CK" | grep -x "$OLDID")"
	exec 4<&-
	unmount_stfs "$M2"
}
finish
