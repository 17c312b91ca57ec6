#!/bin/bash
# The pipeline view in a job's `status`: what storage tells (cadence beside
# checkpoint.interval, newest write, gaps) for every engine version, and the
# engine's checkpoint monitor (/jobs/checkpoints/<id>, 2.3.13+) where it has
# one: counts, success rate, last duration and failure.  An engine without
# the monitor (2.3.x) is probed once, not per status read.
. "$(dirname "$0")/lib.sh"

STATE=$T/state
python3 "$ROOT/scripts/genstate.py" --out "$STATE" --jobs 12 --seed 17 \
	>"$T/gen.log" 2>&1 || { cat "$T/gen.log"; exit 1; }
NS=$STATE/checkpoint

# a running job with at least 3 stored checkpoints in one pipeline
pick=$(python3 - "$STATE/scenario.json" "$NS" <<'PY'
import json, os, re, sys
scen = json.load(open(sys.argv[1]))
for j in scen["jobs"]:
    if j["jobStatus"] != "RUNNING":
        continue
    d = os.path.join(sys.argv[2], j["jobId"])
    if not os.path.isdir(d):
        continue
    per = {}
    for f in os.listdir(d):
        m = re.match(r"(\d+)-\d+-(\d+)-(\d+)\.ser$", f)
        if m:
            per.setdefault(int(m.group(2)), []).append(int(m.group(1)))
    for p, ts in sorted(per.items()):
        if len(ts) >= 3:
            ts.sort()
            steps = sorted(b - a for a, b in zip(ts, ts[1:]))
            med = steps[(len(steps) - 1) // 2]
            gaps = sum(1 for s in (b - a for a, b in zip(ts, ts[1:])) if s > 2 * med)
            ivl = j.get("envOptions", {}).get("checkpoint.interval", "")
            print(j["jobId"], p, med, gaps, ivl)
            sys.exit(0)
sys.exit(1)
PY
) || { bad "no running job with 3 stored checkpoints in the generated state"; finish; exit 1; }
read -r JOB PIPE MED GAPS IVL <<<"$pick"
dur() { python3 -c '
import sys
ms = int(sys.argv[1])
if ms < 60000: print("%d.%ds" % (ms // 1000, ms % 1000 // 100))
elif ms < 3600000: print("%dm%02ds" % (ms // 60000, ms // 1000 % 60))
else: print("%dh%02dm" % (ms // 3600000, ms // 60000 % 60))' "$1"; }

for ver in 2.3 3; do
	# started here, not in $( ): its PID must reach PIDS for the cleanup
	pf=$T/sim-$ver.port
	python3 "$ROOT/scripts/stsim.py" --scenario "$STATE/scenario.json" \
		--version "$ver" --port 0 --port-file "$pf" >"$T/sim-$ver.log" 2>&1 &
	PIDS+=("$!")
	for _ in $(seq 100); do [ -s "$pf" ] && break; sleep 0.05; done
	PORT=$(cat "$pf")
	M=$T/m-$ver
	mount_stfs "$M" -o "checkpoint=file://$NS/,engine=http://127.0.0.1:$PORT,state_dir=$T/sd,timeout=2000,cache_ttl=0,engine_ttl=500" ||
		{ finish; exit 1; }
	S=$M/jobs/$JOB/status
	row=$(awk -v p="$PIPE" 'f && $1 == p {print; exit} /^pipeline +every/ {f=1}' "$S")
	check_eq "[$ver] cadence of pipeline $PIPE = the median step of its stored checkpoints" \
		"$(dur "$MED")" "$(awk '{print $2}' <<<"$row")"
	check_eq "[$ver] the job's checkpoint.interval beside it" "$(dur "$IVL")" \
		"$(awk '{print $3}' <<<"$row")"
	check_eq "[$ver] gaps in the stored series" "$GAPS" "$(awk '{print $NF}' <<<"$row")"
	if [ "$ver" = 3 ]; then
		curl -s "http://127.0.0.1:$PORT/jobs/checkpoints/$JOB" >"$T/mon.json"
		want=$(python3 - "$T/mon.json" "$PIPE" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
for p in d["pipelines"]:
    if p["pipelineId"] == int(sys.argv[2]):
        c = p["counts"]
        rate = 100.0 * c["completed"] / (c["completed"] + c["failed"])
        print(p["pipelineId"], c["triggered"], c["completed"], c["failed"],
              c["inProgress"], "%.1f%%" % rate)
PY
)
		got=$(awk -v p="$PIPE" 'f && $1 == p {print $1, $2, $3, $4, $5, $6; exit} /^engine +triggered/ {f=1}' "$S")
		check_eq "[3] the engine's checkpoint monitor: counts and success rate" "$want" "$got"
		check "[3] the last failure's reason is shown" \
			grep -q 'checkpoint expired before completing' "$S"
	else
		check "[2.3] no engine monitor section without the endpoint" \
			bash -c "! grep -q '^engine +triggered' '$S'"
		reqs() { curl -s "http://127.0.0.1:$PORT/__sim/stats" |
			python3 -c 'import json,sys; print(json.load(sys.stdin)["paths"].get("/jobs", 0))'; }
		r0=$(reqs)
		# spaced past the engine client's own 1 s memory of a failed fetch
		for _ in 1 2 3 4; do sleep 1.2; cat "$S" >/dev/null; done
		r1=$(reqs)
		check "[2.3] an engine without the monitor is probed once, not per read ($r0 -> $r1 over 4 renders)" \
			test "$r0" -le 1 -a "$r1" = "$r0"
	fi
	unmount_stfs "$M"
done
finish
