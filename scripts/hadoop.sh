#!/bin/bash
# A real HDFS for the tests (README "HDFS"): Hadoop's MiniDFSCluster with
# WebHDFS, from tests/hadoop, built by Maven on first use.
#
#   hadoop.sh build                 fetch Hadoop with Maven, compile tests/hadoop
#   hadoop.sh start DIR [plain|ha|krb|tls]  start a cluster on DIR; prints DIR/ready
#                                   (rpc=, http=, nnN_rpc=, nnN_http=, dn_http=, pid=;
#                                   krb: a MiniKdc too (STFS_KRB_TICKET_S: ticket
#                                   lifetime, the cluster's own tickets too: it
#                                   gets new ones from its keytab before each
#                                   command), and krb5conf=, principal=,
#                                   keytab=, wrong_keytab=, other_keytab=;
#                                   tls: HTTPS only, on the PKCS12 keystore
#                                   STFS_HDFS_KEYSTORE (password STFS_HDFS_KEYSTORE_PASS),
#                                   and https=, nnN_https=, dn_https= instead)
#   hadoop.sh put DIR LOCALDIR HDFSDIR   copy a local tree into HDFS (as user stfs)
#   hadoop.sh files DIR HDFSDIR     "relpath size" of every file below HDFSDIR,
#                                   asked HDFS itself ("absent" when it is not there)
#   hadoop.sh tokens DIR            the delegation tokens the namenode holds (urlString)
#   hadoop.sh port DIR KEY          one value of DIR/ready (e.g. http, nn1_http)
#   hadoop.sh active DIR N [GAP_MS] make namenode N the active one (HA), after
#                                   GAP_MS with no active namenode at all
#   hadoop.sh stop DIR              SIGTERM the cluster and wait for it
#
# STFS_HADOOP_VERSION selects Hadoop (default 3.5.0), STFS_HADOOP_JAVA the java
# binary (default OpenJDK 17).  Maven's repository is cached in build/m2 (shared
# with tests/engine), the compiled module in build/hadoop/<version>.
set -o pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
V=${STFS_HADOOP_VERSION:-3.5.0}
JAVA=${STFS_HADOOP_JAVA:-/usr/lib/jvm/java-17-openjdk-amd64/bin/java}
B=$ROOT/build/hadoop/$V
. "$ROOT/scripts/javamod.sh"

die() {
	echo "hadoop.sh: $*" >&2
	exit 1
}

build() {
	mvn_build hadoop "$B" stfs-hadoop-1.jar src/main/java/stfs/hadoop/HdfsMain.java \
		"Hadoop $V" -Dhadoop.version="$V"
}

# Hadoop 3.5.0 needs no --add-opens on Java 17 for this (MiniDFSCluster,
# WebHDFS, HA transitions: checked without any, no InaccessibleObject or
# illegal-access warning); STFS_HADOOP_JVM_OPTS adds flags for older ones.
start() {
	local dir=$1 mode=${2:-plain}
	[ -n "$dir" ] || die "start: DIR missing"
	build || exit 1
	[ -x "$JAVA" ] || die "no java at $JAVA (set STFS_HADOOP_JAVA)"
	mkdir -p "$dir"
	rm -f "$dir/ready" "$dir/cmd" "$dir/cmd.done"
	# Kerberos on Java 17: Hadoop's KerberosUtil reads sun.security.krb5
	local krbopts=""
	[ "$mode" = krb ] && krbopts="--add-exports=java.security.jgss/sun.security.krb5=ALL-UNNAMED
		--add-opens=java.security.jgss/sun.security.krb5=ALL-UNNAMED"
	# tls: HdfsMain writes DIR/conf/ssl-server.xml, which Hadoop reads from the
	# classpath (a directory that does not exist at start is never looked in)
	local cp="$B/stfs-hadoop-1.jar:$(cat "$B/classpath.txt")"
	[ "$mode" = tls ] && mkdir -p "$dir/conf" && cp="$dir/conf:$cp"
	# shellcheck disable=SC2086
	"$JAVA" -Xms128m -Xmx768m -XX:+UseSerialGC ${STFS_HADOOP_JVM_OPTS} $krbopts \
		-Dlog4j.configuration=file:/dev/null -Dlog4j2.level=WARN \
		-cp "$cp" stfs.hadoop.HdfsMain "$dir" "$mode" >>"$dir/hadoop.log" 2>&1 &
	local pid=$!
	echo "$pid" >"$dir/hadoop.pid"
	wait_ready "$dir" "$pid" 900 "$dir/hadoop.log" HDFS
}

port() {
	sed -n "s/^$2=//p" "$1/ready" | grep . || die "no '$2' in $1/ready"
}

# send one command line to the running cluster and wait for its answer
cmd() {
	local dir=$1
	shift
	rm -f "$dir/cmd.done" "$dir/cmd.out" "$dir/cmd.err"
	echo "$*" >"$dir/cmd.tmp" && mv "$dir/cmd.tmp" "$dir/cmd"
	for _ in $(seq 3000); do
		if [ -s "$dir/cmd.done" ]; then
			[ -s "$dir/cmd.err" ] && die "$(cat "$dir/cmd.err")"
			return 0
		fi
		sleep 0.1
	done
	die "no answer to '$*'"
}

stop() { stop_pidfile "$1" hadoop; }

cmd=$1
shift
case $cmd in
build) build ;;
start) start "$@" ;;
port) port "$@" ;;
active) cmd "$1" active "$2" "${3:-0}" ;;
put) cmd "$1" put "$2" "$3" ;;
files)
	cmd "$1" files "$2" && cat "$1/cmd.out"
	;;
tokens) cmd "$1" tokens && cat "$1/cmd.out" ;;
stop) stop "$@" ;;
*) die "usage: hadoop.sh build|start DIR [plain|ha|krb|tls]|put DIR LOCAL HDFS|files DIR HDFS|port DIR KEY|active DIR N [GAP_MS]|stop DIR" ;;
esac
