#!/bin/bash
# Prometheus for real: Debian's prometheus-node-exporter with its textfile
# collector pointed at the mount's root scrapes stfs.prom; every job stfs
# lists is found in the scrape with its state, and node_exporter reports no
# textfile error.  The shipped alerting rules pass `promtool check rules`
# and `promtool test rules` on series cut from this very scrape.
. "$(dirname "$0")/lib.sh"

NE=$(command -v prometheus-node-exporter || command -v node_exporter)
[ -n "$NE" ] && command -v promtool >/dev/null || {
	bad "prometheus-node-exporter and promtool are needed (scripts/deps.sh installs them)"
	finish
	exit 1
}

STATE=$T/state
python3 "$ROOT/scripts/genstate.py" --out "$STATE" --jobs 12 --seed 11 \
	--imap >"$T/gen.log" 2>&1 || { cat "$T/gen.log"; exit 1; }
start_sim "$STATE/scenario.json" a
PORT=$SIM_PORT_a
M=$T/mnt
mount_stfs "$M" -o "checkpoint=file://$STATE/checkpoint/,engine=http://127.0.0.1:$PORT,imap=file://$STATE/imap/,state_dir=$T/statedir,timeout=2000,cache_ttl=1000,engine_ttl=1000" ||
	{ finish; exit 1; }

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
NPORT=$(free_port)
"$NE" --web.listen-address="127.0.0.1:$NPORT" --collector.disable-defaults \
	--collector.textfile --collector.textfile.directory="$M" \
	>"$T/node_exporter.log" 2>&1 &
PIDS+=("$!")
for _ in $(seq 100); do
	curl -s -m 1 -o /dev/null "http://127.0.0.1:$NPORT/metrics" && break
	sleep 0.05
done
curl -s -m 10 "http://127.0.0.1:$NPORT/metrics" >"$T/scrape.txt"
check "node_exporter answers a scrape" test -s "$T/scrape.txt"
check_eq "node_exporter read the mount without a textfile error" \
	"node_textfile_scrape_error 0" \
	"$(grep '^node_textfile_scrape_error' "$T/scrape.txt")"
check "node_exporter saw stfs.prom (its mtime series names it)" \
	grep -q 'node_textfile_mtime_seconds{file="[^"]*stfs.prom"}' "$T/scrape.txt"

# every job of jobs/ is in the scrape, in the state the tree shows
errs=0
for id in $(ls "$M/jobs"); do
	st=$(getfattr --only-values -n user.stfs.state "$M/jobs/$id" 2>/dev/null)
	grep -qE "^seatunnel_job_state\{job_id=\"$id\",[^}]*state=\"$st\"\} 1" \
		"$T/scrape.txt" || { echo "    $id $st missing"; errs=$((errs + 1)); }
done
check_eq "every job's state series reached Prometheus through node_exporter ($(ls "$M/jobs" | wc -l) jobs)" \
	0 "$errs"
n_bytes=$(grep -c '^stfs_job_storage_bytes{' "$T/scrape.txt")
n_store=$(ls "$STATE/checkpoint" | grep -cE '^[0-9]+$')
check_eq "storage bytes series for every job with storage" "$n_store" "$n_bytes"

# the cluster-wide series beside the jobs'
check_eq "stfs_orphan_jobs = the jobs under by-state/ORPHAN" \
	"$(ls "$M/by-state/ORPHAN" 2>/dev/null | grep -c .)" \
	"$(awk '$1 == "stfs_orphan_jobs" {print $2}' "$T/scrape.txt")"
dead_sum=$(python3 - "$T/scrape.txt" <<'PY'
import re, sys
dead = {"FINISHED", "CANCELED", "FAILED", "SAVEPOINT_DONE", "UNKNOWABLE", "ORPHAN"}
st, by = {}, {}
for l in open(sys.argv[1]):
    m = re.match(r'seatunnel_job_state\{job_id="(\d+)".*state="([A-Z_]+)"\} 1', l)
    if m: st[m.group(1)] = m.group(2)
    m = re.match(r'stfs_job_storage_bytes\{job_id="(\d+)"[^}]*\} (\d+)', l)
    if m: by[m.group(1)] = int(m.group(2))
print(sum(b for j, b in by.items() if st.get(j) in dead))
PY
)
check_eq "stfs_dead_jobs_storage_bytes = the dead jobs' storage bytes" "$dead_sum" \
	"$(awk '$1 == "stfs_dead_jobs_storage_bytes" {print $2}' "$T/scrape.txt")"
check_eq "stfs_backend_up for checkpoint, imap and engine, all up" \
	"checkpoint=1 engine=1 imap=1" \
	"$(sed -n 's/^stfs_backend_up{backend="\([a-z]*\)"} \([01]\)$/\1=\2/p' "$T/scrape.txt" | sort | tr '\n' ' ' | sed 's/ $//')"
check "running jobs carry their checkpoint.interval" \
	grep -q '^stfs_job_checkpoint_interval_seconds{' "$T/scrape.txt"

# .stfs/stats: promtool-clean, latency histograms that counted this walk
cp "$M/.stfs/stats" "$T/stats.txt"
out=$(promtool check metrics <"$T/stats.txt" 2>&1)
check_eq "promtool check metrics accepts .stfs/stats" "" "$out"
check "the checkpoint backend's latency histogram counted calls" \
	awk '$1 == "stfs_backend_request_duration_seconds_count{backend=\"checkpoint\"}" && $2 > 0 {f=1} END {exit !f}' "$T/stats.txt"
check "the engine's latency histogram counted requests" \
	awk '$1 == "stfs_engine_request_duration_seconds_count" && $2 > 0 {f=1} END {exit !f}' "$T/stats.txt"

# the shipped alerting rules: valid, and right on series of this very scrape
RULES=$ROOT/conf/prometheus/stfs-alerts.yml
out=$(promtool check rules "$RULES" 2>&1)
check "promtool check rules accepts conf/prometheus/stfs-alerts.yml" \
	bash -c "grep -q SUCCESS <<<'$out'"
check "the alert tests are built from the scrape (every series a rule uses exists)" \
	python3 "$ROOT/tests/integration/alert_tests.py" "$T/scrape.txt" "$RULES" "$T/alerts.test.yml"
out=$(promtool test rules "$T/alerts.test.yml" 2>&1)
check "promtool test rules: every alert fires (and stays quiet) as tested" \
	bash -c "grep -q SUCCESS <<<\"\$1\"" _ "$out" || echo "$out" | tail -20
# the tests can fail: a rule with a threshold 100 times higher misses the alert
sed 's/> 3 \* stfs_job_checkpoint_interval_seconds/> 300 * stfs_job_checkpoint_interval_seconds/' \
	"$RULES" >"$T/mutated.yml"
python3 "$ROOT/tests/integration/alert_tests.py" "$T/scrape.txt" "$T/mutated.yml" \
	"$T/mutated.test.yml" >/dev/null
check "promtool test rules fails on a mutated rule (the tests can fail)" \
	bash -c "! promtool test rules '$T/mutated.test.yml' >/dev/null 2>&1"

# IMap WAL series (README "Reclaiming IMap WAL space"): against an
# independent reader of the generator's files (walref.py), and promtool-clean
WALREF=$ROOT/tests/integration/walref.py
imap_series() { # FILE: "cluster map wal reclaimable superseded" per map
	python3 - "$1" <<'PY'
import re, sys
v = {}
for l in open(sys.argv[1]):
    m = re.match(r'stfs_imap_(wal|reclaimable|superseded)_bytes\{cluster="([^"]*)",map="([^"]*)"\} (\d+)$', l)
    if m: v.setdefault((m.group(2), m.group(3)), {})[m.group(1)] = m.group(4)
for (c, mp), d in sorted(v.items()):
    print(c, mp, d.get("wal"), d.get("reclaimable"), d.get("superseded"))
PY
}
check "the scrape has the IMap WAL series" grep -q '^stfs_imap_reclaimable_bytes{cluster="seatunnel",map=' "$T/scrape.txt"
check_eq "engine up: wal, reclaimable (0) and superseded bytes per map = walref's count" \
	"$(python3 "$WALREF" figures "$STATE/imap" 3600 up)" "$(imap_series "$T/scrape.txt")"
check "some generated map has superseded bytes" \
	awk '$1 == "stfs_imap_superseded_bytes{cluster=\"seatunnel\",map=\"engine_checkpoint-id-map\"}" && $2 > 0 {f=1} END {exit !f}' "$T/scrape.txt"
n_ver=$(grep -c '^stfs_imap_regions{' "$T/scrape.txt")
n_map=$(grep -c '^stfs_imap_wal_bytes{' "$T/scrape.txt")
check_eq "stfs_imap_regions has all six verdicts per map" "$((n_map * 6))" "$n_ver"
check_eq "stfs_imap_regions adds up to the generator's region directories" \
	"$(find "$STATE/imap" -mindepth 3 -maxdepth 3 -type d | wc -l)" \
	"$(awk '/^stfs_imap_regions\{/ {s += $2} END {print s}' "$T/scrape.txt")"
out=$(grep -v '^node_\|^go_\|^process_\|^promhttp_' "$M/stfs.prom" | promtool check metrics 2>&1)
check_eq "promtool check metrics accepts stfs.prom with the IMap series" "" "$out"
# the engine stops: what rm -r accepts now is the superseded regions
stop_pid "$SIM_PID_a"
sleep 2.2 # cache_ttl + engine_ttl
cat "$M/stfs.prom" >"$T/prom2.txt"
check_eq "engine stopped: reclaimable = superseded = walref's count per map" \
	"$(python3 "$WALREF" figures "$STATE/imap" 3600 stopped)" "$(imap_series "$T/prom2.txt")"
map=engine_checkpoint-id-map
reg=$(python3 "$WALREF" regions "$STATE/imap/seatunnel/$map" 3600 stopped | awk '$3 == "removable" {print $1; exit}')
size=$(python3 "$WALREF" regions "$STATE/imap/seatunnel/$map" 3600 stopped | awk '$3 == "removable" {print $2; exit}')
before=$(awk -v k="stfs_imap_reclaimable_bytes{cluster=\"seatunnel\",map=\"$map\"}" '$1 == k {print $2}' "$T/prom2.txt")
check "a removable region of $map ($reg, $size bytes)" test -n "$reg" -a "${size:-0}" -gt 0
check "rm -r of it succeeds" rm -r "$M/imap/seatunnel/$map/$reg"
check "its raw directory is gone" test ! -e "$STATE/imap/seatunnel/$map/$reg"
sleep 1.1
after=$(awk -v k="stfs_imap_reclaimable_bytes{cluster=\"seatunnel\",map=\"$map\"}" '$1 == k {print $2}' "$M/stfs.prom")
check_eq "the removal lowered stfs_imap_reclaimable_bytes by its size" "$((before - size))" "$after"

# decoded maps are cached by listing: of two renders of one map's summary
# (past cache_ttl), the first reads its WAL files, the second only lists
calls() { awk '$1 == "stfs_backend_request_duration_seconds_count{backend=\"imap\"}" {print $2}' "$M/.stfs/stats"; }
cp -a "$STATE/imap/seatunnel/engine_runningJobState" "$STATE/imap/seatunnel/copy"
n_files=$(find "$STATE/imap/seatunnel/copy" -name '*wal.txt' -size +0 | wc -l)
# (.stfs/stats and the summary are each rendered once per cache_ttl)
sleep 1.1; c0=$(calls); cat "$M/imap/seatunnel/copy.summary" >"$T/copy1"
sleep 1.1; c1=$(calls); cat "$M/imap/seatunnel/copy.summary" >"$T/copy2"
sleep 1.1; c2=$(calls)
check_eq "the cached summary is the same text" "$(cat "$T/copy1")" "$(cat "$T/copy2")"
check "a cold summary reads each of the $n_files WAL files, a warm one none (imap calls: cold $((c1 - c0)), warm $((c2 - c1)))" \
	test "$((c1 - c0 - (c2 - c1)))" -ge "$n_files" -a "$n_files" -gt 0

finish
