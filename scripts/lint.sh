#!/bin/bash
# make lint: banned functions, clang warnings, cppcheck, clang-format.
cd "$(dirname "$0")/.." || exit 1
rc=0
files=$(git ls-files '*.c' '*.h')
# git's banned.h / curl's checksrc list
banned='\b(sprintf|vsprintf|strcpy|strcat|strncpy|strtok|gets|atoi|atol|gmtime|localtime)\s*\('
if grep -nE "$banned" $files | grep -v '^tests/'; then
	echo "lint: banned functions above"
	rc=1
fi
# never crash after mount (stfs(1) FAILURES): nothing a backend or a user
# sends may end the daemon, so the daemon's sources call none of these
crash='\b(abort|assert|exit|_exit|quick_exit)\s*\('
if grep -nE "$crash" $(echo "$files" | grep -E '^(backends|conf|fusefs)/'); then
	echo "lint: abort/assert/exit in the daemon above (return an error instead)"
	rc=1
fi
# the include rule (README "Layout of the source")
if ! python3 scripts/layers.py; then
	echo "lint: include rule broken above"
	rc=1
fi
if ! command -v cppcheck >/dev/null || ! command -v clang-format >/dev/null; then
	echo "lint: cppcheck or clang-format missing (make deps installs them)"
	exit 1
fi
if ! make -s clang-check; then
	echo "lint: clang warnings above"
	rc=1
fi
cppcheck -q --std=c11 --enable=warning,portability --inline-suppr \
	--suppress=missingIncludeSystem --error-exitcode=1 \
	-I . -I backends -I fusefs -D_GNU_SOURCE \
	backends conf fusefs || rc=1
if ! clang-format --dry-run --Werror $files 2>/dev/null; then
	echo "lint: run 'make format'"
	rc=1
fi
[ $rc = 0 ] && echo "lint: clean"
exit $rc
