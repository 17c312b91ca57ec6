#!/bin/bash
# Faults on the wire against real mounts.  The engine simulator and s3rver
# run in a network namespace this test makes (veth pair, own /30), each
# behind scripts/faultproxy.py; stfs runs outside and reaches them over the
# veth.  Faults: packets dropped (nftables drop = black hole), connections
# reset (nftables reject with tcp reset), the server frozen (kill -STOP),
# a body trickled at 200 B/s, a stalled body (headers and half the body,
# then nothing), garbage answers, 503 storms.  For each fault, on a mount
# whose engine is faulty (storage local) and on one whose S3 is faulty
# (engine local): ls, stat, cat, du and rm return within the deadline plus
# a margin with a documented errno; nothing is deleted while the engine
# cannot be asked (the raw file checked); a call that does not need the
# faulty backend is not slowed; the mount recovers by itself (a deletion
# succeeds and the raw object is gone).  Prints the worst latency per fault
# and operation (README "Failure modes").  Needs root, ip, nft, node/npm.
# STFS_BIN overrides the binary under test.
. "$(dirname "$0")/lib.sh"
STFS=${STFS_BIN:-$STFS}

TMO=2000    # request deadline of both mounts, ms
MARGIN=1500 # what a call may take beyond it
[ -n "$KEEP_T" ] && echo "scratch: $T"
FAST=700    # a call that does not need the faulty backend, ms
RECOVER=20  # tries, 0.25 s apart, for the mount to recover by itself

for c in ip nft node curl; do
	command -v "$c" >/dev/null || {
		bad "$c is needed (scripts/deps.sh installs it)"
		finish
		exit 1
	}
done

# ---- the namespace: NS holds the servers, the host side is HIP ----------
NS=stfsf$$
VH=sf$$h
VN=sf$$n
o2=$((200 + $$ % 50))
o3=$((($$ / 50) % 250))
HIP=10.$o2.$o3.1
NIP=10.$o2.$o3.2
net_cleanup() {
	cleanup
	ip netns pids "$NS" 2>/dev/null | while read -r p; do kill -9 "$p" 2>/dev/null; done
	ip netns del "$NS" 2>/dev/null
	ip link del "$VH" 2>/dev/null
}
trap net_cleanup EXIT
nsx() { ip netns exec "$NS" "$@"; }
ip netns add "$NS" &&
	ip link add "$VH" type veth peer name "$VN" netns "$NS" &&
	ip addr add "$HIP/30" dev "$VH" && ip link set "$VH" up &&
	nsx ip addr add "$NIP/30" dev "$VN" && nsx ip link set "$VN" up &&
	nsx ip link set lo up &&
	nsx nft add table inet stfsfault &&
	nsx nft add chain inet stfsfault in '{ type filter hook input priority 0; }' || {
	bad "network namespace $NS with a veth pair and an nft table"
	finish
	exit 1
}
# nft_fault PORT drop|reset|none: what the namespace does to packets for PORT
nft_fault() {
	nsx nft flush chain inet stfsfault in
	case $2 in
	drop) nsx nft add rule inet stfsfault in tcp dport "$1" drop ;;
	reset) nsx nft add rule inet stfsfault in tcp dport "$1" reject with tcp reset ;;
	esac
}

# ---- the state: a FAILED job with 11 superseded checkpoints ------------
STATE=$T/state
gen_state "$STATE" --jobs 13 --seed 3 --pipelines 1 --checkpoints 12
NS_DIR=$STATE/checkpoint
PREFIX=seatunnel/checkpoint
state_jobs() { json "$STATE/scenario.json" "'\n'.join(j['jobId'] for j in d['jobs'] if j['jobStatus'] == '$1')"; }
FAILED_ID=$(state_jobs FAILED | head -1)
ALL_IDS=$(json "$STATE/scenario.json" "'\n'.join(j['jobId'] for j in d['jobs'])")
[ -n "$FAILED_ID" ] && [ -d "$NS_DIR/$FAILED_ID" ] || {
	bad "the generated state has a FAILED job with storage"
	finish
	exit 1
}
# a copy of the namespace for the engine-fault mount (its deletions)
cp -a "$NS_DIR" "$T/ckpt-local"

# ---- servers in the namespace, each behind a faultproxy on the veth -----
# the simulator on the namespace's loopback, its proxy on NIP:8081
ip netns exec "$NS" python3 "$ROOT/scripts/stsim.py" --scenario "$STATE/scenario.json" \
	--host 127.0.0.1 --port 8080 >"$T/sim-ns.log" 2>&1 &
SIMNS_PID=$!
PIDS+=("$SIMNS_PID")
# s3rver on the namespace's loopback
SD=$T/srv
nsx "$ROOT/scripts/s3rver.sh" start "$SD" 4568 >/dev/null || {
	bad "s3rver starts in the namespace"
	finish
	exit 1
}
S3_PID=$(cat "$SD/s3rver.pid")
PIDS+=("$S3_PID")
start_proxy() { # start_proxy NAME LISTEN_PORT UPSTREAM_PORT
	ip netns exec "$NS" python3 "$ROOT/scripts/faultproxy.py" --host "$NIP" --port "$2" \
		--upstream "http://127.0.0.1:$3" >"$T/fp-$1.log" 2>&1 &
	PIDS+=("$!")
	printf -v "FP_PID_$1" %s "$!"
}
start_proxy eng 8081 8080
start_proxy s3 4569 4568
EP=8081
SP=4569
for _ in $(seq 100); do
	curl -s -m 1 "http://$NIP:$EP/overview" >/dev/null &&
		curl -s -m 1 "http://$NIP:$SP/__fault" >/dev/null && break
	sleep 0.1
done
fp() { # fp eng|s3 JSON: sets a proxy's fault
	local port=$EP
	[ "$1" = s3 ] && port=$SP
	curl -s -m 5 -X POST --data "$2" "http://$NIP:$port/__fault" >/dev/null
}
simf() { curl -s -m 5 -X POST -H 'Content-Type: application/json' --data "$1" "http://$NIP:$EP/__sim/fault" >/dev/null; }
check "the engine answers through the namespace" \
	bash -c "curl -s -m 2 http://$NIP:$EP/overview | grep -q projectVersion"

# the bucket: every object of the namespace, uploaded in the namespace
export AWS_ACCESS_KEY_ID=S3RVER AWS_SECRET_ACCESS_KEY=S3RVER
SIG=(--aws-sigv4 aws:amz:us-east-1:s3 --user S3RVER:S3RVER
	-H x-amz-content-sha256:UNSIGNED-PAYLOAD)
: >"$T/upload.cfg"
while IFS= read -r -d '' f; do
	printf 'upload-file = "%s"\nurl = "http://127.0.0.1:4568/ckpt/%s/%s"\noutput = "/dev/null"\n' \
		"$f" "$PREFIX" "${f#"$NS_DIR"/}" >>"$T/upload.cfg"
done < <(find "$NS_DIR" -type f -print0)
codes=$(nsx curl -sS --no-progress-meter "${SIG[@]}" --parallel --parallel-max 8 -w '%{http_code}\n' \
	-K "$T/upload.cfg" | sort -u | tr -d '\n')
check_eq "the namespace is uploaded to s3rver" 200 "$codes"
# s3_has KEY: the object is in the bucket (asked in the namespace, no proxy)
s3_has() {
	[ "$(nsx curl -s -o /dev/null -w '%{http_code}' -I "${SIG[@]}" \
		"http://127.0.0.1:4568/ckpt/$PREFIX/$1")" = 200 ]
}

not() { ! "$@"; }

# a local simulator for the S3 mount's engine (never faulted)
start_sim "$STATE/scenario.json" loc

# ---- the two mounts -----------------------------------------------------
TTL="timeout=$TMO,engine_ttl=500,cache_ttl=500,storage_ttl=500,decision_age=500,orphan_grace=10m"
ME=$T/m-eng
MS=$T/m-s3
mount_stfs "$ME" -o "checkpoint=file://$T/ckpt-local/,engine=http://$NIP:$EP,imap=file://$STATE/imap/,state_dir=$T/sd-e,$TTL" || {
	finish
	exit 1
}
ME_PID=$STFS_PID
mount_stfs "$MS" -o "checkpoint=s3://ckpt/$PREFIX/,endpoint=http://$NIP:$SP,region=us-east-1,path_style,engine=http://127.0.0.1:$SIM_PORT_loc,imap=file://$STATE/imap/,state_dir=$T/sd-s,$TTL" || {
	finish
	exit 1
}
MS_PID=$STFS_PID
CK=jobs/$FAILED_ID/pipelines/1/checkpoints
LATEST=$(readlink "$ME/$CK/latest")
mapfile -t SUPER < <(ls "$ME/$CK" | grep -E '^[0-9]+$' | grep -vx "$LATEST" | sort -n)
check "the FAILED job has superseded checkpoints on both mounts (${#SUPER[@]})" \
	bash -c "[ ${#SUPER[@]} -ge 9 ] && [ \"\$(ls '$MS/$CK' | grep -vx latest | wc -l)\" -ge 10 ]"
# obj_of CID: the checkpoint's one object name (from the raw namespace)
obj_of() { (cd "$NS_DIR/$FAILED_ID" && ls -- *-"$1".ser); }
# raw_rel CID: the object's path relative to the namespace root
raw_rel() { echo "$FAILED_ID/$(obj_of "$1")"; }

# ---- measuring -----------------------------------------------------------
declare -A WORST
FAULTS=()
ms_since() { echo $((($(date +%s%N) - $1) / 1000000)); }
# timed FAULT OP CMD...: runs CMD (at most 30 s), sets DT (ms), RC and ERR
# (errno name of its message), keeps the worst DT per fault and op
timed() {
	local f=$1 op=$2 t0 out
	shift 2
	t0=$(date +%s%N)
	out=$(timeout 30 "$@" 2>&1 >/dev/null)
	RC=$?
	DT=$(ms_since "$t0")
	case $out in
	*"Connection timed out"*) ERR=ETIMEDOUT ;;
	*"Protocol error"*) ERR=EPROTO ;;
	*"Connection refused"*) ERR=ECONNREFUSED ;;
	*) ERR=$(echo "$out" | errno_of_msg) ;;
	esac
	[ "$RC" != 0 ] && [ "$ERR" = OK ] && ERR=FAILRC
	[ "$RC" = 124 ] && ERR=HUNG
	[ "${WORST[$f,$op]:-0}" -lt "$DT" ] && WORST[$f,$op]=$DT
	[ -n "${WORST[$f,$op.err]}" ] || WORST[$f,$op.err]=$ERR
	[[ " ${WORST[$f,$op.err]} " == *" $ERR "* ]] || WORST[$f,$op.err]+=" $ERR"
}
# in_set ERR ALLOWED...: ERR is one of the allowed names
in_set() {
	local e=$1 a
	shift
	for a in "$@"; do [ "$e" = "$a" ] && return 0; done
	return 1
}
# answered ERRNO...: the last timed call ended with one of them, in time
answered() { in_set "$ERR" "$@" && [ "$DT" -lt $((TMO + MARGIN)) ]; }
# A du of a job over an unreachable store asks it for the job's own listing
# (status and deletable share it), the checkpoint headers savepoints/ needs
# and the pipeline files: the first request that hits the deadline spares
# the others for a deadline (README "Failure modes"), so the whole du waits
# one deadline (two before: 4.0-4.1 s with a 2 s deadline).
answered_walk() { answered "$@"; }
# the errnos a call may end with under a fault (README "Failure modes")
READ_ERRS=(OK EIO ETIMEDOUT EAGAIN ECONNREFUSED EPROTO)
# paused MOUNT: stfs_http_paused_total of a mount's .stfs/stats, the requests
# the endpoint pause held back unsent (README "Failure modes")
paused() { awk '$1 == "stfs_http_paused_total" { print $2 }' "$1/.stfs/stats"; }
# same_count A B: two readings of a counter, present and equal
same_count() { [ -n "$1" ] && [ "$1" = "$2" ]; }

# fault eng|s3 FAULT on|off: applies or clears one fault of one backend
fault() {
	local port=$EP pid=$SIMNS_PID
	[ "$1" = s3 ] && port=$SP pid=$S3_PID
	case $2:$3 in
	blackhole:on) nft_fault "$port" drop ;;
	reset:on) nft_fault "$port" reset ;;
	blackhole:off | reset:off) nft_fault "$port" none ;;
	stop:on) kill -STOP "$pid" ;;
	stop:off) kill -CONT "$pid" ;;
	trickle:on) fp "$1" '{"mode":"trickle","bps":200}' ;;
	stall:on) fp "$1" '{"mode":"stall"}' ;;
	# the simulator's own faults for the engine, the proxy's for S3
	garbage:on) [ "$1" = eng ] && simf '{"mode":"garbage"}' ||
		fp s3 '{"mode":"garbage","match":"list-type="}' ;;
	5xx:on) [ "$1" = eng ] && simf '{"mode":"5xx"}' ||
		fp s3 '{"mode":"percent","percent":100}' ;;
	*:off) [ "$1" = eng ] && simf '{"mode":"none"}'
		fp "$1" '{"mode":"none"}' ;;
	esac
}

NEXT=0 # index into SUPER: the next superseded checkpoint to delete
# engine FAULT: the engine-fault mount under one fault
engine() {
	local f=$1 L="engine $1" cid obj raw other i ok_rm
	FAULTS+=("$L")
	cid=${SUPER[$NEXT]}
	obj=$(obj_of "$cid")
	raw=$T/ckpt-local/$(raw_rel "$cid")
	# a job other than the FAILED one, for reads that need only storage
	other=$(ls "$T/ckpt-local" | grep -vx "$FAILED_ID" | sed -n "$((NEXT + 1))p")
	local p0=$(paused "$ME")
	fault eng "$f" on
	sleep 0.6 # older than engine_ttl and cache_ttl: the fault is met
	timed "$L" ls ls "$ME/jobs"
	check "[$L] ls jobs/: $ERR in ${DT} ms" answered OK
	timed "$L" stat stat "$ME/jobs/$FAILED_ID/status"
	check "[$L] stat status: $ERR in ${DT} ms" answered "${READ_ERRS[@]}"
	timed "$L" cat cat "$ME/jobs/$FAILED_ID/job.json"
	check "[$L] cat job.json: $ERR in ${DT} ms" answered "${READ_ERRS[@]}"
	timed "$L" du du -s "$ME/jobs/$FAILED_ID"
	check "[$L] du -s job: $ERR in ${DT} ms" answered OK
	timed "$L" rm rm "$ME/$CK/$cid/$obj"
	check "[$L] rm of a superseded checkpoint: EAGAIN (R3), got $ERR in ${DT} ms" \
		answered EAGAIN
	check "[$L] ... and the raw file is still there" test -f "$raw"
	# the engine client is left out of the endpoint pause
	check "[$L] no engine request is held back by the pause ($p0 -> $(paused "$ME"))" \
		same_count "$p0" "$(paused "$ME")"
	# a storage-only read is not slowed by the faulty engine
	local lo=$(ls "$ME/jobs/$other/pipelines/1/checkpoints" 2>/dev/null | grep -E '^[0-9]+$' | head -1)
	if [ -n "$lo" ]; then
		timed "$L" local cat "$ME/jobs/$other/pipelines/1/checkpoints/$lo/$(ls "$ME/jobs/$other/pipelines/1/checkpoints/$lo" | grep -vx info | head -1)"
		check "[$L] reading a local object is not slowed: $ERR in ${DT} ms" \
			bash -c "[ $RC = 0 ] && [ $DT -lt $FAST ]"
	else
		bad "[$L] job $other has a checkpoint to read"
	fi
	fault eng "$f" off
	# recovery: the same rm succeeds by itself within a bounded wait
	ok_rm=no
	for i in $(seq $RECOVER); do
		if rm "$ME/$CK/$cid/$obj" 2>/dev/null; then
			ok_rm=yes
			break
		fi
		sleep 0.25
	done
	check "[$L] recovers: the rm succeeds after the fault clears (try $i)" test $ok_rm = yes
	check "[$L] ... and the raw file is gone" test ! -e "$raw"
	NEXT=$((NEXT + 1))
	check "[$L] the daemon is alive" kill -0 "$ME_PID"
}

# s3 FAULT: the S3-fault mount under one fault
s3() {
	local f=$1 L="s3 $1" cid obj key j i ok_rm
	FAULTS+=("$L")
	cid=${SUPER[$NEXT]}
	obj=$(obj_of "$cid")
	key=$(raw_rel "$cid")
	j=$(echo "$ALL_IDS" | sed -n "$((NEXT + 1))p")
	local p0 p1
	p0=$(paused "$MS")
	fault s3 "$f" on
	sleep 0.6
	timed "$L" ls ls "$MS/$CK/$cid"
	check "[$L] ls of a checkpoint: $ERR in ${DT} ms" answered "${READ_ERRS[@]}"
	timed "$L" stat stat "$MS/$CK/$cid/$obj"
	check "[$L] stat of an object: $ERR in ${DT} ms" answered "${READ_ERRS[@]}"
	timed "$L" cat cat "$MS/$CK/${SUPER[$((NEXT + 1))]}/$(obj_of "${SUPER[$((NEXT + 1))]}")"
	check "[$L] cat of an object not read before: $ERR in ${DT} ms" answered "${READ_ERRS[@]}"
	timed "$L" du du -s "$MS/jobs/$FAILED_ID"
	check "[$L] du -s job: $ERR in ${DT} ms" answered_walk "${READ_ERRS[@]}"
	# a store that does not answer: the calls after the first one that met
	# it are held back and counted; one that answers (503s, garbage) or a
	# body that keeps coming pauses nothing
	p1=$(paused "$MS")
	case $f in
	blackhole | stop | reset)
		check "[$L] .stfs/stats counts the requests the pause held back ($p0 -> $p1)" \
			test "$p1" -gt "$p0" ;;
	garbage | 5xx)
		check "[$L] .stfs/stats: nothing held back by the pause ($p0 -> $p1)" \
			same_count "$p0" "$p1" ;;
	esac
	timed "$L" rm rm "$MS/$CK/$cid/$obj"
	local rrc=$RC rerr=$ERR
	check "[$L] rm of a superseded checkpoint: $ERR in ${DT} ms" answered "${READ_ERRS[@]}"
	fault s3 "$f" off
	# rm said OK => the object is gone; a failed rm may or may not have
	# reached the server (a DELETE whose answer was lost)
	if [ "$rrc" = 0 ]; then
		check "[$L] rm said OK and the object is gone from the bucket" not s3_has "$key"
	else
		ok "[$L] rm failed ($rerr); bucket has it: $(s3_has "$key" && echo yes || echo no)"
	fi
	fault s3 "$f" on
	# the engine's pseudo-files do not need S3: not slowed
	timed "$L" engine-only cat "$MS/jobs/$j/job.json"
	check "[$L] cat job.json of the local engine is not slowed: $ERR in ${DT} ms" \
		bash -c "[ $RC = 0 ] && [ $DT -lt $FAST ]"
	fault s3 "$f" off
	ok_rm=no
	for i in $(seq $RECOVER); do
		if cmp -s "$NS_DIR/$key" "$MS/$CK/$cid/$obj" 2>/dev/null; then
			ok_rm=yes
			break
		fi
		[ "$rrc" = 0 ] && ! s3_has "$key" && {
			ok_rm=yes
			break
		}
		sleep 0.25
	done
	check "[$L] recovers: the object reads back right (try $i)" test $ok_rm = yes
	if [ "$rrc" != 0 ]; then
		ok_rm=no
		for i in $(seq $RECOVER); do
			rm "$MS/$CK/$cid/$obj" 2>/dev/null && {
				ok_rm=yes
				break
			}
			s3_has "$key" || { ok_rm=gone; break; }
			sleep 0.25
		done
		check "[$L] recovers: the rm succeeds ($ok_rm, try $i)" test $ok_rm = yes
		check "[$L] ... and the object is gone from the bucket" not s3_has "$key"
	fi
	NEXT=$((NEXT + 1))
	check "[$L] the daemon is alive" kill -0 "$MS_PID"
}

t_start=$(date +%s)
for f in blackhole reset stop trickle stall garbage 5xx; do engine "$f"; done
NEXT=0
for f in blackhole reset stop trickle stall garbage 5xx; do s3 "$f"; done

echo
echo "worst latency (ms) and the errnos seen, per fault and operation (deadline ${TMO} ms):"
printf '%-18s' fault
OPS=(ls stat cat du rm local engine-only)
for op in "${OPS[@]}"; do printf ' %-16s' "$op"; done
echo
for L in "${FAULTS[@]}"; do
	printf '%-18s' "$L"
	for op in "${OPS[@]}"; do
		if [ -n "${WORST[$L,$op]}" ]; then
			printf ' %-16s' "${WORST[$L,$op]} ${WORST[$L,$op.err]// /,}"
		else
			printf ' %-16s' -
		fi
	done
	echo
done
echo "(suite took $(($(date +%s) - t_start)) s)"
STFS_PID=$MS_PID
unmount_stfs "$MS"
STFS_PID=$ME_PID
unmount_stfs "$ME"
finish
