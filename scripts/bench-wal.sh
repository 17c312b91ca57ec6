#!/bin/bash
# `make bench` (and `make bench-wal` alone): the IMap summary of one large
# WAL file on a real mount — throughput and the daemon's peak RSS (VmHWM).
# Targets (issue 12): >= 200 MB/s, <= 32 MiB RSS whatever the size.
#   BENCH_WAL_MB=1024   size of the generated wal.txt
#   STFS_BIN            binary under test (default build/stfs)
set -u
ROOT=$(cd "$(dirname "$0")/.." && pwd)
STFS=${STFS_BIN:-$ROOT/build/stfs}
MB=${BENCH_WAL_MB:-1024}
T=$(mktemp -d /tmp/stfs-benchwal.XXXXXX)
PID=""
cleanup() {
	mountpoint -q "$T/mnt" 2>/dev/null && fusermount3 -u "$T/mnt"
	[ -n "$PID" ] && kill "$PID" 2>/dev/null
	rm -rf "$T"
}
trap cleanup EXIT
[ -x "$STFS" ] || make -s -C "$ROOT" build/stfs || exit 1

# 20,000 keys overwritten again and again (~1 KiB values), then an older
# region superseded by it: the shape of a long-running engine_runningJobInfo
python3 - "$T/imap/c/m" "$MB" <<'PY'
import os, sys
d, mb = sys.argv[1], int(sys.argv[2])
def varint(v):
    out = bytearray()
    while True:
        b = v & 0x7f; v >>= 7
        out.append(b | (0x80 if v else 0))
        if not v: return bytes(out)
def rec(key, val, ts):
    kb = b"\x0b\x4a" + varint(len(key)) + key + b"\x0c"
    p = (b"\x08\x00" + b"\x12" + varint(len(kb)) + kb +
         b"\x1a\x10java.lang.String" + b"\x22" + varint(len(val)) + val +
         b"\x2a\x10java.lang.String" + b"\x30" + varint(ts))
    return len(p).to_bytes(4, "little") + b"\0" * 8 + p
val = os.urandom(512).hex().encode()[:1000]
os.makedirs(d + "/100", exist_ok=True); os.makedirs(d + "/200", exist_ok=True)
ts = 1730000000000
with open(d + "/100/wal.txt", "wb") as f:
    for k in range(2000):
        ts += 1; f.write(rec(b"key-%05d" % k, val, ts))
size, n = mb << 20, 0
with open(d + "/200/wal.txt", "wb") as f:
    buf, w = [], 0
    while w < size:
        ts += 1
        r = rec(b"key-%05d" % (n % 20000), val, ts); n += 1
        buf.append(r); w += len(r)
        if len(buf) == 4096:
            f.write(b"".join(buf)); buf = []
    f.write(b"".join(buf))
print("records", n)
PY
mkdir -p "$T/mnt" "$T/ns"
"$STFS" -f -o "checkpoint=file://$T/ns/,imap=file://$T/imap/,engine=http://127.0.0.1:1,state_dir=$T/sd,timeout=2000" "$T/mnt" >"$T/stfs.log" 2>&1 &
PID=$!
for _ in $(seq 100); do mountpoint -q "$T/mnt" && break; sleep 0.05; done
mountpoint -q "$T/mnt" || { echo "bench-wal: mount failed"; cat "$T/stfs.log"; exit 1; }
rss0=$(awk '/VmHWM/ {print $2}' "/proc/$PID/status")
bytes=$(du -sb "$T/imap/c/m" | cut -f1)
cat "$T/imap/c/m/200/wal.txt" >/dev/null # warm page cache, as a re-read
t0=$(date +%s%N)
cat "$T/mnt/imap/c/m.summary" >"$T/summary"
t1=$(date +%s%N)
rss=$(awk '/VmHWM/ {print $2}' "/proc/$PID/status")
ms=$(((t1 - t0) / 1000000))
mbps=$((bytes * 1000 / (ms > 0 ? ms : 1) / 1000000))
echo "IMap summary of a $(numfmt --to=iec "$bytes") WAL ($(awk '$1=="records"{print $2}' "$T/summary") records, $(awk '$1=="keys"{print $2}' "$T/summary") keys):"
echo "  time $ms ms, $mbps MB/s (target >= 200)"
echo "  daemon peak RSS $((rss / 1024)) MiB (before: $((rss0 / 1024)) MiB; target <= 32)"
grep -E '^(live_keys|reclaimable|superseded) ' "$T/summary" | sed 's/^/  /'
fail=0
[ "$mbps" -ge 200 ] || { echo "  FAIL throughput below 200 MB/s"; fail=1; }
[ "$rss" -le $((32 * 1024)) ] || { echo "  FAIL peak RSS above 32 MiB"; fail=1; }
exit $fail
