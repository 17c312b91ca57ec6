#!/bin/bash
# The real daemon under sanitizers (part of `make test`):
#   * test_tree.sh and test_delete.sh against build-san/stfs (ASan+UBSan);
#   * test_concurrency.sh against build-tsan/stfs (TSan).
# Every daemon writes its reports to a private directory (log_path); a
# suite fails when it fails or when any report was written.  Prints
# "sanitizers: N passed, M failed".
#   SAN_SUITES="test_tree test_delete"   the ASan+UBSan suites
#   TSAN_SUITES="test_concurrency"       the TSan suites
cd "$(dirname "$0")/.." || exit 1
ROOT=$PWD
make -s -j2 build-san/stfs build-tsan/stfs || {
	echo "sanitizers: 0 passed, 1 failed"
	exit 1
}
logs=$(mktemp -d /tmp/stfs-san.XXXXXX)
trap 'rm -rf "$logs"' EXIT
p=0 f=0
# run KIND SUITE: one suite against one sanitized daemon
run() {
	local kind=$1 t=$2 d=$logs/$1-$2 out rc line
	mkdir -p "$d"
	if [ "$kind" = asan ]; then
		out=$(ASAN_OPTIONS=detect_leaks=1:abort_on_error=0:log_path=$d/asan \
			LSAN_OPTIONS=suppressions=$ROOT/tests/san/lsan.supp:print_suppressions=0 \
			UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1:log_path=$d/ubsan \
			STFS_BIN=$ROOT/build-san/stfs timeout 900 \
			bash "tests/integration/$t.sh" 2>&1)
	else
		out=$(TSAN_OPTIONS=halt_on_error=0:second_deadlock_stack=1:suppressions=$ROOT/tests/san/tsan.supp:log_path=$d/tsan \
			STFS_BIN=$ROOT/build-tsan/stfs timeout 900 \
			bash "tests/integration/$t.sh" 2>&1)
	fi
	rc=$?
	line=$(echo "$out" | grep -E '^[a-z0-9_]+: [0-9]+ passed, [0-9]+ failed' | tail -1)
	echo "-- $t under $kind: ${line:-no result line}"
	echo "$out" | grep -E '^  FAIL' | head -20
	if [ "$rc" = 0 ] && [ -n "$line" ]; then
		p=$((p + 1))
	else
		f=$((f + 1))
		echo "   FAIL $t under $kind (rc $rc)"
	fi
	if compgen -G "$d/*" >/dev/null; then
		f=$((f + 1))
		echo "   FAIL $kind reports from the daemon during $t:"
		head -60 "$d"/*
	else
		p=$((p + 1))
		echo "   ok   no $kind report from the daemon during $t"
	fi
}
for t in ${SAN_SUITES:-test_tree test_delete}; do run asan "$t"; done
for t in ${TSAN_SUITES:-test_concurrency}; do run tsan "$t"; done
echo "sanitizers: $p passed, $f failed"
[ "$f" = 0 ]
