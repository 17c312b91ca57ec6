#!/bin/sh
# Build and run one cmocka test against just the sources it needs, so that a
# half-written module elsewhere cannot break it:
#   scripts/build-one.sh tests/backends/test_protostuff.c fusefs/model/protostuff.c backends/util/buf.c
set -e
t=$1; shift
out=build/one/$(basename "$t" .c)
mkdir -p build/one
PKGS="fuse3 libcurl jansson libxml-2.0 yaml-0.1 krb5 cmocka"
cc -std=gnu11 -D_FILE_OFFSET_BITS=64 -D_GNU_SOURCE -DFUSE_USE_VERSION=312 \
   -DSTFS_VERSION='"dev"' -g -O1 -fsanitize=address,undefined \
   -Wall -Wextra -Wshadow -Wstrict-prototypes -Wmissing-prototypes \
   -Wmissing-declarations -Wwrite-strings -Wpointer-arith -Wformat=2 \
   -Wundef -Wvla -Wcast-qual -Wredundant-decls -Wold-style-definition \
   -Wimplicit-fallthrough -fno-common -Werror \
   -I. -Ibackends -Ifusefs -Itests $(pkg-config --cflags $PKGS) \
   -o "$out" "$t" "$@" $(pkg-config --libs $PKGS) -lpthread
exec "$out"
