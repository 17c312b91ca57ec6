#!/bin/bash
# Build every tests/fuzz/fuzz_*.c with libFuzzer+ASan+UBSan and run each for
# FUZZ_TIME seconds on its seed corpus (copied, so seeds stay clean).
cd "$(dirname "$0")/.." || exit 1
FUZZ_TIME=${FUZZ_TIME:-20}
PKGS="fuse3 libcurl jansson libxml-2.0 yaml-0.1 libcrypto libsystemd krb5"
SRCS=$(ls backends/*.c backends/util/*.c conf/*.c fusefs/*.c fusefs/*/*.c | grep -v fusefs/main.c)
FLAGS="-g -O1 -fsanitize=address,undefined -fno-sanitize-recover=all
 -std=gnu11 -D_GNU_SOURCE -D_FILE_OFFSET_BITS=64 -DFUSE_USE_VERSION=312
 -DSTFS_VERSION=\"fuzz\" -I. -Ibackends -Ifusefs -Itests"
mkdir -p build-fuzz/obj
# objects older than the newest header are rebuilt
touch -r "$(ls -t backends/*.h backends/util/*.h conf/*.h fusefs/*.h fusefs/*/*.h | head -1)" build-fuzz/obj/.headers
# the library once, instrumented; each target then only links
objs=""
for src in $SRCS; do
	o=build-fuzz/obj/$(echo "$src" | tr / _).o
	objs="$objs $o"
	[ "$o" -nt "$src" ] && [ "$o" -nt build-fuzz/obj/.headers ] && continue
	# shellcheck disable=SC2086
	clang $FLAGS -fsanitize=fuzzer-no-link $(pkg-config --cflags $PKGS) \
		-c -o "$o" "$src" 2>>build-fuzz/lib.log || { echo "fuzz: cannot build $src"; tail -5 build-fuzz/lib.log; exit 1; }
done
pass=0 fail=0
for f in "$@"; do
	name=$(basename "$f" .c)
	bin=build-fuzz/$name
	# shellcheck disable=SC2086
	if ! clang $FLAGS -fsanitize=fuzzer $(pkg-config --cflags $PKGS) -o "$bin" "$f" $objs \
		$(pkg-config --libs $PKGS) -lpthread 2>build-fuzz/$name.log; then
		echo "$name: build failed"; tail -5 build-fuzz/$name.log
		fail=$((fail + 1)); continue
	fi
	corpus=tests/fuzz/corpus/${name#fuzz_}
	work=build-fuzz/corpus-$name
	rm -rf "$work"; mkdir -p "$work"
	[ -d "$corpus" ] && cp -r "$corpus"/. "$work"/
	if "$bin" -max_total_time="$FUZZ_TIME" -timeout=10 -rss_limit_mb=2048 \
		-print_final_stats=0 -artifact_prefix=build-fuzz/$name- "$work" \
		>build-fuzz/$name.run 2>&1; then
		echo "$name: ok ($(grep -c . <<<"$(ls "$work")") inputs)"
		pass=$((pass + 1))
	else
		echo "$name: FAILED"; grep -A20 'ERROR\|SUMMARY' build-fuzz/$name.run | head -30
		fail=$((fail + 1))
	fi
done
echo "fuzz: $pass passed, $fail failed"
[ "$fail" = 0 ]
