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
mount_stfs "$M" -o "checkpoint=file://$STATE/checkpoint/,engine=http://127.0.0.1:$PORT,imap=file://$STATE/imap/,state_dir=$T/statedir,timeout=2000" ||
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

finish
