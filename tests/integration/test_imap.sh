#!/bin/bash
# IMap WAL clean-up on a real mount (README "Reclaiming IMap WAL space"):
# the summary's verdict per region is what `rm -r` of it answers; a
# superseded region goes only once the engine refuses connections, and the
# live key set (read by an independent reader, scripts-free python below)
# is the same before and after; the raw storage is checked directly.
. "$(dirname "$0")/lib.sh"

STATE=$T/state
python3 "$ROOT/scripts/genstate.py" --out "$STATE" --jobs 2 --seed 3 \
	>"$T/gen.log" 2>&1 || { cat "$T/gen.log"; exit 1; }
IM=$T/imap
FIX=$ROOT/tests/fixtures/protostuff

# Map c/m, built from real engine-written records:
#   100  the live record of key A             3 h old  superseded by 200
#   200  A's tombstone, and B's three records 2 h old  keeps A's tombstone
#   300  two live keys                        1 h old  newest
#   400  an empty wal.txt                     40 min   a member appends
#   500  1_wal.txt + 10_wal.txt (A again, older than 200's tombstone, with
#        a torn tail in 1_wal.txt)            3 h old  superseded
python3 - "$FIX" "$IM/c/m" <<'PY'
import os, sys, time
fix, d = sys.argv[1], sys.argv[2]
lt = open(fix + "/wal_live_and_tombstone.wal", "rb").read()
ck = open(fix + "/wal_checkpoint_id_map.wal", "rb").read()
st = open(fix + "/wal_state_timestamps.wal", "rb").read()
def put(rel, data, age_s):
    p = os.path.join(d, rel)
    os.makedirs(os.path.dirname(p), exist_ok=True)
    open(p, "wb").write(data)
    t = time.time() - age_s
    os.utime(p, (t, t))
put("100/wal.txt", lt[:175], 3 * 3600)
put("200/wal.txt", lt[175:] + ck, 2 * 3600)
put("300/wal.txt", st, 3600)
put("400/wal.txt", b"", 2400)
put("500/1_wal.txt", lt[:175] + lt[175:190], 3 * 3600 + 60)
put("500/10_wal.txt", lt[:175], 3 * 3600 + 30)
PY

# live keys as the engine's reader computes them: each file on its own,
# newest record per key, a tombstone hides the key
live_keys() {
	python3 - "$1" <<'PY'
import os, sys
def varint(b, i):
    v = s = 0
    while True:
        c = b[i]; i += 1; v |= (c & 0x7f) << s; s += 7
        if c < 0x80: return v, i
recs = []
for root, _, files in os.walk(sys.argv[1]):
    for f in files:
        if not f.endswith("wal.txt"): continue
        b = open(os.path.join(root, f), "rb").read(); p = 0
        while p + 12 < len(b):
            n = int.from_bytes(b[p:p + 4], "little", signed=True)
            if n < 0: sys.exit("negative length")
            if p + 12 + n > len(b): break
            q, e = p + 12, p + 12 + n; dl = False; key = None; ts = 0
            while q < e:
                t, q = varint(b, q); fn, wt = t >> 3, t & 7
                if wt == 0:
                    v, q = varint(b, q)
                    if fn == 1: dl = bool(v)
                    if fn == 6: ts = v
                elif wt == 2:
                    l, q = varint(b, q)
                    if fn == 2: key = b[q:q + l]
                    q += l
                else: break
            recs.append((ts, key, dl)); p = e
win = {}
for ts, k, dl in sorted(recs, key=lambda r: r[0]):
    win[k] = dl
print(" ".join(sorted(k.hex() for k, dl in win.items() if not dl)))
PY
}
before=$(live_keys "$IM/c/m")
check "the hand-built map has live keys" test -n "$before"

# the generator's WAL mix (several regions per map, overwrites, tombstones,
# a same-timestamp conflict, a truncated tail, an empty live region), as
# on local/HDFS (cluster gen) and object stores (cluster genobj: <n>_wal.txt
# with 10_wal.txt after 2_wal.txt); walref.py is an independent reader
WALREF=$ROOT/tests/integration/walref.py
for v in gen genobj; do
	extra=; [ $v = genobj ] && extra="--imap-object-store --imap-block-size 256"
	# shellcheck disable=SC2086
	python3 "$ROOT/scripts/genstate.py" --out "$T/$v" --jobs 6 --seed 5 \
		--imap --imap-wal-mix $extra >>"$T/gen.log" 2>&1 || { cat "$T/gen.log"; exit 1; }
	mv "$T/$v/imap/seatunnel" "$IM/$v"
done
# the documented layout (README "Layouts"): <base>/maps/<name>/... and
# <base>/wal/<name>-<partition>.wal, here beside the real clusters
python3 - "$FIX" "$IM" <<'PY'
import os, sys, time
fix, d = sys.argv[1], sys.argv[2]
lt = open(fix + "/wal_live_and_tombstone.wal", "rb").read()
os.makedirs(d + "/wal"); os.makedirs(d + "/maps/running-job-state")
def put(rel, data, age_s):
    open(os.path.join(d, rel), "wb").write(data)
    t = time.time() - age_s
    os.utime(os.path.join(d, rel), (t, t))
put("wal/good-0.wal", lt[:175], 3 * 3600)    # superseded by partition 1
put("wal/good-1.wal", lt[175:], 2 * 3600)    # A's tombstone: kept
put("wal/good-12.wal", lt[:175], 4 * 3600)   # older copy: superseded
put("wal/good-3.wal", b"", 2 * 3600)         # empty
put("wal/junk-0.wal", lt[:175], 3 * 3600)      # good, but its map fails:
put("wal/junk-1.wal", b"\0\0\0\x80" + bytes(8) + b"junk", 2 * 3600)  # length < 0
put("maps/running-job-state/entries.dat", b"opaque", 3 * 3600)
PY
check "the object-store mix has 10_wal.txt after 2_wal.txt" \
	bash -c "ls '$IM'/genobj/engine_runningJobMetrics/*/10_wal.txt >/dev/null"

start_sim "$STATE/scenario.json" a
PORT=$SIM_PORT_a
M=$T/mnt
AUD=$T/audit.log
OPTS="checkpoint=file://$STATE/checkpoint/,engine=http://127.0.0.1:$PORT,imap=file://$IM/,state_dir=$T/statedir,timeout=2000,imap_grace=30m,audit_log=$AUD,cache_ttl=1000,engine_ttl=1000"
mount_stfs "$M" -o "$OPTS" || { finish; exit 1; }

verdict() { awk -v r="$1" '$1 == r { print $4 }' "$M/imap/c/m.summary"; }
rm_r_errno() {
	local err
	err=$(rm -r -- "$1" 2>&1 >/dev/null)
	if [ $? = 0 ]; then echo OK; else echo "$err" | errno_of_msg; fi
}
as_rm() { [ "$1" = removable ] && echo OK || echo "$1"; }

# every generated map's summary = walref's count = what the generator wrote
sum_counts() { awk '$1 ~ /^(records|keys|live_keys|tombstones|ties|tail_bytes|bytes|regions)$/ {print $1, $2}' "$1" | sort; }
errs=0; n=0
for v in gen genobj; do
	for d in "$IM/$v"/*/; do
		mp=$(basename "$d"); n=$((n + 1))
		want=$(python3 "$WALREF" summary "$d" | sort)
		got=$(sum_counts "$M/imap/$v/$mp.summary")
		[ "$want" = "$got" ] || { echo "    $v/$mp: walref [$want] stfs [$got]"; errs=$((errs + 1)); }
	done
done
check_eq "summaries of the $n generated maps match walref's independent count" 0 "$errs"
gen_exp() { python3 -c 'import json,sys; e=json.load(open(sys.argv[1]))["imap"]["expected"][sys.argv[2]]; print(" ".join("%s %s" % (k, e[k]) for k in sorted(e)))' "$T/$1/scenario.json" "$2"; }
for v in gen genobj; do
	check_eq "$v: the mix map's counts are what the generator wrote" \
		"$(gen_exp $v engine_runningJobMetrics)" \
		"$(sum_counts "$M/imap/$v/engine_runningJobMetrics.summary" | grep -v '^bytes \|^regions ' | tr '\n' ' ' | sed 's/ $//')"
done
check "the mix map's summary names the same-timestamp conflict" \
	grep -q '^ties: ' "$M/imap/gen/engine_runningJobMetrics.summary"
gen_verdicts() { # CLUSTER ENGINE: "map region bytes verdict" walref vs stfs
	for d in "$IM/$1"/*/; do
		mp=$(basename "$d")
		python3 "$WALREF" regions "$d" 1800 "$2" | sed "s/^/$mp /" >>"$T/want.$1"
		awk -v mp="$mp" 'f && NF == 0 {exit} f {print mp, $1, $3, $4} /^region / {f=1}' \
			"$M/imap/$1/$mp.summary" >>"$T/got.$1"
	done
}
for v in gen genobj; do
	: >"$T/want.$v"; : >"$T/got.$v"
	gen_verdicts $v up
	check_eq "engine up: $v's verdict per region = walref's ($(wc -l <"$T/want.$v") regions)" \
		"$(sort "$T/want.$v")" "$(sort "$T/got.$v")"
done

# documented layout: raw files with exact sizes, a summary per map name
check_eq "documented layout: a partition file's st_size is the raw size" \
	"$(stat -c %s "$IM/wal/good-1.wal")" "$(stat -c %s "$M/imap/wal/good-1.wal")"
check "documented layout: its bytes are the raw bytes" cmp "$IM/wal/good-1.wal" "$M/imap/wal/good-1.wal"
check_eq "documented layout: imap/wal lists the files and one summary per map" \
	"good-0.wal good-1.wal good-12.wal good-3.wal good.summary junk-0.wal junk-1.wal junk.summary" \
	"$(ls "$M/imap/wal" | sort | tr '\n' ' ' | sed 's/ $//')"
check_eq "documented layout: the summary's counts = walref's" \
	"$(python3 "$WALREF" docsummary "$IM/wal" good | sort)" "$(sum_counts "$M/imap/wal/good.summary")"
check "documented layout: stat size of the summary = its bytes" \
	test -s "$M/imap/wal/good.summary" -a "$(stat -c %s "$M/imap/wal/good.summary")" = "$(wc -c <"$M/imap/wal/good.summary")"
check "documented layout: records that do not parse: the engine would fail to load" \
	grep -q "the engine would fail to load this map: negative record length, at file junk-1.wal offset 0" "$M/imap/wal/junk.summary"
doc_verdicts() { # ENGINE
	python3 "$WALREF" docregions "$IM/wal" good 1800 "$1"
	awk 'f && NF == 0 {exit} f {print $1, $3, $4} /^region / {f=1}' "$M/imap/wal/good.summary"
}
check_eq "engine up: documented partitions' verdicts = walref's" \
	"$(doc_verdicts up | head -4 | sort)" "$(doc_verdicts up | tail -n +5 | sort)"
check_eq "engine up: rm of a superseded partition file answers EBUSY" EBUSY "$(rm_r_errno "$M/imap/wal/good-0.wal")"
check "engine up: raw good-0.wal kept" test -f "$IM/wal/good-0.wal"
check_eq "rm of a file of maps/<name>/ answers EPERM" EPERM "$(rm_r_errno "$M/imap/maps/running-job-state/entries.dat")"
check "its raw file kept" test -f "$IM/maps/running-job-state/entries.dat"

cp "$M/imap/c/m.summary" "$T/sum1"
check "the summary counts the reader's live keys" \
	grep -q "^live_keys    $(echo "$before" | wc -w)\$" "$T/sum1"
check "no load failure on good records" bash -c "! grep -q 'fail to load' '$T/sum1'"
check_eq "engine up: 100 is kept (EBUSY)" EBUSY "$(verdict 100)"
check_eq "200 holds A's tombstone (EPERM)" EPERM "$(verdict 200)"
check_eq "300 newest (EPERM: live keys first)" EPERM "$(verdict 300)"
check_eq "400 empty (EBUSY)" EBUSY "$(verdict 400)"
check_eq "500 kept while the engine runs" EBUSY "$(verdict 500)"
# every verdict is what rm answers, and nothing moves in storage
for r in 100 200 300 400 500; do
	v=$(as_rm "$(verdict "$r")")
	check_eq "engine up: rm -r $r answers its verdict" "$v" "$(rm_r_errno "$M/imap/c/m/$r")"
	check "engine up: raw region $r still there" test -d "$IM/c/m/$r"
done
check "refusals are audited" grep -q "path=/imap/c/m/100/wal.txt .*errno=EBUSY" "$AUD"

# the engine stops: connections are refused
stop_pid "$SIM_PID_a"
sleep 2.5 # the summary is at most cache_ttl + engine_ttl old
cp "$M/imap/c/m.summary" "$T/sum2"
for v in gen genobj; do
	: >"$T/want.$v"; : >"$T/got.$v"
	gen_verdicts $v stopped
	check_eq "engine stopped: $v's verdict per region = walref's" \
		"$(sort "$T/want.$v")" "$(sort "$T/got.$v")"
done
check "engine stopped: some generated regions are removable" grep -q ' removable$' "$T/want.gen"
# rm -r of every generated region answers its verdict; the reader's live
# key set of each map stays
map=engine_runningJobMetrics
keys0=$(live_keys "$IM/gen/$map")
errs=0
while read -r mp r b want; do
	[ "$mp" = "$map" ] || continue
	got=$(rm_r_errno "$M/imap/gen/$mp/$r")
	[ "$(as_rm "$want")" = "$got" ] || { echo "    $mp/$r: verdict $want, rm $got"; errs=$((errs + 1)); }
	if [ "$want" = removable ]; then
		[ ! -e "$IM/gen/$mp/$r" ] || { echo "    $mp/$r still in storage"; errs=$((errs + 1)); }
	else
		[ -d "$IM/gen/$mp/$r" ] || { echo "    $mp/$r gone"; errs=$((errs + 1)); }
	fi
done <"$T/want.gen"
check_eq "rm -r of each region of the mix map answers walref's verdict, storage agrees" 0 "$errs"
check_eq "the mix map's live key set is unchanged" "$keys0" "$(live_keys "$IM/gen/$map")"
check "the mix map lost regions" test "$(ls "$IM/gen/$map" | wc -l)" -lt 5

check_eq "engine stopped: documented partitions' verdicts = walref's" \
	"$(doc_verdicts stopped | head -4 | sort)" "$(doc_verdicts stopped | tail -n +5 | sort)"
for f in good-0 good-12; do
	check_eq "engine stopped: rm of superseded $f.wal succeeds" OK "$(rm_r_errno "$M/imap/wal/$f.wal")"
	check "raw $f.wal is gone" test ! -e "$IM/wal/$f.wal"
done
check_eq "engine stopped: rm of good-1.wal (A's tombstone) answers EPERM" EPERM "$(rm_r_errno "$M/imap/wal/good-1.wal")"
check_eq "engine stopped: rm of empty good-3.wal answers EBUSY" EBUSY "$(rm_r_errno "$M/imap/wal/good-3.wal")"
check_eq "engine stopped: rm of junk-0.wal (the engine cannot load it) answers EPERM" EPERM "$(rm_r_errno "$M/imap/wal/junk-0.wal")"
for f in good-1 good-3 junk-0 junk-1; do check "raw $f.wal kept" test -f "$IM/wal/$f.wal"; done
check "partition removals are audited" grep -q "path=/imap/wal/good-0.wal .*outcome=allowed" "$AUD"

check_eq "engine stopped: 100 removable" removable "$(verdict 100)"
check_eq "engine stopped: 500 removable" removable "$(verdict 500)"
check_eq "engine stopped: 200 still EPERM" EPERM "$(verdict 200)"
check_eq "engine stopped: 400 still EBUSY" EBUSY "$(verdict 400)"
for r in 200 300 400 100 500; do
	v=$(as_rm "$(verdict "$r")")
	check_eq "engine stopped: rm -r $r answers its verdict" "$v" "$(rm_r_errno "$M/imap/c/m/$r")"
done
check "raw region 100 is gone" test ! -e "$IM/c/m/100"
check "raw region 500 is gone" test ! -e "$IM/c/m/500"
for r in 200 300 400; do check "raw region $r kept" test -f "$IM/c/m/$r/wal.txt"; done
check_eq "the reader's live key set is unchanged" "$before" "$(live_keys "$IM/c/m")"
check "removals are audited" grep -q "path=/imap/c/m/100 .*outcome=allowed" "$AUD"

# a map the engine cannot load: a verdict, and nothing removable
python3 - "$IM/c/bad" "$FIX" <<'PY'
import os, sys, time
d, fix = sys.argv[1], sys.argv[2]
lt = bytearray(open(fix + "/wal_live_and_tombstone.wal", "rb").read())
os.makedirs(d + "/1", exist_ok=True); os.makedirs(d + "/2", exist_ok=True)
open(d + "/1/wal.txt", "wb").write(lt[:175])
lt[175 + 3] = 0x80
open(d + "/2/wal.txt", "wb").write(lt)
t = time.time() - 5 * 3600
for r in ("1", "2"): os.utime(d + "/%s/wal.txt" % r, (t, t))
os.utime(d + "/2/wal.txt", (t + 60, t + 60))
PY
check "a load failure is named with file and offset" \
	grep -q "the engine would fail to load this map: negative record length, at file 2/wal.txt offset 175" "$M/imap/c/bad.summary"
check_eq "nothing of a failing map is removable" EPERM "$(rm_r_errno "$M/imap/c/bad/1")"
check "its raw files are kept" test -f "$IM/c/bad/1/wal.txt"

# ro: EROFS before anything else
unmount_stfs "$M"
mount_stfs "$M" -o "$OPTS,ro" || { finish; exit 1; }
check_eq "ro: rm -r answers EROFS" EROFS "$(rm_r_errno "$M/imap/c/m/200")"
check "ro: raw region 200 kept" test -f "$IM/c/m/200/wal.txt"
finish
