#!/bin/bash
# Run every tests/integration/test_*.sh; print "integration: N passed, N failed".
cd "$(dirname "$0")" || exit 1
[ -x ../../build/stfs ] || { echo "build/stfs missing: run make"; exit 1; }
if ! [ -c /dev/fuse ]; then
	echo "integration: /dev/fuse missing"
	echo "integration: 0 passed, 1 failed"
	exit 1
fi
p=0 f=0
for t in test_*.sh; do
	echo "-- $t"
	t0=$(date +%s)
	out=$(timeout 600 bash "$t" 2>&1)
	rc=$?
	echo "$out"
	echo "-- $t: $(($(date +%s) - t0)) s"
	line=$(echo "$out" | grep -E '^[a-z0-9_]+: [0-9]+ passed, [0-9]+ failed' | tail -1)
	tp=$(echo "$line" | sed -n 's/.*: \([0-9]*\) passed.*/\1/p')
	tf=$(echo "$line" | sed -n 's/.* \([0-9]*\) failed.*/\1/p')
	[ -z "$line" ] && tf=1 tp=0
	[ "$rc" != 0 ] && [ "${tf:-0}" = 0 ] && tf=1
	p=$((p + tp)) f=$((f + tf))
done
echo "integration: $p passed, $f failed"
[ "$f" = 0 ]
