#!/bin/bash
# The engine as deployed behind basic auth and HTTPS: the simulator with a
# certificate made here (openssl) and a basic-auth filter; stfs with
# engine_ca_file, engine_user and the password from a file or the
# environment (never argv).  The real 2.3.8 engine of test_engine.sh has
# neither (its Hazelcast REST endpoint has no auth and no TLS), so this runs
# against the simulator only.
. "$(dirname "$0")/lib.sh"

command -v openssl >/dev/null || {
	bad "openssl is needed (scripts/deps.sh installs it)"
	finish
	exit 1
}
STATE=$T/state
python3 "$ROOT/scripts/genstate.py" --out "$STATE" --jobs 6 --seed 13 \
	>"$T/gen.log" 2>&1 || { cat "$T/gen.log"; exit 1; }
openssl req -x509 -newkey rsa:2048 -nodes -days 2 -subj "/CN=127.0.0.1" \
	-addext "subjectAltName=IP:127.0.0.1" -keyout "$T/key.pem" \
	-out "$T/cert.pem" >"$T/openssl.log" 2>&1
check "made a certificate for 127.0.0.1" test -s "$T/cert.pem"
PW="pw-$RANDOM-s3cr3t"
pf=$T/sim.port
python3 "$ROOT/scripts/stsim.py" --scenario "$STATE/scenario.json" \
	--port 0 --port-file "$pf" --basic-auth "ops:$PW" \
	--tls-cert "$T/cert.pem" --tls-key "$T/key.pem" >"$T/sim.log" 2>&1 &
PIDS+=("$!")
for _ in $(seq 100); do [ -s "$pf" ] && break; sleep 0.05; done
PORT=$(cat "$pf")
URL=https://127.0.0.1:$PORT

check_eq "the simulator refuses a request without credentials (401)" 401 \
	"$(curl -s -o /dev/null -w '%{http_code}' --cacert "$T/cert.pem" "$URL/overview")"
check_eq "and answers with them (200)" 200 \
	"$(curl -s -o /dev/null -w '%{http_code}' --cacert "$T/cert.pem" -u "ops:$PW" "$URL/overview")"

# what the engine knows, asked directly
python3 - "$URL" "$PW" "$T/cert.pem" >"$T/engine.tsv" <<'PY'
import base64, json, ssl, sys, urllib.request
url, pw, ca = sys.argv[1:4]
ctx = ssl.create_default_context(cafile=ca)
hdr = {"Authorization": "Basic " + base64.b64encode(("ops:" + pw).encode()).decode()}
for p in ("/running-jobs", "/finished-jobs/"):
    d = json.load(urllib.request.urlopen(urllib.request.Request(url + p, headers=hdr), context=ctx, timeout=5))
    for j in d:
        print("%s\t%s" % (j["jobId"], j["jobStatus"]))
PY
want=$(sort "$T/engine.tsv")
states() { # states MNT: "<id>\t<state>" of every engine-known job
	local id
	for id in $(cut -f1 "$T/engine.tsv"); do
		printf '%s\t%s\n' "$id" \
			"$(getfattr --only-values -n user.stfs.state "$1/jobs/$id" 2>/dev/null)"
	done | sort
}
COMMON="checkpoint=file://$STATE/checkpoint/,engine=$URL,state_dir=$T/sd,timeout=2000,engine_ttl=0"

# 1. password from a file (0600), CA file: every state as the engine says
printf '%s\n' "$PW" >"$T/pw"
chmod 600 "$T/pw"
M1=$T/m1
mount_stfs "$M1" -o "$COMMON,engine_user=ops,engine_password_file=$T/pw,engine_ca_file=$T/cert.pem" ||
	{ finish; exit 1; }
check_eq "basic auth + HTTPS with a CA file: states as the engine says" "$want" "$(states "$M1")"
check "health says the engine is ok" grep -qE '^engine +ok' "$M1/.stfs/health"
check "the password is not in .stfs/config" bash -c "! grep -qF '$PW' '$M1/.stfs/config'"
check "the password is not in the daemon's argv" \
	bash -c "! tr '\\0' ' ' </proc/$STFS_PID/cmdline | grep -qF '$PW'"
unmount_stfs "$M1"

# 2. password from the environment
M2=$T/m2
STFS_ENGINE_PASSWORD=$PW mount_stfs "$M2" -o "$COMMON,engine_user=ops,engine_ca_file=$T/cert.pem" ||
	{ finish; exit 1; }
check_eq "password from STFS_ENGINE_PASSWORD" "$want" "$(states "$M2")"
unmount_stfs "$M2"

# 3. a wrong password: UNKNOWN states, degraded health, nothing deleted
printf 'wrong-password\n' >"$T/pw-bad"
chmod 600 "$T/pw-bad"
M3=$T/m3
mount_stfs "$M3" -o "$COMMON,engine_user=ops,engine_password_file=$T/pw-bad,engine_ca_file=$T/cert.pem" ||
	{ finish; exit 1; }
n_unknown=$(states "$M3" | awk -F'\t' '$2 == "UNKNOWN"' | wc -l)
check_eq "a wrong password: every job UNKNOWN" "$(wc -l <"$T/engine.tsv")" "$n_unknown"
check "a wrong password: the engine is degraded in .stfs/health" \
	grep -qE '^engine +degraded' "$M3/.stfs/health"
victim=$(find "$STATE/checkpoint" -name '*.ser' | head -1)
job=$(basename "$(dirname "$victim")")
obj=$(ls "$M3/jobs/$job/pipelines/"*/checkpoints/*/"$(basename "$victim")" 2>/dev/null | head -1)
if [ -n "$obj" ]; then
	rm -f "$obj" 2>"$T/rm.err"
	check_eq "rm while the engine refuses our credentials: EAGAIN" EAGAIN \
		"$(errno_of_msg <"$T/rm.err")"
else
	bad "found no object of job $job through the mount"
fi
check "the object is still in storage" test -f "$victim"
check "the wrong password is in no log line" \
	bash -c "! grep -rqF 'wrong-password' '$T'/stfs-*.log"
unmount_stfs "$M3"

# 4. without the CA file the certificate is not trusted: degraded, no data
M4=$T/m4
mount_stfs "$M4" -o "$COMMON,engine_user=ops,engine_password_file=$T/pw" ||
	{ finish; exit 1; }
check "an untrusted certificate: the engine is degraded" \
	grep -qE '^engine +degraded' "$M4/.stfs/health"
unmount_stfs "$M4"

# 5. a password file others can read is refused before mounting
chmod 644 "$T/pw"
out=$("$STFS" -f -o "$COMMON,engine_user=ops,engine_password_file=$T/pw" "$T/m5" 2>&1)
check "a password file readable by others is refused" \
	bash -c "grep -q 'readable by group or others' <<<\"\$1\"" _ "$out"
check "the refusal does not echo the password" bash -c "! grep -qF '$PW' <<<\"\$1\"" _ "$out"
check "nothing is mounted then" bash -c "! mountpoint -q '$T/m5'"

# 6. an engine_ca_file that is missing or holds no PEM certificate fails the
# mount at once, naming the file (it used to mount, then every engine call
# failed)
bad_engine_ca() { # NAME FILE WHY
	STFS_ENGINE_PASSWORD=$PW refused_mount "$1" "engine_ca_file $2: $3" \
		"$COMMON,engine_user=ops,engine_ca_file=$2"
	check "engine_ca_file $3: nothing is mounted" bash -c "! mountpoint -q '$T/$1'"
}
bad_engine_ca m6a "$T/none.pem" "No such file or directory"
head -c 300 /dev/urandom >"$T/junk.pem"
bad_engine_ca m6b "$T/junk.pem" "holds no PEM certificate"

check "no password in any stfs log" bash -c "! grep -rqF '$PW' '$T'/stfs-*.log"
finish
