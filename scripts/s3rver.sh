#!/bin/sh
# A fake S3 on loopback for stfs's tests (README "Testing").
#
#   scripts/s3rver.sh start DIR [PORT] [--verify]   start, wait until ready
#   scripts/s3rver.sh stop DIR                      stop by PID
#
# DIR holds the data (DIR/data), the log (DIR/s3rver.log) and the pidfile
# (DIR/s3rver.pid).  PORT defaults to 4568.  --verify runs the fork
# @20minutes/s3rver@5.0.0, which checks SigV4 signatures (plain s3rver 3.7.1
# does not).  Bucket "ckpt" exists; credentials are S3RVER/S3RVER.
# The npm packages are installed once into $STFS_NPM_DIR
# (default $HOME/.cache/stfs-npm).
set -eu

NPM_DIR=${STFS_NPM_DIR:-$HOME/.cache/stfs-npm}
BUCKET=${S3RVER_BUCKET:-ckpt}

usage() {
	echo "usage: $0 start DIR [PORT] [--verify] | stop DIR" >&2
	exit 2
}

install_once() {
	if [ -f "$NPM_DIR/node_modules/s3rver/bin/s3rver.js" ] &&
		[ -f "$NPM_DIR/node_modules/@20minutes/s3rver/lib/cli.js" ]; then
		return 0
	fi
	mkdir -p "$NPM_DIR"
	(
		cd "$NPM_DIR"
		[ -f package.json ] || npm init -y >/dev/null
		npm install --no-audit --no-fund s3rver@3.7.1 \
			@20minutes/s3rver@5.0.0 >npm.log 2>&1
	) || {
		echo "s3rver.sh: npm install failed, see $NPM_DIR/npm.log" >&2
		exit 1
	}
}

start() {
	dir=$1
	port=4568
	verify=0
	shift
	for a in "$@"; do
		case $a in
		--verify) verify=1 ;;
		*[!0-9]* | '') usage ;;
		*) port=$a ;;
		esac
	done
	install_once
	mkdir -p "$dir/data"
	dir=$(cd "$dir" && pwd)
	if [ -f "$dir/s3rver.pid" ] && kill -0 "$(cat "$dir/s3rver.pid")" 2>/dev/null; then
		echo "s3rver.sh: already running (pid $(cat "$dir/s3rver.pid"))" >&2
		exit 1
	fi
	# the fork's package.json names a bin file that is not in the tarball:
	# start it through lib/cli.js
	echo "require('@20minutes/s3rver/lib/cli.js').parseAsync(process.argv).catch(e=>{console.error(e);process.exit(1)})" \
		>"$NPM_DIR/run-s3rver.js"
	# --openssl-legacy-provider: continuation tokens are DES-encrypted
	if [ "$verify" = 1 ]; then
		(cd "$NPM_DIR" && exec nohup node --openssl-legacy-provider \
			"$NPM_DIR/run-s3rver.js" -d "$dir/data" -a 127.0.0.1 \
			-p "$port" --configure-bucket "$BUCKET" \
			>"$dir/s3rver.log" 2>&1) &
	else
		(cd "$NPM_DIR" && NODE_OPTIONS=--openssl-legacy-provider exec nohup \
			node "$NPM_DIR/node_modules/s3rver/bin/s3rver.js" \
			-d "$dir/data" -a 127.0.0.1 -p "$port" \
			--configure-bucket "$BUCKET" >"$dir/s3rver.log" 2>&1) &
	fi
	echo $! >"$dir/s3rver.pid"
	i=0
	while [ $i -lt 100 ]; do
		if curl -s -o /dev/null -m 1 "http://127.0.0.1:$port/"; then
			echo "$port"
			return 0
		fi
		if ! kill -0 "$(cat "$dir/s3rver.pid")" 2>/dev/null; then
			break
		fi
		sleep 0.1
		i=$((i + 1))
	done
	echo "s3rver.sh: not ready on port $port; log:" >&2
	cat "$dir/s3rver.log" >&2 || true
	stop "$dir"
	exit 1
}

stop() {
	dir=$1
	[ -f "$dir/s3rver.pid" ] || return 0
	pid=$(cat "$dir/s3rver.pid")
	if kill "$pid" 2>/dev/null; then
		i=0
		while kill -0 "$pid" 2>/dev/null && [ $i -lt 50 ]; do
			sleep 0.1
			i=$((i + 1))
		done
		kill -9 "$pid" 2>/dev/null || true
	fi
	rm -f "$dir/s3rver.pid"
}

[ $# -ge 2 ] || usage
cmd=$1
shift
case $cmd in
start) start "$@" ;;
stop) stop "$1" ;;
*) usage ;;
esac
