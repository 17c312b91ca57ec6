#!/bin/bash
# Sourced by scripts/engine.sh and scripts/hadoop.sh: the steps their Java
# test modules (tests/engine, tests/hadoop) share.  Needs ROOT and a die().
#
# mvn_build MODULE OUT JAR SOURCE WHAT [-Dprop=value...]: nothing when OUT
# holds classpath.txt and a JAR newer than tests/MODULE/SOURCE; else
# `mvn package` in tests/MODULE with the properties, Maven's repository
# cached in build/m2 (shared by the modules), the log in OUT/mvn.log; when
# Maven fails, its last 20 lines and "Maven could not build WHAT".
mvn_build() {
	local module=$1 out=$2 jar=$3 src=$4 what=$5
	shift 5
	[ -s "$out/classpath.txt" ] && [ -s "$out/$jar" ] &&
		[ "$out/$jar" -nt "$ROOT/tests/$module/$src" ] &&
		return 0
	command -v mvn >/dev/null || die "mvn not found (apt-get install maven)"
	mkdir -p "$out"
	(cd "$ROOT/tests/$module" && mvn -B -q -Dmaven.repo.local="$ROOT/build/m2" \
		"$@" package) >"$out/mvn.log" 2>&1 || {
		tail -20 "$out/mvn.log" >&2
		die "Maven could not build $what (log: $out/mvn.log)"
	}
}

# stop_pidfile DIR NAME: SIGCONT and SIGTERM to the PID in DIR/NAME.pid, up
# to 30 s for it to end, then SIGKILL; DIR/NAME.pid and DIR/ready go.
stop_pidfile() {
	local dir=$1 pidf=$1/$2.pid pid
	pid=$(cat "$pidf" 2>/dev/null) || return 0
	kill -CONT "$pid" 2>/dev/null
	kill "$pid" 2>/dev/null
	for _ in $(seq 300); do
		kill -0 "$pid" 2>/dev/null || {
			rm -f "$pidf" "$dir/ready"
			return 0
		}
		sleep 0.1
	done
	kill -9 "$pid" 2>/dev/null
	rm -f "$pidf" "$dir/ready"
}

# wait_ready DIR PID TRIES LOG WHAT: up to TRIES x 0.2 s for DIR/ready (the
# module writes it once it serves), printed; when PID ends first or the
# time is up: PID is killed, LOG's last 20 lines and "WHAT did not start".
wait_ready() {
	local dir=$1 pid=$2
	for _ in $(seq "$3"); do
		[ -s "$dir/ready" ] && {
			cat "$dir/ready"
			return 0
		}
		kill -0 "$pid" 2>/dev/null || break
		sleep 0.2
	done
	kill "$pid" 2>/dev/null
	tail -20 "$4" >&2
	die "$5 did not start (log: $4)"
}
