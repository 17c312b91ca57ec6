#!/bin/bash
# The HDFS backend over swebhdfs:// on a real TLS namenode: Hadoop 3.5.0's
# MiniDFSCluster with dfs.http.policy HTTPS_ONLY (scripts/hadoop.sh start
# DIR tls), on a PKCS12 keystore made here with openssl (a private CA, a
# server certificate for localhost and 127.0.0.1); OPEN's 307 then points at
# the datanode's https port.  Mounted with ca_file=: the listing and the
# bytes against the same namespace through file:// (also mounted from a
# seatunnel.yaml with dfs.http.policy HTTPS_ONLY), du against the raw
# bytes, an rm by the rules checked with WebHDFS GETFILESTATUS (curl
# --cacert) and an EPERM that leaves the object; without the CA file and
# with another CA: a clear log line, no data, no deletion, and not one retry
# per request; no secret in the logs.  STFS_BIN overrides the binary.
. "$(dirname "$0")/lib.sh"
STFS=${STFS_BIN:-$STFS}

need_hadoop
command -v openssl >/dev/null || {
	bad "openssl is needed (scripts/deps.sh installs it)"
	finish
	exit 1
}

TMO=3000 # request deadline of every mount, ms
HU=stfs
# -- certificates: a private CA signing the server's, and another CA ---------
C=$T/tls
mkdir -p "$C"
KSPASS="ks-$RANDOM$RANDOM-s3cr3t"
{
	openssl req -x509 -newkey rsa:2048 -nodes -days 2 -subj "/CN=stfs test CA" \
		-keyout "$C/ca.key" -out "$C/ca.pem" &&
		openssl req -newkey rsa:2048 -nodes -subj "/CN=localhost" \
			-keyout "$C/srv.key" -out "$C/srv.csr" &&
		printf 'subjectAltName=DNS:localhost,IP:127.0.0.1\nextendedKeyUsage=serverAuth\n' >"$C/ext" &&
		openssl x509 -req -days 2 -in "$C/srv.csr" -CA "$C/ca.pem" -CAkey "$C/ca.key" \
			-CAcreateserial -extfile "$C/ext" -out "$C/srv.pem" &&
		openssl pkcs12 -export -in "$C/srv.pem" -inkey "$C/srv.key" -name server \
			-out "$C/server.p12" -passout "pass:$KSPASS" &&
		openssl req -x509 -newkey rsa:2048 -nodes -days 2 -subj "/CN=another CA" \
			-keyout "$C/other.key" -out "$C/other.pem"
} >"$T/openssl.log" 2>&1
check "made a CA, a server keystore for localhost/127.0.0.1 and another CA" \
	test -s "$C/server.p12" -a -s "$C/other.pem"

STATE=$T/state
gen_state "$STATE" --jobs 10 --seed 3
NS=$STATE/checkpoint
HNS=/seatunnel/checkpoint

H=$T/hdfs
STFS_HDFS_KEYSTORE=$C/server.p12 STFS_HDFS_KEYSTORE_PASS=$KSPASS start_hdfs "$H" tls
HP=$(sed -n 's/^https=//p' "$H/ready")
DNP=$(sed -n 's/^dn_https=//p' "$H/ready")
NN=https://127.0.0.1:$HP
ok "a real HDFS over HTTPS only is up: namenode https $HP, datanode https $DNP"
"$ROOT/scripts/hadoop.sh" put "$H" "$NS" "$HNS" >"$T/put.log" 2>&1
hdfs_files() { "$ROOT/scripts/hadoop.sh" files "$H" "$HNS/$1"; }
check_eq "HDFS holds the generated namespace" \
	"$(cd "$NS" && find . -type f -printf '%P %s\n' | sort)" "$(hdfs_files "" | sort)"
# wh GETFILESTATUS-or-other-op PATH [CURL-ARGS...]: a WebHDFS call with curl
wh() {
	curl -s -m 10 --cacert "$C/ca.pem" "${@:3}" "$NN/webhdfs/v1$2?op=$1&user.name=$HU"
}
# st PATH: the HTTP status of GETFILESTATUS on PATH (200, 404)
st() { wh GETFILESTATUS "$1" -o /dev/null -w '%{http_code}'; }
check_eq "curl trusts the namenode with the CA (GETFILESTATUS of the root: 200)" 200 "$(st /)"
check "plain curl (the system store) does not trust it" \
	bash -c "! curl -s -m 10 -o /dev/null '$NN/webhdfs/v1/?op=GETFILESTATUS&user.name=$HU'"
loc=$(wh OPEN "$HNS/$(cd "$NS" && find . -type f -name '*.ser' -printf '%P\n' | head -1)" \
	-o /dev/null -w '%{redirect_url}')
check "OPEN redirects to the datanode's https port ($loc)" \
	grep -q "^https://127.0.0.1:$DNP/" <<<"$loc"

remote_jobs "$STATE" "$NS"
remote_ref "$STATE" "$NS" "$TMO"
# mount_tls MNT [EXTRA_OPTS]: swebhdfs:// on the namenode's https port
mount_tls() {
	mount_stfs "$1" -o "checkpoint=swebhdfs://127.0.0.1:$HP$HNS/,hdfs_user=$HU,state_dir=$T/sd,$COMMON${2:+,$2}"
}

M=$T/mt
mount_tls "$M" "ca_file=$C/ca.pem" || {
	bad "swebhdfs:// mount with ca_file"
	finish
	exit 1
}
ok "swebhdfs:// mount with ca_file="
check_eq "jobs/ is the union of storage and engine" "$WANT_JOBS" "$(ls "$M/jobs" | sort)"
L1=$(listing "$T/mloc")
check "checkpoint files are listed ($(echo "$L1" | grep -c .))" test -n "$L1"
check_eq "the same checkpoint files and sizes as file://" "$L1" "$(listing "$M")"
errs=0 n=0
while read -r p _; do
	n=$((n + 1))
	want=$NS/${p%%/*}/$(basename "$p")
	[ "$(basename "$p")" = info ] && want=$T/mloc/jobs/$p # a decoded summary
	cmp -s "$want" <(cat "$M/jobs/$p") || {
		echo "    differs: $p"
		errs=$((errs + 1))
	}
done <<<"$(sed 's|^\./||' <<<"$L1")"
check_eq "cat of every checkpoint file ($n) gives the bytes written (307 to https)" 0 "$errs"
check_du_raw "$M" "$NS" hdfs_files

# yaml_mount NAME YAML WHAT: a mount from the seatunnel.yaml YAML (WHAT
# says what it holds) talks swebhdfs:// to the https port and lists what
# file:// lists
yaml_mount() {
	local pid=$STFS_PID
	if mount_stfs "$T/$1" -o "seatunnel_yaml=$2,ca_file=$C/ca.pem,hdfs_user=$HU,state_dir=$T/sd-$1,$COMMON"; then
		check "$3: its checkpoint is swebhdfs:// on the https port (.stfs/config)" \
			grep -qF "swebhdfs://127.0.0.1:$HP$HNS/" "$T/$1/.stfs/config"
		check_eq "$3: it lists the same checkpoint files and sizes as file://" "$L1" "$(listing "$T/$1")"
		unmount_stfs "$T/$1"
	else
		bad "mount from a seatunnel.yaml: $3"
	fi
	STFS_PID=$pid
}

# -- the same from the operator's seatunnel.yaml (README "HDFS", TLS):
# dfs.http.policy HTTPS_ONLY gives swebhdfs:// on the namenode's
# https-address, its wildcard host replaced by fs.defaultFS's
plugin_yaml "$T/seatunnel.yaml" "namespace: $HNS/" "storage.type: hdfs" \
	"fs.defaultFS: hdfs://127.0.0.1:$(sed -n 's/^rpc=//p' "$H/ready")" \
	"seatunnel.hadoop.dfs.http.policy: HTTPS_ONLY" \
	"seatunnel.hadoop.dfs.namenode.https-address: 0.0.0.0:$HP"
yaml_mount my "$T/seatunnel.yaml" "seatunnel.hadoop.dfs.http.policy HTTPS_ONLY"
# -- the same keys in the hdfs-site.xml its hdfs_site_path names (README
# "HDFS"): read as the engine reads them
cat >"$T/hdfs-site.xml" <<EOF
<?xml version="1.0"?>
<configuration>
  <property><name>dfs.http.policy</name><value>HTTPS_ONLY</value></property>
  <property>
    <name>dfs.namenode.https-address</name>
    <value>0.0.0.0:$HP</value>
  </property>
</configuration>
EOF
plugin_yaml "$T/seatunnel-site.yaml" "namespace: $HNS/" "storage.type: hdfs" \
	"fs.defaultFS: hdfs://127.0.0.1:$(sed -n 's/^rpc=//p' "$H/ready")" \
	"hdfs_site_path: $T/hdfs-site.xml"
yaml_mount ms "$T/seatunnel-site.yaml" "HTTPS_ONLY and the https-address in hdfs_site_path's file"

# -- deletion by the rules, checked with GETFILESTATUS over https -------------
check "release of a FAILED job" bash -c "echo release > '$M/jobs/$REL_ID/restore'"
rp=$(ls "$M/jobs/$REL_ID/pipelines" | grep -E '^[0-9]+$' | head -1)
cid=$(ls "$M/jobs/$REL_ID/pipelines/$rp/checkpoints" | grep -E '^[0-9]+$' | head -1)
obj=$(ls "$M/jobs/$REL_ID/pipelines/$rp/checkpoints/$cid" | grep -vx info | head -1)
raw=$HNS/$REL_ID/$obj
check_eq "the released job's object $obj is in HDFS before rm" 200 "$(st "$raw")"
rm -f "$M/jobs/$REL_ID/pipelines/$rp/checkpoints/$cid/$obj" 2>"$T/rm.err"
check "rm of it exits 0" test $? = 0 -a ! -s "$T/rm.err"
check_eq "GETFILESTATUS: it is gone from HDFS (404)" 404 "$(st "$raw")"
check "the answer is HDFS's FileNotFoundException" \
	bash -c "grep -q FileNotFoundException <<<\"\$(curl -s -m 10 --cacert '$C/ca.pem' '$NN/webhdfs/v1$raw?op=GETFILESTATUS&user.name=$HU')\""
left_rel=$(hdfs_files "$REL_ID")
check "the job's other objects are still there" test -n "$left_rel"

pp=$(ls "$M/jobs/$PROT_ID/pipelines" | grep -E '^[0-9]+$' | head -1)
pobj=$(ls "$M/jobs/$PROT_ID/pipelines/$pp/checkpoints/latest/" | grep '\.ser$' | head -1)
praw=$HNS/$PROT_ID/$pobj
plen=$(wh GETFILESTATUS "$praw" | python3 -c 'import json,sys; print(json.load(sys.stdin)["FileStatus"]["length"])')
check "rm of an unreleased restore point fails with EPERM" \
	fails_with 'Operation not permitted' rm -f "$M/jobs/$PROT_ID/pipelines/$pp/checkpoints/latest/$pobj"
check_eq "GETFILESTATUS: the restore point is still in HDFS (200)" 200 "$(st "$praw")"
check_eq "with its length ($plen bytes)" "$plen" \
	"$(wh GETFILESTATUS "$praw" | python3 -c 'import json,sys; print(json.load(sys.stdin)["FileStatus"]["length"])')"
check "the good mount logged no WebHDFS warning" \
	bash -c "! grep -E 'webhdfs: ' '$T/stfs-mt.log'"
unmount_stfs "$M"

# -- an untrusted certificate: no CA file, then another CA --------------------
retries() { sed -n 's/^stfs_http_retries_total //p' "$1/.stfs/stats"; }
# untrusted NAME DESC WHO [EXTRA_OPTS]: the mount shows no data, says why
# (curl's reason and WHO did not trust the certificate), deletes nothing (the
# released job's objects, same state_dir), asks each URL once
untrusted() {
	local mnt=$T/$1 log=$T/stfs-$1.log desc=$2 who=$3 out t0 dt
	mount_tls "$mnt" "$4" || {
		bad "$desc: the mount starts"
		return
	}
	t0=$(date +%s%N)
	out=$(ls "$mnt/jobs/$REL_ID/pipelines/$rp/checkpoints" 2>&1)
	dt=$(ms_since "$t0")
	check "$desc: ls of a checkpoint directory fails with EIO (${out:0:60}…)" \
		grep -q 'Input/output error' <<<"$out"
	check "$desc: the log says why: refused with $who" \
		grep -qF -e "certificate is refused with $who" "$log"
	check "$desc: ... with curl's reason" \
		grep -qE "webhdfs: LISTSTATUS_BATCH .*SSL certificate problem: [a-z]" "$log"
	rm -rf "$mnt/jobs/$REL_ID" 2>"$T/$1-rm.err"
	check "$desc: rm -r of the released job fails" test -s "$T/$1-rm.err"
	check_eq "$desc: nothing of the job was deleted in HDFS" "$left_rel" "$(hdfs_files "$REL_ID")"
	check "$desc: .stfs/health shows the storage degraded" \
		grep -qiE 'degraded' "$mnt/.stfs/health"
	# the mount's first listing, the ls and the rm each met the refusal
	check_eq "$desc: a refused certificate is not retried (the ls took ${dt} ms)" \
		0 "$(retries "$mnt")"
	unmount_stfs "$mnt"
}
untrusted mnone "without ca_file" "the system CA store"
untrusted mother "ca_file of another CA" "the CA file $C/other.pem" "ca_file=$C/other.pem"

# -- a CA file that cannot be used is refused at mount -----------------------
# bad_ca NAME FILE WHY: the mount fails, saying which file and why
bad_ca() {
	refused_mount "$1" "ca_file $2: $3" \
		"checkpoint=swebhdfs://127.0.0.1:$HP$HNS/,hdfs_user=$HU,state_dir=$T/sd,$COMMON,ca_file=$2"
}
bad_ca mbad1 "$T/none.pem" "No such file or directory"
head -c 300 /dev/urandom >"$T/junk.pem"
bad_ca mbad2 "$T/junk.pem" "holds no PEM certificate"
check_eq "nothing was deleted meanwhile" "$left_rel" "$(hdfs_files "$REL_ID")"

# -- no secret in the logs ----------------------------------------------------
check "no keystore password, query string or user.name in the mounts' logs" \
	bash -c "! grep -E -e '$KSPASS' -e '[?&](op|user\\.name|delegation)=' '$T'/stfs-*.log"

"$ROOT/scripts/hadoop.sh" stop "$H"
finish
