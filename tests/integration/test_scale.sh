#!/bin/bash
# Scale, on a real mount: big directories (jobs/, by-name/, other/) list
# completely with every entry exactly once, and `rm -r` of a job of 3,000
# objects in a 12,000-object namespace lists neither the namespace nor the
# job once per object.  Times are printed as figures, never asserted.
. "$(dirname "$0")/lib.sh"

NJ=${SCALE_JOBS:-6000}	   # storage jobs of one object each
NE=${SCALE_ENGINE:-20000} # engine jobs (named), without storage
NO=3000			   # strays of job $S (other/), objects of job $O
S=700000000000000001
O=800000000000000001
NS=$T/ns
mkdir -p "$NS"
python3 - "$NS" "$T" "$NJ" "$NE" "$NO" "$S" "$O" <<'PY' || exit 1
import json, os, sys
ns, t, nj, ne, no, s, o = sys.argv[1], sys.argv[2], *map(int, sys.argv[3:6]), sys.argv[6], sys.argv[7]
ids = []
for i in range(nj):
    d = os.path.join(ns, str(100000 + i))
    os.mkdir(d)
    open(os.path.join(d, "1000-1-1-1.ser"), "w").close()
    ids.append(str(100000 + i))
os.mkdir(os.path.join(ns, s))
for i in range(no):
    open(os.path.join(ns, s, "stray-%05d" % i), "w").close()
os.mkdir(os.path.join(ns, o))
for i in range(no):  # checkpoints 1..NO of pipeline 1, written in order
    open(os.path.join(ns, o, "%d-%d-1-%d.ser" % (1700000000000 + i, i % 1000, i + 1)), "w").close()
jobs = []
for i in range(ne):
    jid = str(500000000 + i)
    # names: distinct, but every 100th job shares the name "shared"
    name = "shared" if i % 100 == 0 else "job-%06d" % i
    jobs.append({"jobId": jid, "jobName": name, "jobStatus": "FINISHED",
                 "createTime": "2025-03-07 14:02:11", "finishTime": "2025-03-07 14:05:40",
                 "jobDag": {"jobId": jid, "pipelineEdges": {"1": []}}, "metrics": {}})
    ids.append(jid)
ids += [s, o]
json.dump({"format": "stsim-scenario/1", "jobs": jobs}, open(os.path.join(t, "scenario.json"), "w"))
open(os.path.join(t, "want-jobs"), "w").write("\n".join(sorted(ids)) + "\n")
open(os.path.join(t, "want-names"), "w").write(
    "\n".join(sorted({j["jobName"] for j in jobs})) + "\n")
open(os.path.join(t, "want-shared"), "w").write(
    "\n".join(sorted(j["jobId"] for j in jobs if j["jobName"] == "shared")) + "\n")
PY
# the two big jobs are old: the engine does not know them, so orphans
find "$NS/$S" "$NS/$O" -exec touch -h -d '-1 hour' {} +
start_sim "$T/scenario.json" a
M=$T/mnt
mount_stfs "$M" -o "checkpoint=file://$NS/,engine=http://127.0.0.1:$SIM_PORT_a,state_dir=$T/sd,timeout=20000,orphan_grace=10m" ||
	{ finish; exit 1; }

stat_of() { sed -n "s/^$1 //p" "$M/.stfs/stats"; }
# timed NAME CMD...: runs CMD, prints its wall time as a figure
timed() {
	local name=$1 t0 t1 rc
	shift
	t0=$(date +%s%N)
	"$@"
	rc=$?
	t1=$(date +%s%N)
	printf '    figure: %-34s %6d ms\n' "$name" $(((t1 - t0) / 1000000)) >&2
	return $rc
}

echo "== big listings"
timed "ls jobs/ ($((NJ + NE + 2)) entries)" ls -f "$M/jobs" | grep -v '^\.\.\?$' | sort >"$T/got-jobs"
check_eq "jobs/ lists every job" "$(wc -l <"$T/want-jobs")" "$(wc -l <"$T/got-jobs")"
check_eq "jobs/ lists each job exactly once" "" "$(uniq -d "$T/got-jobs" | head -3)"
check "jobs/ is the union of storage and engine" cmp -s "$T/want-jobs" "$T/got-jobs"
timed "ls -l jobs/" ls -lU "$M/jobs" >"$T/ll-jobs"
check_eq "ls -l jobs/ stats every job" "$(wc -l <"$T/want-jobs")" "$(grep -c '^d' "$T/ll-jobs")"
timed "ls -l by-name/" ls -lU "$M/by-name" >"$T/ll-names"
ls "$M/by-name" | sort >"$T/got-names"
check "by-name/ lists every name exactly once" cmp -s <(sort "$T/want-names") "$T/got-names"
check_eq "ls -l by-name/ stats every name" "$(wc -l <"$T/want-names")" "$(grep -c '^d' "$T/ll-names")"
check "by-name/shared/ holds the jobs of that name" cmp -s "$T/want-shared" <(ls "$M/by-name/shared" | sort)
timed "ls -l jobs/$S/other/ ($NO)" ls -lU "$M/jobs/$S/other" >"$T/ll-other"
check_eq "other/ stats every stray" "$NO" "$(grep -c '^-' "$T/ll-other")"
check "other/ lists the strays exactly once" cmp -s <(ls "$NS/$S" | sort) <(ls "$M/jobs/$S/other" | sort)

echo "== rm -r of a job of $NO objects in a namespace of $((NJ + 2 * NO)) objects"
check_eq "release of the old orphan" OK "$(release_errno "$M/jobs/$O/restore")"
b0=$(stat_of stfs_catalog_builds_total)
l0=$(stat_of stfs_backend_list_requests_total)
rt0=$(date +%s%N)
timed "rm -r jobs/$O" rm -r "$M/jobs/$O"
check "rm -r exits 0" test $? = 0
rm_ms=$((($(date +%s%N) - rt0) / 1000000))
b1=$(stat_of stfs_catalog_builds_total)
l1=$(stat_of stfs_backend_list_requests_total)
echo "    figure: rm -r: $((b1 - b0)) namespace listings, $((l1 - l0)) backend list calls"
# the namespace may be relisted when storage_ttl (5 s, the default) passes,
# never per object: at most twice, plus once per storage_ttl the rm took
# (a loaded machine stretches it)
relist_max=$((2 + rm_ms / 5000))
check "rm -r relisted the namespace at most $relist_max times in $rm_ms ms ($((b1 - b0)))" \
	test $((b1 - b0)) -le $relist_max
check "rm -r made at most 40 backend list calls ($((l1 - l0)))" test $((l1 - l0)) -le 40
check_eq "the job's objects are gone from storage" "" "$(ls -A "$NS/$O" 2>/dev/null)"
check_eq "every other object is still in storage" $((NJ + NO)) "$(find "$NS" -type f | wc -l)"
check "the job left jobs/" bash -c "! ls '$M/jobs' | grep -qx $O"
check_eq "jobs/ still lists the others" "$(($(wc -l <"$T/want-jobs") - 1))" "$(ls "$M/jobs" | wc -l)"
check_eq "other/ still lists $NO strays" "$NO" "$(ls "$M/jobs/$S/other" | wc -l)"

unmount_stfs "$M"
finish
