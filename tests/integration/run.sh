#!/bin/bash
# Run every tests/integration/test_*.sh; print "integration: N passed, N failed".
# STFS_IT_JOBS suites run at once (default 2; each uses its own mktemp dirs,
# mountpoints and port-0 servers), the longest first; test_perms.sh, which
# changes /dev/fuse and /etc/fuse.conf for the whole machine, runs alone at
# the end. Each suite's output is printed whole when it ends.
cd "$(dirname "$0")" || exit 1
[ -x ../../build/stfs ] || { echo "build/stfs missing: run make"; exit 1; }
if ! [ -c /dev/fuse ]; then
	echo "integration: /dev/fuse missing"
	echo "integration: 0 passed, 1 failed"
	exit 1
fi
jobs_max=${STFS_IT_JOBS:-2}
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
# the long ones first, so that the short ones fill the other slot
first="test_engine.sh test_delete.sh test_hdfs.sh test_faults.sh test_engine_failover.sh"
first="$first test_hdfs_engine.sh test_tree.sh test_hdfs_ha.sh test_hdfs_tls.sh test_s3.sh test_cloud.sh test_sim_agrees.sh"
alone="test_perms.sh"
order=()
for t in $first; do [ -e "$t" ] && order+=("$t"); done
for t in test_*.sh; do
	case " $first $alone " in *" $t "*) continue ;; esac
	order+=("$t")
done

run_one() { # run_one SUITE: output in $out/SUITE.log, exit code in .rc, seconds in .s
	local t=$1 t0
	t0=$(date +%s)
	timeout 600 bash "$t" >"$out/$t.log" 2>&1
	echo $? >"$out/$t.rc"
	echo $(($(date +%s) - t0)) >"$out/$t.s"
}
p=0 f=0
report() { # report SUITE: print it and add its counts
	local t=$1 line tp tf rc
	echo "-- $t"
	cat "$out/$t.log"
	echo "-- $t: $(cat "$out/$t.s") s"
	rc=$(cat "$out/$t.rc")
	line=$(grep -E '^[a-z0-9_]+: [0-9]+ passed, [0-9]+ failed' "$out/$t.log" | tail -1)
	tp=$(echo "$line" | sed -n 's/.*: \([0-9]*\) passed.*/\1/p')
	tf=$(echo "$line" | sed -n 's/.* \([0-9]*\) failed.*/\1/p')
	[ -z "$line" ] && tf=1 tp=0
	[ "$rc" != 0 ] && [ "${tf:-0}" = 0 ] && tf=1
	p=$((p + tp)) f=$((f + tf))
}
declare -A running=()
for t in "${order[@]}"; do
	while [ "${#running[@]}" -ge "$jobs_max" ]; do
		wait -n
		for r in "${!running[@]}"; do
			[ -e "$out/$r.s" ] && { report "$r"; unset "running[$r]"; }
		done
	done
	run_one "$t" &
	running[$t]=$!
done
wait
for r in "${!running[@]}"; do report "$r"; done
for t in $alone; do
	[ -e "$t" ] || continue
	run_one "$t"
	report "$t"
done
echo "integration: $p passed, $f failed"
[ "$f" = 0 ]
