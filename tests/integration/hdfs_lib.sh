#!/bin/bash
# Set-up and checks test_hdfs.sh and test_hdfs_krb.sh share (sourced after
# nothing else; it sources lib.sh): Maven and Java are there, a generated
# namespace, the simulator on its scenario with the jobs the suites act on,
# a file:// mount of the namespace to compare the HDFS mount with.
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

need_hadoop

HNS=/seatunnel/checkpoint # where the namespace goes in HDFS
H=$T/hdfs                 # the MiniDFSCluster's directory

# hdfs_state GENSTATE-ARGS...: the generated state in $T/state (STATE, its
# checkpoint namespace NS)
hdfs_state() {
	STATE=$T/state
	gen_state "$STATE" "$@"
	NS=$STATE/checkpoint
}

# hdfs_engine: the simulator on the scenario (PORT), the jobs of choose_jobs
# (else the suite fails here), COMMON (the options every mount takes; TMO is
# the request deadline in ms) and $T/mloc, the file:// mount of NS
hdfs_engine() {
	start_sim "$STATE/scenario.json" a
	PORT=$SIM_PORT_a
	engine_jobs_tsv "$PORT" >"$T/engine.tsv"
	if ! choose_jobs "$NS" "$T/engine.tsv"; then
		bad "the generated scenario has FAILED, FAILED/UNKNOWABLE, RUNNING and orphan jobs with storage"
		finish
		exit 1
	fi
	COMMON="engine=http://127.0.0.1:$PORT,imap=file://$STATE/imap/,timeout=$TMO,orphan_grace=10m"
	mount_stfs "$T/mloc" -o "checkpoint=file://$NS/,state_dir=$T/sd-loc,$COMMON" || {
		finish
		exit 1
	}
}

# listing MNT: "path size" of every checkpoint file below MNT/jobs
listing() { (cd "$1/jobs" && find . -path '*checkpoints*' -type f -printf '%p %s\n' | sort); }

# hdfs_same_as_local MNT FILES_FN: the HDFS mount at MNT shows what the
# file:// one shows: the union of jobs, the same checkpoint files, sizes and
# bytes, and du -sb of a job's pipelines/ equals the raw bytes FILES_FN REL
# ("path size" lines of $HNS/REL, asked HDFS itself) reports.
hdfs_same_as_local() {
	local m=$1 files=$2 p errs=0 n=0 id raw mnt L1
	check_eq "jobs/ is the union of storage and engine" "$WANT_JOBS" "$(ls "$m/jobs" | sort)"
	L1=$(listing "$T/mloc")
	check "checkpoint files are listed ($(echo "$L1" | grep -c .))" test -n "$L1"
	check_eq "the same checkpoint files and sizes as file://" "$L1" "$(listing "$m")"
	while read -r p _; do
		cmp -s "$T/mloc/jobs/$p" "$m/jobs/$p" || {
			echo "    differs: $p"
			errs=$((errs + 1))
		}
	done <<<"$L1"
	check_eq "the same bytes in every checkpoint file" 0 "$errs"
	errs=0
	for id in $storage_ids; do
		[ -n "$(find "$NS/$id" -mindepth 1 -type d -print -quit)" ] && continue
		raw=$("$files" "$id" | awk '{s+=$2} END {print s+0}')
		mnt=$(du -sb --exclude=latest --exclude=status --exclude=info "$m/jobs/$id/pipelines" | cut -f1)
		n=$((n + 1))
		[ "$raw" == "$mnt" ] || { echo "    $id: raw $raw, mount $mnt"; errs=$((errs + 1)); }
	done
	check_eq "du -sb of pipelines/ equals the raw bytes in HDFS ($n jobs)" 0 "$errs"
}
