#!/bin/bash
# Run cmocka test binaries (from the repo root) and add up their results.
# Prints each binary's own summary, then "unit: N passed, N failed".
pass=0 fail=0
for t in "$@"; do
	out=$("$t" 2>&1)
	rc=$?
	p=$(printf '%s\n' "$out" | sed -n 's/^\[  PASSED  \] \([0-9]*\) test.*/\1/p' | tail -1)
	f=$(printf '%s\n' "$out" | sed -n 's/^\[  FAILED  \] \([0-9]*\) test.*/\1/p' | tail -1)
	p=${p:-0} f=${f:-0}
	if [ "$rc" != 0 ] && [ "$f" = 0 ]; then f=1; fi # crashed
	if [ "$f" != 0 ]; then
		printf '%s\n' "$out" | grep -v '^\[ \(RUN\|       OK\) ' | tail -40
	fi
	printf '%-44s %3s passed, %s failed\n' "${t#build*/tests/}" "$p" "$f"
	pass=$((pass + p)) fail=$((fail + f))
done
echo "unit: $pass passed, $fail failed"
[ "$fail" = 0 ]
