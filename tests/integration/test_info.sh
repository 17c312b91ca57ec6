#!/bin/bash
# checkpoints/<cid>/info on a real mount (README "Checkpoint info"): what
# every generated .ser holds, as scripts/genstate.py recorded it while
# encoding; restore_point against `latest`; exact st_size; type and
# duration in the pipeline status; decoded once per object version,
# remembered in state_dir across mounts.
. "$(dirname "$0")/lib.sh"

STATE=$T/state
gen_state "$STATE" --jobs 12 --seed 11 --doc-jobs 1 --crc --info-out "$T/info.jsonl"
NS=$STATE/checkpoint
start_sim "$STATE/scenario.json" a
M=$T/mnt
OPTS="checkpoint=file://$NS/,engine=http://127.0.0.1:$SIM_PORT_a,state_dir=$T/sd,timeout=2000"
mount_stfs "$M" -o "$OPTS" || { finish; exit 1; }

nser=$(wc -l <"$T/info.jsonl")
check "the generator wrote .ser files ($nser)" test "$nser" -gt 20

# every record against its info file, field by field
python3 - "$M" "$T/info.jsonl" >"$T/cmp.out" 2>&1 <<'PY'
import json, os, sys
m, recs = sys.argv[1], sys.argv[2]
bad = 0
for line in open(recs):
    r = json.loads(line)
    d = "%s/jobs/%s/pipelines/%d/checkpoints/%d" % (m, r["job"], r["pipeline"], r["checkpoint"])
    try:
        text = open(d + "/info").read()
    except OSError as e:
        print("%s: %s" % (d, e)); bad += 1; continue
    f = {}
    for l in text.splitlines():
        k, _, v = l.partition(" ")
        f[k] = v.strip()
    want = {"job": r["job"], "pipeline": str(r["pipeline"]),
            "checkpoint": str(r["checkpoint"]), "object": r["object"],
            "type": r["type"], "trigger_ms": str(r["trigger_ms"]),
            "completed_ms": str(r["completed_ms"]),
            "duration_ms": str(r["completed_ms"] - r["trigger_ms"]),
            "size": str(os.path.getsize(d + "/" + r["object"])),
            "actions": str(len(r["actions"])), "tasks": str(len(r["tasks"])),
            "state_bytes": str(sum(a["state_bytes"] for a in r["actions"])),
            "acknowledged": str(sum(t["acknowledged"] for t in r["tasks"])),
            "state_size": str(sum(t["state_size"] for t in r["tasks"]))}
    for k, v in want.items():
        if f.get(k) != v:
            print("%s: %s = %r, want %r" % (d, k, f.get(k), v)); bad += 1
    # actions and tasks in file (HashMap) order: compared as sets
    got_a = sorted((f.get("action.%d.name" % i), f.get("action.%d.parallelism" % i),
                    f.get("action.%d.subtasks" % i), f.get("action.%d.coordinator" % i),
                    f.get("action.%d.state_bytes" % i)) for i in range(len(r["actions"])))
    want_a = sorted((a["name"], str(a["parallelism"]), str(a["subtasks"]),
                     "yes" if a["coordinator"] else "no", str(a["state_bytes"]))
                    for a in r["actions"])
    if got_a != want_a:
        print("%s: actions %r, want %r" % (d, got_a, want_a)); bad += 1
    got_t = sorted((f.get("task.%d.vertex" % i), f.get("task.%d.acknowledged" % i),
                    f.get("task.%d.subtasks" % i), f.get("task.%d.state_size" % i))
                   for i in range(len(r["tasks"])))
    want_t = sorted((str(t["vertex"]), str(t["acknowledged"]), str(t["subtasks"]),
                     str(t["state_size"])) for t in r["tasks"])
    if got_t != want_t:
        print("%s: tasks %r, want %r" % (d, got_t, want_t)); bad += 1
    # restore point: the checkpoint `latest` points to, and only that one
    latest = os.path.join(os.path.dirname(d), "latest")
    rp = "yes" if os.path.islink(latest) and os.readlink(latest) == str(r["checkpoint"]) else "no"
    if f.get("restore_point") != rp:
        print("%s: restore_point %r, want %r" % (d, f.get("restore_point"), rp)); bad += 1
    # exact st_size
    if os.stat(d + "/info").st_size != len(text.encode()):
        print("%s: st_size %d != %d bytes read" % (d, os.stat(d + "/info").st_size, len(text.encode())))
        bad += 1
print("mismatches", bad)
PY
check_eq "info of every .ser matches what the generator wrote" "mismatches 0" "$(tail -1 "$T/cmp.out")"
grep -v '^mismatches' "$T/cmp.out" | head -5

# listed in every real-layout checkpoint directory, in none of the others
j=$(head -1 "$T/info.jsonl" | python3 -c 'import json,sys; r=json.load(sys.stdin); print(r["job"], r["pipeline"], r["checkpoint"])')
set -- $j
CK=$M/jobs/$1/pipelines/$2/checkpoints/$3
check "ls shows info beside the object" bash -c "ls '$CK' | grep -qx info"
check "stat, cat and wc agree on its size" \
	test "$(stat -c %s "$CK/info")" = "$(wc -c <"$CK/info")"
ninfo=$(find "$M/jobs" -name info -type f | wc -l)
check_eq "find sees one info per .ser checkpoint" "$nser" "$ninfo"
check "du -s walks the mount without an error" bash -c "du -s '$M/jobs' >/dev/null"
check "tar of a pipeline includes info" bash -c "tar -C '$M/jobs/$1/pipelines/$2' -cf - checkpoints | tar -tf - | grep -q '/info$'"

# the pipeline status table: type and duration columns, as info says
st=$(cat "$M/jobs/$1/pipelines/$2/status")
row=$(echo "$st" | awk -v c="$3" '$1 == c')
dur=$(sed -n 's/^duration_ms *//p' "$CK/info")
ty=$(sed -n 's/^type *//p' "$CK/info")
check "status has type and duration columns" bash -c "echo '$st' | grep -q '^checkpoint .* type *duration *role'"
check_eq "status row: type and duration of info" "$ty ${dur}ms" "$(echo "$row" | awk '{print $8, $9}')"

# a savepoint's info says so (genstate writes some as the newest file)
sp=$(python3 -c 'import json,sys
for l in open(sys.argv[1]):
    r = json.loads(l)
    if r["type"] == "savepoint": print(r["job"], r["pipeline"], r["checkpoint"]); break' "$T/info.jsonl")
if [ -n "$sp" ]; then
	set -- $sp
	check "a savepoint's info says savepoint" grep -q '^type *savepoint$' "$M/jobs/$1/pipelines/$2/checkpoints/$3/info"
else
	bad "the generated state holds no savepoint"
fi

# a corrupt object: its info says so, the rest of the tree unaffected
c=$(sed -n 5p "$T/info.jsonl" | python3 -c 'import json,sys; r=json.load(sys.stdin); print(r["job"], r["pipeline"], r["checkpoint"], r["object"])')
set -- $c
obj=$NS/$1/$4
cp -p "$obj" "$T/saved.ser"
head -c "$(stat -c %s "$obj")" /dev/urandom | tr '\0' '\377' >"$obj.new"
mv "$obj.new" "$obj"
touch -d '@1000000000' "$obj" # another version (mtime): decoded again
CI=$M/jobs/$1/pipelines/$2/checkpoints/$3
for _ in $(seq 60); do
	[ "$(stat -c %Y "$CI/$4" 2>/dev/null)" = 1000000000 ] && break
	sleep 0.25
done
check "info of an undecodable object says so" grep -q '^error .*does not decode' "$CI/info"
check "the object itself is still there, its bytes as stored" cmp -s "$obj" "$CI/$4"
mv "$T/saved.ser" "$obj"

# decoded once per version: a new mount reads no checkpoint object for info
reads_of() { awk '$1 == "stfs_backend_read_requests_total" { s += $2 } END { print s + 0 }' "$1/.stfs/stats"; }
unmount_stfs "$M"
check "state_dir holds the summaries" bash -c "ls '$T/sd' | grep -q '\\.summary$'"
# cache_ttl=0: .stfs/stats itself is a pseudo-file, rendered afresh
mount_stfs "$M" -o "$OPTS,cache_ttl=0" || { finish; exit 1; }
r0=$(reads_of "$M")
find "$M/jobs" -name info -type f -exec cat {} + >"$T/all2" 2>&1
r1=$(reads_of "$M")
check_eq "after a remount, reading every info reads no object (state_dir)" 0 "$((r1 - r0))"
cat "$CK"/*.ser >/dev/null
check "(the counter counts: reading an object is a read request)" test "$(reads_of "$M")" -gt "$r1"
check "and every info still renders" test "$(grep -c '^checkpoint ' "$T/all2")" = "$nser"
unmount_stfs "$M"

# issue 11: more summaries in state_dir than info_cache_max_entries: a
# mount keeps the first that fit, so a walk in the order that decoded them
# (the records' order above) reads none of those (keeping the last ones
# made each of that walk's lookups a miss that dropped the next)
half=$((nser / 2))
mount_stfs "$M" -o "$OPTS,cache_ttl=0,info_cache_max_entries=$half" || { finish; exit 1; }
python3 -c 'import json,sys
for l in open(sys.argv[1]):
    r = json.loads(l)
    print("%s/jobs/%s/pipelines/%d/checkpoints/%d/info" % (sys.argv[2], r["job"], r["pipeline"], r["checkpoint"]))' \
	"$T/info.jsonl" "$M" >"$T/info-paths"
r0=$(reads_of "$M")
head -n "$half" "$T/info-paths" | xargs cat >"$T/all3" 2>&1
r1=$(reads_of "$M")
check_eq "past info_cache_max_entries, the first $half summaries of state_dir are served without a read" 0 "$((r1 - r0))"
tail -n +"$((half + 1))" "$T/info-paths" | xargs cat >>"$T/all3" 2>&1
check "(the others are read: the cap holds)" test "$(reads_of "$M")" -gt "$r1"
check_eq "and every info renders" "$nser" "$(grep -c '^checkpoint ' "$T/all3")"
unmount_stfs "$M"

# rm -r of a job whose objects do not decode (empty .ser files, as a crash
# between the engine's touch and write leaves): with cache_ttl=0 every
# unlink makes the kernel look `info` up again, which must not fail with EIO
# (test_scale's rm -r did once, when its dentries had expired)
E=$T/ens
J=810000000000000001
mkdir -p "$E/$J"
for i in 1 2 3; do : >"$E/$J/170000000000$i-$i-1-$i.ser"; done
find "$E/$J" -exec touch -h -d '-1 hour' {} +
mount_stfs "$M" -o "checkpoint=file://$E/,engine=http://127.0.0.1:$SIM_PORT_a,state_dir=$T/sd2,cache_ttl=0,orphan_grace=10m" ||
	{ finish; exit 1; }
EI=$M/jobs/$J/pipelines/1/checkpoints/2/info
check "stat of an undecodable checkpoint's info answers" bash -c "stat '$EI' >/dev/null"
check "its info says the object does not decode" grep -q '^error .*does not decode' "$EI"
sz=$(stat -c %s "$EI")
check "its size ($sz) is what a read gives" test "${sz:-0}" -gt 0 -a "$sz" = "$(wc -c <"$EI")"
check_eq "release of the orphan" OK "$(release_errno "$M/jobs/$J/restore")"
rm -r "$M/jobs/$J" 2>"$T/rm.err"
rc=$?
check "rm -r of its job exits 0 ($(head -c 200 "$T/rm.err"))" test $rc = 0
check_eq "its objects are gone from storage" "" "$(ls -A "$E/$J" 2>/dev/null)"

finish
