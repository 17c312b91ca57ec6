#!/bin/sh
# Check a Prometheus text exposition file with `promtool check metrics`:
# fails (exit 1) on any parse error or lint warning, i.e. on any output.
#   scripts/promcheck.sh FILE
# Exit 77 (automake's "skipped") when promtool is missing; it comes with the
# Debian package `prometheus` (/usr/bin/promtool).
set -u
if [ $# -ne 1 ] || [ ! -r "$1" ]; then
	echo "usage: $0 FILE" >&2
	exit 2
fi
if ! command -v promtool >/dev/null 2>&1; then
	echo 'promtool not installed'
	exit 77
fi
out=$(promtool check metrics < "$1" 2>&1)
rc=$?
if [ $rc -ne 0 ] || [ -n "$out" ]; then
	printf '%s: promtool check metrics failed (rc=%d):\n%s\n' "$1" "$rc" "$out" >&2
	exit 1
fi
exit 0
