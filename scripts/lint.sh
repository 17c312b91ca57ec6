#!/bin/bash
# make lint: banned functions, cppcheck, and clang-format conformance.
cd "$(dirname "$0")/.." || exit 1
rc=0
files=$(git ls-files '*.c' '*.h')
# git's banned.h / curl's checksrc list
banned='\b(sprintf|vsprintf|strcpy|strcat|strncpy|strtok|gets|atoi|atol|gmtime|localtime)\s*\('
if grep -nE "$banned" $files | grep -v '^tests/'; then
	echo "lint: banned functions above"
	rc=1
fi
if command -v cppcheck >/dev/null; then
	cppcheck -q --std=c11 --enable=warning,portability --inline-suppr \
		--suppress=missingIncludeSystem --error-exitcode=1 \
		-I backends -I conf -I fusefs -D_GNU_SOURCE \
		backends conf fusefs || rc=1
fi
if ! clang-format --dry-run --Werror $files 2>/dev/null; then
	echo "lint: run 'make format'"
	rc=1
fi
[ $rc = 0 ] && echo "lint: clean"
exit $rc
