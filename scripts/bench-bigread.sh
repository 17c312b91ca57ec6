#!/bin/bash
# The big-object row of `make bench` alone, with CPU times: one 256 MiB
# object on plain s3rver 3.7.1; each run GETs it with curl, then `cat`s it
# through each stfs binary given (its page cache dropped first with
# posix_fadvise, the mounts kept), back to back, so that a loaded machine
# weighs on every column alike.  Prints each run and the medians: wall
# time, the raw/stfs ratio, and the CPU seconds of s3rver (node), the
# daemon and the client (curl or cat).  README "Performance".
#
#   scripts/bench-bigread.sh [RUNS [STFS_BIN...]]   (default 5 build/stfs)
set -u
ROOT=$(cd "$(dirname "$0")/.." && pwd)
RUNS=${1:-5}
shift
[ $# -gt 0 ] || set -- "$ROOT/build/stfs"
SIZE=$((256 << 20))
T=$(mktemp -d /tmp/stfs-bigread.XXXXXX)
PIDS=()
cleanup() {
	local i
	for i in "${!PIDS[@]}"; do
		fusermount3 -u "$T/m$i" 2>/dev/null
		wait "${PIDS[$i]}" 2>/dev/null
	done
	[ -f "$T/s3/s3rver.pid" ] && "$ROOT/scripts/s3rver.sh" stop "$T/s3"
	rm -rf "$T"
}
trap cleanup EXIT
trap 'exit 130' INT TERM
freeport() {
	python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'
}
port=$(freeport)
dead=$(freeport)
EP=http://127.0.0.1:$port
"$ROOT/scripts/s3rver.sh" start "$T/s3" "$port" >/dev/null || exit 1
NP=$(cat "$T/s3/s3rver.pid")
SIG=(--aws-sigv4 aws:amz:us-east-1:s3 --user S3RVER:S3RVER
	-H x-amz-content-sha256:UNSIGNED-PAYLOAD)
KEY=bigobj/900000000000000001/1700000000000-1-1-1.ser
head -c $SIZE /dev/urandom >"$T/big.bin"
curl -sS "${SIG[@]}" -o /dev/null -T "$T/big.bin" "$EP/ckpt/$KEY"
curl -sS "${SIG[@]}" -o /dev/null -T /dev/null "$EP/ckpt/bigobj/"
SUM=$(sha256sum <"$T/big.bin")
rm -f "$T/big.bin"
export AWS_ACCESS_KEY_ID=S3RVER AWS_SECRET_ACCESS_KEY=S3RVER
P=jobs/900000000000000001/pipelines/1/checkpoints/1/${KEY##*/}
i=0
for b in "$@"; do
	mkdir -p "$T/m$i"
	"$b" -f -o "checkpoint=s3://ckpt/bigobj/,endpoint=$EP,region=us-east-1,path_style,engine=http://127.0.0.1:$dead,timeout=5000,state_dir=$T/sd$i" \
		"$T/m$i" >"$T/log$i" 2>&1 &
	PIDS+=($!)
	for _ in $(seq 200); do
		mountpoint -q "$T/m$i" && break
		sleep 0.05
	done
	[ "$(sha256sum <"$T/m$i/$P")" = "$SUM" ] || {
		echo "bench-bigread: $b: wrong bytes" >&2
		exit 1
	}
	i=$((i + 1))
done
cpu() { awk '{print $14 + $15}' "/proc/$1/stat"; }
run() { # TAG DAEMON_PID CMD...
	local tag=$1 dp=$2 n0 d0=0 t0 t1 n1 d1=0 u s
	shift 2
	n0=$(cpu "$NP")
	[ "$dp" != 0 ] && d0=$(cpu "$dp")
	t0=$(date +%s.%N)
	/usr/bin/time -f "%U %S" -o "$T/tm" "$@" >/dev/null
	t1=$(date +%s.%N)
	n1=$(cpu "$NP")
	[ "$dp" != 0 ] && d1=$(cpu "$dp")
	read -r u s <"$T/tm"
	python3 -c "print(f'$tag wall {$t1-$t0:.3f} node {($n1-$n0)/100:.2f} daemon {($d1-$d0)/100:.2f} client {$u+$s:.2f}')" |
		tee -a "$T/res"
}
for ((r = 1; r <= RUNS; r++)); do
	run raw 0 curl -sS "${SIG[@]}" -o /dev/null "$EP/ckpt/$KEY"
	i=0
	for b in "$@"; do
		python3 -c "import os,sys; os.posix_fadvise(os.open(sys.argv[1],os.O_RDONLY),0,0,os.POSIX_FADV_DONTNEED)" "$T/m$i/$P"
		run "stfs$i" "${PIDS[$i]}" cat "$T/m$i/$P"
		i=$((i + 1))
	done
done
i=0
for b in "$@"; do
	echo "stfs$i = $b"
	i=$((i + 1))
done
python3 - "$T/res" <<'PY'
import collections, statistics as st, sys
d = collections.defaultdict(list)
for l in open(sys.argv[1]):
    f = l.split()
    d[f[0]].append([float(f[k]) for k in (2, 4, 6, 8)])
raw = st.median(x[0] for x in d["raw"])
for k, v in d.items():
    m = [st.median(x[j] for x in v) for j in range(4)]
    print(f"{k}: median wall {m[0]:.3f} s ({raw / m[0]:.2f}x raw), CPU s: "
          f"node {m[1]:.2f} daemon {m[2]:.2f} client {m[3]:.2f}")
PY
