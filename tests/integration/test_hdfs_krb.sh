#!/bin/bash
# The HDFS backend on a kerberized real HDFS (README "HDFS", Kerberos):
# Hadoop 3.5.0's MiniDFSCluster with a MiniKdc (scripts/hadoop.sh start DIR
# krb), SPNEGO on WebHDFS.  One cluster for every check: a mount with the
# user's keytab (no kinit) shows the same tree as file://, du -sb equals the
# raw bytes, reads are byte-identical, a released rm -r empties the job in
# HDFS itself; the delegation token is used, renewed, fetched again when
# cancelled, and found nowhere (log, .stfs/, argv, environment); a keytab
# with a stale key, or without the principal, gets EACCES with one clear
# log line and .stfs/health degraded.  STFS_BIN overrides the binary.
. "$(dirname "$0")/lib.sh"
STFS=${STFS_BIN:-$STFS}

need_hadoop

TMO=3000
STATE=$T/state
gen_state "$STATE" --jobs 8 --seed 5
NS=$STATE/checkpoint
HNS=/seatunnel/checkpoint
H=$T/hdfs
# tokens renewed every 20 s and tickets of 15 s, so that a renewal and new
# tickets from the keytab happen during the suite
STFS_HDFS_TOKEN_RENEW_MS=20000 STFS_KRB_TICKET_S=15 start_hdfs "$H" krb
rd() { sed -n "s/^$1=//p" "$H/ready"; }
HP=$(rd http)
PRINC=$(rd principal)
KT=$(rd keytab)
export KRB5_CONFIG
KRB5_CONFIG=$(rd krb5conf)
ok "a kerberized HDFS (MiniDFSCluster + MiniKdc) is up: http $HP, $PRINC"
hfiles() { "$ROOT/scripts/hadoop.sh" files "$H" "$HNS/$1"; }

# without any credentials the namenode refuses (the cluster really is kerberized)
code=$(curl -s -o /dev/null -w '%{http_code}' "http://localhost:$HP/webhdfs/v1/?op=LISTSTATUS&user.name=stfs")
check_eq "WebHDFS without Kerberos is refused" 401 "$code"

"$ROOT/scripts/hadoop.sh" put "$H" "$NS" "$HNS" >/dev/null
check_eq "HDFS holds the generated files and sizes" \
	"$(cd "$NS" && find . -type f -printf '%P %s\n' | sort)" "$(hfiles "" | sort)"
# the cluster's own tickets (15 s, as the daemon's) run out while it idles:
# its helper still answers (a relogin from its keytab), within a minute
sleep 20
check_eq "hadoop.sh files answers after the cluster's own tickets ran out" \
	"$(cd "$NS" && find . -type f -printf '%P %s\n' | sort)" \
	"$(timeout 60 "$ROOT/scripts/hadoop.sh" files "$H" "$HNS" | sort)"

remote_jobs "$STATE" "$NS"
remote_ref "$STATE" "$NS" "$TMO"
# mount_krb MNT STATE_DIR KEYTAB: webhdfs://localhost (the HTTP/localhost principal)
mount_krb() {
	mount_stfs "$1" -o "checkpoint=webhdfs://localhost:$HP$HNS/,kerberos_principal=$PRINC,kerberos_keytab=$3,state_dir=$2,log_level=debug,storage_ttl=1000,$COMMON"
}

M=$T/hk
mount_krb "$M" "$T/sd-hk" "$KT" || {
	bad "a mount with the keytab"
	finish
	exit 1
}
MPID=$STFS_PID
LOG=$T/stfs-hk.log
check_eq "jobs/ is the union of storage and engine" "$WANT_JOBS" "$(ls "$M/jobs" | sort)"
L1=$(listing "$T/mloc")
check "checkpoint files are listed ($(echo "$L1" | grep -c .))" test -n "$L1"
check_eq "the same checkpoint files and sizes as file://" "$L1" "$(listing "$M")"
errs=0
while read -r p _; do cmp -s "$T/mloc/jobs/$p" "$M/jobs/$p" || errs=$((errs + 1)); done <<<"$L1"
check_eq "the same bytes in every checkpoint file (OPEN through the datanode)" 0 "$errs"
errs=0 n=0
for id in $storage_ids; do
	[ -n "$(find "$NS/$id" -mindepth 1 -type d -print -quit)" ] && continue
	raw=$(hfiles "$id" | awk '{s+=$2} END {print s+0}')
	mnt=$(du -sb --exclude=latest --exclude=status --exclude=info "$M/jobs/$id/pipelines" | cut -f1)
	n=$((n + 1))
	[ "$raw" == "$mnt" ] || { echo "    $id: raw $raw, mount $mnt"; errs=$((errs + 1)); }
done
check_eq "du -sb of pipelines/ equals the raw bytes in HDFS ($n jobs)" 0 "$errs"
check "no HTTP 401 while authenticated" bash -c "! grep -q 'HTTP 401' '$LOG'"
check ".stfs/config: kerberos, the principal, a delegation token held" \
	grep -q "hdfs_auth = kerberos (principal $PRINC" "$M/.stfs/config"
check ".stfs/config: the delegation token is held (not shown)" \
	grep -q "hdfs_delegation_token = held" "$M/.stfs/config"

# -- deletion by the rules, checked in HDFS itself ----------------------------
check "release of a FAILED job" bash -c "echo release > '$M/jobs/$REL_ID/restore'"
check "the released job has files in HDFS before rm" test "$(hfiles "$REL_ID")" != absent
rm -r "$M/jobs/$REL_ID" 2>"$T/rm.err"
check "rm -r of the released job exits 0" test $? = 0 -a ! -s "$T/rm.err"
check_eq "the job's directory is gone from HDFS" absent "$(hfiles "$REL_ID")"
before=$(hfiles "$RUN_ID")
check "rm -r of a RUNNING job fails with EBUSY" \
	fails_with 'Device or resource busy' rm -rf "$M/jobs/$RUN_ID"
check_eq "nothing of the RUNNING job was deleted" "$before" "$(hfiles "$RUN_ID")"

# -- the delegation token: renewed, found nowhere, fetched again -------------
for _ in $(seq 150); do
	r=$(sed -n 's/.*(\([0-9]*\) fetched, \([0-9]*\) renewals).*/\2/p' "$M/.stfs/config")
	[ "${r:-0}" -ge 2 ] && break
	ls "$M/jobs/$ORPH_ID/pipelines" >/dev/null 2>&1
	sleep 0.1
done
check "the token is renewed before it expires (${r:-0} renewals)" test "${r:-0}" -ge 2
toks=$("$ROOT/scripts/hadoop.sh" tokens "$H")
check "the namenode holds the daemon's delegation token ($(echo "$toks" | grep -c .))" test -n "$toks"
found=0
for t in $toks; do
	for f in "$LOG" "$M"/.stfs/* /proc/"$MPID"/cmdline /proc/"$MPID"/environ; do
		[ -f "$f" ] && grep -qaF "$t" "$f" && { echo "    token in $f"; found=$((found + 1)); }
	done
	grep -rqaF "$t" "$T/sd-hk" && { echo "    token in state_dir"; found=$((found + 1)); }
done
check_eq "the token is in no log, pseudo-file, argv, environment or state file" 0 "$found"
# cancel it behind the daemon's back: the next call is refused, a new one fetched
for t in $toks; do
	KRB5_CLIENT_KTNAME=$KT KRB5CCNAME=MEMORY:t curl -s -o /dev/null --negotiate -u : -X PUT \
		"http://localhost:$HP/webhdfs/v1/?op=CANCELDELEGATIONTOKEN&token=$t"
done
# the daemon may already hold a new token (a call refused meanwhile fetches
# one): what must be gone are the tokens cancelled
left=$("$ROOT/scripts/hadoop.sh" tokens "$H")
still=0
for t in $toks; do grep -qxF "$t" <<<"$left" && still=$((still + 1)); done
check_eq "the tokens were cancelled at the namenode" 0 "$still"
sleep 1.2 # past the listing cache
errs=0
for id in $storage_ids; do
	[ "$id" == "$REL_ID" ] && continue
	ls -lR "$M/jobs/$id/pipelines" >/dev/null 2>>"$T/ls-after.err" || errs=$((errs + 1))
done
check_eq "ls -lR works after the token was cancelled" 0 "$errs"
for _ in $(seq 50); do
	grep -q "(2 fetched" "$M/.stfs/config" && break
	sleep 0.1
done
check "a new token was fetched" grep -q "(2 fetched" "$M/.stfs/config"
check_eq "no call failed meanwhile" "" "$(cat "$T/ls-after.err")"
check "the refusal was logged without the token" grep -q "refused the delegation token" "$LOG"
unmount_stfs "$M"

# -- wrong keytabs: EACCES, one clear log line, health degraded --------------
wrong() { # wrong NAME KEYTAB DESC
	local m=$T/$1 lg=$T/stfs-$1.log
	mount_krb "$m" "$T/sd-$1" "$2" || {
		bad "a mount with $3 still mounts"
		return
	}
	check "$3: ls of a job's checkpoints fails with EACCES" \
		fails_with 'Permission denied' ls "$m/jobs/$RUN_ID/pipelines/$rp/checkpoints"
	check "$3: one clear log line names the principal and the keytab" \
		grep -q "Kerberos: .* for $PRINC with keytab $2; calls will be refused" "$lg"
	check "$3: .stfs/health is degraded" grep -qi degraded "$m/.stfs/health"
	unmount_stfs "$m"
}
rp=$(ls "$T/mloc/jobs/$RUN_ID/pipelines" | grep -E '^[0-9]+$' | head -1)
wrong hw "$(rd wrong_keytab)" "a keytab with a stale key"
wrong ho "$(rd other_keytab)" "a keytab of another principal"

"$ROOT/scripts/hadoop.sh" stop "$H"
finish
