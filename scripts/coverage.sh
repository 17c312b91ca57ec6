#!/bin/bash
# Line coverage of the sources by the unit tests (make coverage).
# Usage: scripts/coverage.sh OBJDIR TEST_BIN...
# Runs every test binary (built with --coverage into OBJDIR, from the repo
# root), then prints one line per source file of backends/, conf/ and
# fusefs/: "percent lines-run/lines path", and a total per folder.
set -u
obj=$1
shift
find "$obj" -name '*.gcda' -delete
COV_FAILED=0
for t in "$@"; do
	"$t" >/dev/null 2>&1 || { echo "coverage: $t failed" >&2; COV_FAILED=1; }
done
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
for src in $(cd "$obj" && find backends conf fusefs -name '*.gcno' | sort); do
	c=${src%.gcno}.c
	[ -f "$c" ] || continue
	# gcov -n: no .gcov files, just the summary of the file itself
	(cd "$tmp" && gcov -n -o "$OLDPWD/$obj/$(dirname "$src")" "$OLDPWD/$c" 2>/dev/null) |
		awk -v f="$c" '
			/^File / { cur = $2; gsub(/\047/, "", cur) }
			/^Lines executed:/ && index(cur, f) {
				split($2, a, ":"); pct = a[2]; sub(/%/, "", pct)
				n = $4; run = int(pct * n / 100 + 0.5)
				printf "%6.1f%% %5d/%-5d %s\n", pct, run, n, f; exit
			}
			/^No executable lines/ { exit }'
done | tee "$tmp/all"
awk '{ split($2, a, "/"); d = $3; sub(/\/[^\/]*$/, "", d);
       run[d] += a[1]; n[d] += a[2]; R += a[1]; N += a[2] }
     END { for (d in n) printf "%6.1f%% %5d/%-5d %s/ (total)\n", 100 * run[d] / n[d], run[d], n[d], d;
           printf "%6.1f%% %5d/%-5d all\n", 100 * R / N, R, N }' "$tmp/all" | sort -k3
exit $COV_FAILED
