#!/bin/bash
# `make test`: unit tests, script tests, real-mount integration tests and a
# short fuzz run of every parser.  Ends with one "N passed, N failed" line.
cd "$(dirname "$0")/.." || exit 1
total_p=0 total_f=0
add() { # add "<label>: N passed, M failed" lines from a log
	local line p f
	line=$(grep -E '^[a-z-]+: [0-9]+ passed, [0-9]+ failed' "$1" | tail -1)
	p=$(echo "$line" | sed -n 's/.*: \([0-9]*\) passed.*/\1/p')
	f=$(echo "$line" | sed -n 's/.* \([0-9]*\) failed.*/\1/p')
	if [ -z "$line" ]; then p=0 f=1; echo "$2: no result line (crashed?)"; fi
	if [ "$3" != 0 ] && [ "${f:-0}" = 0 ]; then f=1; fi
	total_p=$((total_p + p)) total_f=$((total_f + f))
}
log=$(mktemp -d)
t_start=$(date +%s)
stage() { echo "== $* ($(($(date +%s) - t_start)) s in)"; }
trap 'rm -rf "$log"' EXIT

stage "lint (banned functions, cppcheck, clang-format)"
if scripts/lint.sh >"$log/lint" 2>&1; then
	echo "lint: 1 passed, 0 failed" | tee -a "$log/lint"
else
	cat "$log/lint"
	echo "lint: 0 passed, 1 failed" | tee -a "$log/lint"
fi
add "$log/lint" lint 0

stage "unit tests (cmocka)"
scripts/run-unit.sh "$@" | tee "$log/unit"
add "$log/unit" unit "${PIPESTATUS[0]}"

stage "unit tests again under ASan+UBSan (make check)"
make -s check 2>&1 | tee "$log/san"
add "$log/san" unit "${PIPESTATUS[0]}"

stage "script tests (simulator, generator)"
python3 scripts/run-pytests.py 2>&1 | tee "$log/py"
add "$log/py" scripts "${PIPESTATUS[0]}"

stage "integration tests (real mounts)"
tests/integration/run.sh 2>&1 | tee "$log/int"
add "$log/int" integration "${PIPESTATUS[0]}"

stage "the daemon under sanitizers (scripts/run-san.sh)"
scripts/run-san.sh 2>&1 | tee "$log/sanit"
add "$log/sanit" sanitizers "${PIPESTATUS[0]}"

stage "fuzz (${FUZZ_TIME:=5} s per parser)"
FUZZ_TIME=$FUZZ_TIME scripts/run-fuzz.sh tests/fuzz/fuzz_*.c 2>&1 | tee "$log/fuzz"
add "$log/fuzz" fuzz "${PIPESTATUS[0]}"

echo
echo "make test took $(($(date +%s) - t_start)) s"
echo "$total_p passed, $total_f failed"
[ "$total_f" = 0 ]
