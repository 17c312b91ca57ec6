#!/bin/bash
# A real Apache SeaTunnel Zeta node for the tests (README "The real engine in
# the tests"), driven through its REST API only.
#
#   engine.sh build                       fetch the engine with Maven, compile tests/engine
#   engine.sh start DIR [CLUSTER]         start a node on DIR/{checkpoint,imap}; prints DIR/ready
#   engine.sh stop DIR                    SIGTERM the node and wait for it
#   engine.sh rest DIR                    the REST base URL
#   engine.sh submit DIR KIND NAME [ID [savepoint]]
#        KIND: stream (FakeSource→Console, checkpoint every second), stream2 (two
#        pipelines), batch (finishes), fail:<S> (streaming, throws S seconds after
#        submission: FAILED after some checkpoints); ID submits under that job id,
#        "savepoint" with isStartWithSavePoint=true (a restore). Prints the job id.
#   engine.sh stop-job DIR ID [savepoint] POST /stop-job (isStopWithSavePoint)
#   engine.sh info DIR ID                 GET /job-info/ID
#   engine.sh state DIR ID                the job's jobStatus
#   engine.sh wait-state DIR ID STATE [SECONDS]
#   engine.sh get DIR PATH                GET any REST path (e.g. /finished-jobs/)
#
# STFS_ENGINE_VERSION selects the engine (default 2.3.8), STFS_ENGINE_JAVA the
# java binary (default OpenJDK 17). Maven's repository is cached in
# build/m2, the compiled module in build/engine/<version>.
set -o pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
V=${STFS_ENGINE_VERSION:-2.3.8}
JAVA=${STFS_ENGINE_JAVA:-/usr/lib/jvm/java-17-openjdk-amd64/bin/java}
B=$ROOT/build/engine/$V
CURL=(curl -sS -m 10)
. "$ROOT/scripts/javamod.sh"

die() {
	echo "engine.sh: $*" >&2
	exit 1
}

build() {
	# Hadoop's shaded jar is served up to 2.3.9; newer servers take that one
	local hv=$V
	case $V in 2.3.1[0-9]) hv=2.3.9 ;; esac
	mvn_build engine "$B" stfs-engine-1.jar src/main/java/stfs/engine/EngineMain.java \
		"the engine $V" -Dseatunnel.version="$V" -Dhadoop.uber.version="$hv"
}

# Hazelcast's documented --add-opens set for Java 9+, plus java.util
JOPTS=(--add-modules java.se
	--add-exports java.base/jdk.internal.ref=ALL-UNNAMED
	--add-opens java.base/java.lang=ALL-UNNAMED
	--add-opens java.base/java.util=ALL-UNNAMED
	--add-opens java.base/java.nio=ALL-UNNAMED
	--add-opens java.base/sun.nio.ch=ALL-UNNAMED
	--add-opens java.management/sun.management=ALL-UNNAMED
	--add-opens jdk.management/com.sun.management.internal=ALL-UNNAMED)

start() {
	local dir=$1 cluster=${2:-stfs-$$-$RANDOM}
	[ -n "$dir" ] || die "start: DIR missing"
	build || exit 1
	[ -x "$JAVA" ] || die "no java at $JAVA (set STFS_ENGINE_JAVA)"
	mkdir -p "$dir"
	rm -f "$dir/ready"
	# one cluster name and port per state dir: a restart rejoins its own
	# IMap files and serves REST where mounts expect it
	if [ -s "$dir/cluster" ]; then cluster=$(cat "$dir/cluster"); else echo "$cluster" >"$dir/cluster"; fi
	local port
	port=$(cat "$dir/port" 2>/dev/null)
	"$JAVA" -Xms256m -Xmx1g -XX:+UseSerialGC "${JOPTS[@]}" \
		-Dlog4j2.level=WARN ${STFS_ENGINE_JVM_OPTS} \
		-cp "$B/stfs-engine-1.jar:$(cat "$B/classpath.txt")" \
		stfs.engine.EngineMain "$dir" "$cluster" $port >>"$dir/engine.log" 2>&1 &
	local pid=$!
	echo "$pid" >"$dir/engine.pid"
	wait_ready "$dir" "$pid" 600 "$dir/engine.log" "the engine" || exit 1
	sed -n 's/^port=//p' "$dir/ready" >"$dir/port"
}

stop() { stop_pidfile "$1" engine; }

rest() {
	sed -n 's/^rest=//p' "$1/ready" | grep . || die "no engine running on $1"
}

# job_config KIND: the job's config as JSON (2.3.x option names)
job_config() {
	local kind=$1 env src sink
	env='"env":{"job.mode":"STREAMING","checkpoint.interval":1000,"parallelism":1}'
	src() { # src TABLE ROWS INTERVAL_MS SPLITS
		printf '{"plugin_name":"FakeSource","result_table_name":"%s","row.num":%s,"split.read-interval":%s,"split.num":%s,"schema":{"fields":{"id":"int","name":"string"}}}' "$@"
	}
	sink() { printf '{"plugin_name":"Console","source_table_name":"%s","log.print.data":false}' "$1"; }
	case $kind in
	stream)
		printf '{%s,"source":[%s],"sink":[%s]}\n' "$env" "$(src t1 1000 1000 1000)" "$(sink t1)"
		;;
	stream2) # two unconnected source→sink chains: two pipelines
		printf '{%s,"source":[%s,%s],"sink":[%s,%s]}\n' "$env" \
			"$(src t1 1000 1000 1000)" "$(src t2 1000 1000 1000)" "$(sink t1)" "$(sink t2)"
		;;
	batch)
		printf '{"env":{"job.mode":"BATCH","parallelism":1},"source":[%s],"sink":[%s]}\n' \
			"$(src t1 50 10 1)" "$(sink t1)"
		;;
	fail:*) # the SQL transform's CAST throws on every row once the clock passes the deadline
		local at
		at=$(date -d "@$(($(date +%s) + ${kind#fail:}))" '+%Y%m%d%H%M%S')
		printf '{%s,"source":[%s],"transform":[{"plugin_name":"Sql","source_table_name":"t1","result_table_name":"t2","query":"select id, CASE WHEN FORMATDATETIME(NOW(), '"'"'yyyyMMddHHmmss'"'"') > '"'"'%s'"'"' THEN CAST(name AS INT) ELSE id END as x from t1"}],"sink":[%s]}\n' \
			"$env" "$(src t1 1000 1000 1000)" "$at" "$(sink t2)"
		;;
	*) die "unknown job kind $kind" ;;
	esac
}

submit() {
	local dir=$1 kind=$2 name=${3:-$2} id=$4 sp=$5 r q out
	r=$(rest "$dir") || exit 1
	q="jobName=$name"
	[ -n "$id" ] && q="$q&jobId=$id"
	[ "$sp" = savepoint ] && q="$q&isStartWithSavePoint=true"
	out=$(job_config "$kind" | "${CURL[@]}" -X POST -H 'Content-Type: application/json' \
		--data-binary @- "$r/submit-job?$q") || die "submit failed"
	echo "$out" | python3 -c 'import json,sys; print(json.load(sys.stdin)["jobId"])' ||
		die "submit answered: $out"
}

state() {
	local r
	r=$(rest "$1") || exit 1
	"${CURL[@]}" "$r/job-info/$2" |
		python3 -c 'import json,sys; print(json.load(sys.stdin).get("jobStatus",""))'
}

case $1 in
build) build ;;
start) start "$2" "$3" ;;
stop) stop "$2" ;;
rest) rest "$2" ;;
submit) submit "$2" "$3" "$4" "$5" "$6" ;;
config) job_config "$2" ;;
stop-job)
	r=$(rest "$2") || exit 1
	spv=false
	[ "$4" = savepoint ] && spv=true
	"${CURL[@]}" -X POST -H 'Content-Type: application/json' \
		--data "{\"jobId\":$3,\"isStopWithSavePoint\":$spv}" "$r/stop-job"
	echo
	;;
info)
	r=$(rest "$2") || exit 1
	"${CURL[@]}" "$r/job-info/$3"
	echo
	;;
get)
	r=$(rest "$2") || exit 1
	"${CURL[@]}" "$r$3"
	echo
	;;
state) state "$2" "$3" ;;
wait-state)
	end=$(($(date +%s) + ${5:-60}))
	while :; do
		s=$(state "$2" "$3")
		[ "$s" = "$4" ] && exit 0
		[ "$(date +%s)" -ge "$end" ] && die "job $3 is $s, not $4, after ${5:-60} s"
		sleep 0.3
	done
	;;
*)
	sed -n '2,24s/^# \{0,1\}//p' "$0"
	exit 2
	;;
esac
