# stfs — a FUSE view of an Apache SeaTunnel (Zeta) cluster.
#
#   make            build build/stfs
#   make demo       install deps, build, generate a sample cluster, mount it, tour
#   make test       install deps, build, run unit + script + integration tests
#   make check      unit tests under ASan+UBSan
#   make fuzz       libFuzzer targets for every parser (FUZZ_TIME seconds each)
#   make soak       walks and reads under faults, RSS sampled (SOAK_SECONDS)
#   make install    PREFIX=/usr/local DESTDIR=
#
# Flags the build needs are kept apart from user CFLAGS (redis's FINAL_CFLAGS).

PREFIX  ?= /usr/local
DESTDIR ?=
CC      ?= cc
CFLAGS  ?= -O2 -g
WERROR  ?= 1
FUZZ_TIME ?= 20

PKGS := fuse3 libcurl jansson libxml-2.0 yaml-0.1 libcrypto libsystemd krb5
PKG_CFLAGS = $(shell pkg-config --cflags $(PKGS) 2>/dev/null)
PKG_LIBS   = $(shell pkg-config --libs $(PKGS) 2>/dev/null) -lpthread
CMOCKA_LIBS = $(shell pkg-config --libs cmocka 2>/dev/null)

WARN = -Wall -Wextra -Wshadow -Wstrict-prototypes -Wmissing-prototypes \
       -Wmissing-declarations -Wwrite-strings -Wpointer-arith -Wformat=2 \
       -Wundef -Wvla -Wcast-qual -Wredundant-decls -Wold-style-definition \
       -Wimplicit-fallthrough -fno-common
ifeq ($(WERROR),1)
WARN += -Werror
endif

INCS = -I. -Ibackends -Ifusefs
ALL_CFLAGS = -std=gnu11 -D_FILE_OFFSET_BITS=64 -D_GNU_SOURCE \
	     -DFUSE_USE_VERSION=312 -DSTFS_VERSION=\"$(VERSION)\" \
	     $(WARN) $(INCS) $(PKG_CFLAGS) $(CFLAGS)
# each function in its own section, so that the daemon's link drops what only
# the tests call (the protostuff-to-JSON renderer, fixtures' helpers)
ALL_CFLAGS += -ffunction-sections -fdata-sections
DAEMON_LDFLAGS = -Wl,--gc-sections
SAN_FLAGS = -fsanitize=address,undefined -fno-sanitize-recover=all \
	    -fno-omit-frame-pointer -O1 -g

VERSION := 0.1.0

LIB_SRCS  := $(sort $(wildcard backends/*.c backends/util/*.c conf/*.c fusefs/*.c fusefs/*/*.c))
LIB_SRCS  := $(filter-out fusefs/main.c,$(LIB_SRCS))
FAKE_SRCS := $(sort $(wildcard tests/fakes/*.c))
TEST_SRCS := $(sort $(wildcard tests/*/test_*.c))
FUZZ_SRCS := $(sort $(wildcard tests/fuzz/fuzz_*.c))
HDRS      := $(wildcard backends/*.h backends/util/*.h conf/*.h fusefs/*.h fusefs/*/*.h tests/fakes/*.h)

LIB_OBJS  := $(LIB_SRCS:%.c=build/%.o)
FAKE_OBJS := $(FAKE_SRCS:%.c=build/%.o)
TEST_BINS := $(TEST_SRCS:%.c=build/%)
SAN_LIB_OBJS  := $(LIB_SRCS:%.c=build-san/%.o)
SAN_FAKE_OBJS := $(FAKE_SRCS:%.c=build-san/%.o)
SAN_TEST_BINS := $(TEST_SRCS:%.c=build-san/%)
TSAN_OBJS := $(LIB_SRCS:%.c=build-tsan/%.o) build-tsan/fusefs/main.o
COV_LIB_OBJS  := $(LIB_SRCS:%.c=build-cov/%.o)
COV_FAKE_OBJS := $(FAKE_SRCS:%.c=build-cov/%.o)
COV_TEST_BINS := $(TEST_SRCS:%.c=build-cov/%)
.SECONDARY: $(COV_FAKE_OBJS)
# gcov reads gcc's notes: coverage builds with gcc whatever CC is
COV_CC    ?= gcc
COV_FLAGS = --coverage -O0 -g
TSAN_FLAGS = -fsanitize=thread -fno-omit-frame-pointer -O1 -g

.PHONY: all deps demo demo-stop test unit check coverage fuzz bench bench-wal soak install uninstall \
	format format-check lint clang-check clean
all: build/stfs

build/%.o: %.c $(HDRS) Makefile
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -c -o $@ $<

build-san/%.o: %.c $(HDRS) Makefile
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) $(SAN_FLAGS) -c -o $@ $<

build/libstfs.a: $(LIB_OBJS)
	@rm -f $@
	ar rcs $@ $^

build-san/libstfs.a: $(SAN_LIB_OBJS)
	@rm -f $@
	ar rcs $@ $^

# the daemon under ASan+UBSan and under TSan (scripts/run-san.sh runs
# integration suites against them)
build-san/stfs: build-san/fusefs/main.o build-san/libstfs.a
	$(CC) $(ALL_CFLAGS) $(SAN_FLAGS) -o $@ $^ $(PKG_LIBS)

build-tsan/%.o: %.c $(HDRS) Makefile
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) $(TSAN_FLAGS) -c -o $@ $<

build-tsan/stfs: $(TSAN_OBJS)
	$(CC) $(ALL_CFLAGS) $(TSAN_FLAGS) -o $@ $^ $(PKG_LIBS)

# line coverage by the unit tests (make coverage; quiet: it prints figures)
build-cov/%.o: %.c $(HDRS) Makefile
	@mkdir -p $(dir $@)
	@$(COV_CC) $(ALL_CFLAGS) $(COV_FLAGS) -c -o $@ $<

build-cov/libstfs.a: $(COV_LIB_OBJS)
	@rm -f $@
	@ar rcs $@ $^

build-cov/tests/%: tests/%.c build-cov/libstfs.a $(COV_FAKE_OBJS) $(HDRS)
	@mkdir -p $(dir $@)
	@$(COV_CC) $(ALL_CFLAGS) $(COV_FLAGS) -Itests -o $@ $< $(COV_FAKE_OBJS) \
		build-cov/libstfs.a $(PKG_LIBS) $(CMOCKA_LIBS)

build/stfs: build/fusefs/main.o build/libstfs.a
	$(CC) $(ALL_CFLAGS) $(DAEMON_LDFLAGS) -o $@ $^ $(PKG_LIBS)

build/tests/%: tests/%.c build/libstfs.a $(FAKE_OBJS) $(HDRS)
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -Itests -o $@ $< $(FAKE_OBJS) build/libstfs.a \
		$(PKG_LIBS) $(CMOCKA_LIBS)

build-san/tests/%: tests/%.c build-san/libstfs.a $(SAN_FAKE_OBJS) $(HDRS)
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) $(SAN_FLAGS) -Itests -o $@ $< $(SAN_FAKE_OBJS) \
		build-san/libstfs.a $(PKG_LIBS) $(CMOCKA_LIBS)

# Debian packages the build, the tests and the demo need; installed when missing.
deps:
	@scripts/deps.sh

# unit: the cmocka binaries only (no deps step, no mounts).
unit: $(TEST_BINS)
	@scripts/run-unit.sh $(TEST_BINS)

# test: everything a fresh machine must pass. Prints one closing
# "N passed, N failed" line.
test: deps all $(TEST_BINS)
	@scripts/run-tests.sh $(TEST_BINS)

check: $(SAN_TEST_BINS)
	@ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 \
	 UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 \
	 scripts/run-unit.sh $(SAN_TEST_BINS)

# coverage: line coverage of every source by the unit tests, per file and
# per folder (scripts/coverage.sh; gcc's gcov)
coverage: $(COV_TEST_BINS)
	@scripts/coverage.sh build-cov $(COV_TEST_BINS)

fuzz:
	@FUZZ_TIME=$(FUZZ_TIME) scripts/run-fuzz.sh $(FUZZ_SRCS)

demo: deps all
	@scripts/demo.sh start

demo-stop:
	@scripts/demo.sh stop

bench: deps all
	@scripts/bench.sh
	@scripts/bench-wal.sh

# soak: walks and reads under faults with the daemons' RSS sampled, about
# 10 minutes (SOAK_SECONDS); not part of make test (README "Memory")
soak: all
	@scripts/soak.sh

# the IMap summary of a 1 GiB WAL alone (throughput, peak RSS)
bench-wal: all
	@scripts/bench-wal.sh

# install: the binary, the man page, an example configuration (and
# SYSCONFDIR/stfs/stfs.conf from it when there is none), the systemd unit.
SYSCONFDIR ?= /etc
UNITDIR    ?= $(PREFIX)/lib/systemd/system
install: build/stfs
	install -D -m 0755 build/stfs $(DESTDIR)$(PREFIX)/bin/stfs
	install -D -m 0644 stfs.1 $(DESTDIR)$(PREFIX)/share/man/man1/stfs.1
	install -D -m 0644 conf/example.conf $(DESTDIR)$(PREFIX)/share/stfs/example.conf
	install -D -m 0644 conf/prometheus/stfs-alerts.yml $(DESTDIR)$(PREFIX)/share/stfs/stfs-alerts.yml
	@mkdir -p $(DESTDIR)$(UNITDIR)
	sed -e 's|@BINDIR@|$(PREFIX)/bin|g' -e 's|@SYSCONFDIR@|$(SYSCONFDIR)|g' \
		conf/systemd/stfs@.service.in >$(DESTDIR)$(UNITDIR)/stfs@.service
	chmod 0644 $(DESTDIR)$(UNITDIR)/stfs@.service
	[ -e $(DESTDIR)$(SYSCONFDIR)/stfs/stfs.conf ] || \
		install -D -m 0600 conf/example.conf $(DESTDIR)$(SYSCONFDIR)/stfs/stfs.conf

# uninstall keeps SYSCONFDIR/stfs/stfs.conf (the operator's edits), like dpkg
uninstall:
	rm -f $(DESTDIR)$(PREFIX)/bin/stfs \
	      $(DESTDIR)$(PREFIX)/share/man/man1/stfs.1 \
	      $(DESTDIR)$(PREFIX)/share/stfs/example.conf \
	      $(DESTDIR)$(PREFIX)/share/stfs/stfs-alerts.yml \
	      $(DESTDIR)$(UNITDIR)/stfs@.service
	-rmdir $(DESTDIR)$(PREFIX)/share/stfs 2>/dev/null

C_FILES = $(shell git ls-files '*.c' '*.h' 2>/dev/null)
format:
	clang-format -i $(C_FILES)

format-check:
	clang-format --dry-run --Werror $(C_FILES)

lint:
	@scripts/lint.sh

# clang-check: every source compiles warning-free under clang too (lint runs it)
clang-check:
	@for f in $(LIB_SRCS) fusefs/main.c $(FAKE_SRCS) $(TEST_SRCS); do \
		clang $(ALL_CFLAGS) -Itests -fsyntax-only $$f || exit 1; done

clean:
	rm -rf build build-san build-tsan build-fuzz build-cov
