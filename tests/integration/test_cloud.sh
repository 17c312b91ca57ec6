#!/bin/bash
# Cloud identities on real mounts (README "Object stores", issue 15): an
# s3:// namespace on the SigV4-verifying s3rver fork, wrapped by
# tests/integration/sts_s3.js so that it checks temporary credentials as AWS
# does (the session token must be sent, signed; expired and rotated-away keys
# are refused), mounted with credentials from each provider:
#   env        AWS_ACCESS_KEY_ID/SECRET/SESSION_TOKEN, provider named
#              EnvironmentVariableCredentialsProvider (wrong token: refused)
#   profile    a 0600 shared credentials file, AWS_PROFILE, the default chain
#   container  the ECS endpoint (tests/integration/credsrv.py, a stand-in:
#              amazon-ecs-local-container-endpoints is not on the module
#              proxy) with its authorization token; credentials that live 6 s
#              are rotated, expired, revoked, refused and stalled while a
#              walker reads every checkpoint: no call may fail
#   instance   AWS's amazon-ec2-metadata-mock (go install), IMDSv2 only,
#              from a seatunnel.yaml naming InstanceProfileCredentialsProvider
#   gcs        gs:// through the JSON API of fake-gcs-server (go install):
#              a service-account key from the yaml (its JWT verified by the
#              token endpoint of credsrv.py against the test's key pair; a
#              foreign key refused), GOOGLE_APPLICATION_CREDENTIALS with a
#              token living 4 s (refreshed), the GCE metadata server
# and no secret in any log, .stfs/config or argv.  Needs node/npm, go and
# openssl.
. "$(dirname "$0")/lib.sh"
STFS=${STFS_BIN:-$STFS}

for tool in node npm go; do
	command -v $tool >/dev/null || {
		# their absence is a broken machine, not a pass
		bad "$tool is needed (scripts/deps.sh installs node and npm; go is the machine's)"
		finish
		exit 1
	}
done
NPM_DIR=${STFS_NPM_DIR:-$HOME/.cache/stfs-npm}
GOBIN_DIR=${STFS_GO_DIR:-$HOME/.cache/stfs-go}/bin
AEMM=$GOBIN_DIR/ec2-metadata-mock
if [ ! -x "$AEMM" ]; then
	GOBIN=$GOBIN_DIR go install \
		github.com/aws/amazon-ec2-metadata-mock/cmd/ec2-metadata-mock@v1.13.0 \
		>"$T/go-install.log" 2>&1 || {
		tail -5 "$T/go-install.log"
		bad "go install amazon-ec2-metadata-mock"
	}
fi
if [ ! -f "$NPM_DIR/node_modules/@20minutes/s3rver/lib/s3rver.js" ]; then
	# scripts/s3rver.sh installs the fork once
	p=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
	"$ROOT/scripts/s3rver.sh" start "$T/s3inst" "$p" --verify >/dev/null &&
		"$ROOT/scripts/s3rver.sh" stop "$T/s3inst"
fi

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
# nothing in this suite may reach a real metadata service
export AWS_EC2_METADATA_DISABLED=true AWS_SHARED_CREDENTIALS_FILE=$T/none \
	AWS_CONFIG_FILE=$T/none
unset AWS_ACCESS_KEY_ID AWS_SECRET_ACCESS_KEY AWS_SESSION_TOKEN AWS_PROFILE \
	AWS_CONTAINER_CREDENTIALS_RELATIVE_URI AWS_CONTAINER_CREDENTIALS_FULL_URI \
	AWS_CONTAINER_AUTHORIZATION_TOKEN AWS_EC2_METADATA_SERVICE_ENDPOINT

STATE=$T/state
python3 "$ROOT/scripts/genstate.py" --out "$STATE" --jobs 4 --seed 5 \
	>"$T/gen.log" 2>&1 || { cat "$T/gen.log"; exit 1; }
NS=$STATE/checkpoint
PREFIX=seatunnel/checkpoint
start_sim "$STATE/scenario.json" a
COMMON="engine=http://127.0.0.1:$SIM_PORT_a,imap=file://$STATE/imap/,timeout=2000,orphan_grace=10m"

# the S3 server with its keys file and request log
KEYS=$T/keys.json
SLOG=$T/s3-requests.log
: >"$SLOG"
SECRETS=(env-secret env-token-1 prof-secret prof-token ecs-auth-xyz
	imds-secret-1 imds-token-1)
keys() { # keys AK SK TOKEN FLAG ...: rewrite the keys file (FLAG - or expired)
	python3 - "$KEYS" "$@" <<-'EOF'
	import json, os, sys
	out, a = sys.argv[1], sys.argv[2:]
	d = {a[i]: {"sk": a[i + 1], "token": a[i + 2], "expired": a[i + 3] == "expired"}
	     for i in range(0, len(a) - 3, 4)}
	open(out + ".tmp", "w").write(json.dumps(d))
	os.rename(out + ".tmp", out)
	EOF
}
ENVK=(ASIAENV env-secret env-token-1 -)
PROFK=(ASIAPROF prof-secret prof-token -)
IMDSK=(ASIAIMDS1 imds-secret-1 imds-token-1 -)
ecsk() { echo "ASIAECS$1 ecs-secret-$1 ecs-token-$1 ${2:--}"; }
# shellcheck disable=SC2046
keys "${ENVK[@]}" "${PROFK[@]}" "${IMDSK[@]}" $(ecsk 1)

SD=$T/s3srv
SP=$(free_port)
mkdir -p "$SD"
(cd "$NPM_DIR" && exec node --openssl-legacy-provider "$ROOT/tests/integration/sts_s3.js" \
	"$NPM_DIR" "$SD" "$SP" "$KEYS" "$SLOG") >"$T/sts_s3.log" 2>&1 &
PIDS+=("$!")
for _ in $(seq 100); do
	curl -s -o /dev/null -m 1 "http://127.0.0.1:$SP/" && break
	sleep 0.1
done
SIG=(--aws-sigv4 aws:amz:us-east-1:s3 --user S3RVER:S3RVER
	-H x-amz-content-sha256:UNSIGNED-PAYLOAD)
up=$(
	cd "$NS" && find . -type f | sed 's|^\./||' | while read -r rel; do
		curl -s -o /dev/null -w '%{http_code}\n' "${SIG[@]}" -T "$rel" \
			"http://127.0.0.1:$SP/ckpt/$PREFIX/$rel"
	done | sort -u | tr -d '\n'
)
check_eq "namespace uploaded to the verifying S3 (all 200)" 200 "$up"
# s3rver lists a prefix holding only prefixes when a marker object exists
(cd "$NS" && find . -mindepth 1 -type d | sed 's|^\./||') | while read -r d; do
	curl -s -o /dev/null "${SIG[@]}" -X PUT --data-binary '' \
		"http://127.0.0.1:$SP/ckpt/$PREFIX/$d/"
done

mount_stfs "$T/mloc" -o "checkpoint=file://$NS/,state_dir=$T/sd-loc,$COMMON" || {
	finish
	exit 1
}
LOC_PID=$STFS_PID
listing() { (cd "$1/jobs" && find . -path '*checkpoints*' -type f -printf '%p %s\n' | sort); }
WANT=$(listing "$T/mloc")
ONE=$(cd "$T/mloc/jobs" && find . -path '*checkpoints*' -type f | sort | head -1)
[ -n "$ONE" ] || bad "the generated namespace has checkpoint files"

S3OPTS="checkpoint=s3://ckpt/$PREFIX/,endpoint=http://127.0.0.1:$SP,region=us-east-1,path_style"
okcount() { grep -c "^OK $1\$" "$SLOG"; }
refcount() { grep -c "^REFUSED [A-Za-z0-9]* $1\$" "$SLOG"; }
# provider_mount NAME SRC AK [OPTS]: mount, compare with file://, check
# .stfs/config names SRC, check the server saw AK signed with its token
provider_mount() {
	local name=$1 src=$2 ak=$3 opts=$4 m=$T/m-$1 cfg
	local before
	before=$(okcount "$ak")
	if ! mount_stfs "$m" -o "$S3OPTS,state_dir=$T/sd-$name,$COMMON${opts:+,$opts}"; then
		bad "[$name] mount"
		return 1
	fi
	check_eq "[$name] the listing equals the file:// mount's" "$WANT" "$(listing "$m")"
	check "[$name] a checkpoint reads the same bytes" cmp -s "$T/mloc/jobs/$ONE" "$m/jobs/$ONE"
	cfg=$(cat "$m/.stfs/config")
	echo "$cfg" >"$T/config-$name.txt"
	check "[$name] .stfs/config names the provider ($src)" \
		grep -q "^credentials = $src" <<<"$cfg"
	check "[$name] .stfs/config says when they expire" \
		grep -qE '^credentials_expire = (never|20[0-9-]+T)' <<<"$cfg"
	check "[$name] the store saw $ak's signed requests with its token" \
		test "$(okcount "$ak")" -gt "$before"
	check_eq "[$name] nothing was refused" 0 "$(refcount "$ak")"
	unmount_stfs "$m"
}

# ---- env --------------------------------------------------------------------
echo "# env"
AWS_ACCESS_KEY_ID=ASIAENV AWS_SECRET_ACCESS_KEY=env-secret AWS_SESSION_TOKEN=env-token-1 \
	provider_mount env "env" ASIAENV \
	"aws_credentials_provider=com.amazonaws.auth.EnvironmentVariableCredentialsProvider"
# the server really checks the token: a wrong one is refused
if AWS_ACCESS_KEY_ID=ASIAENV AWS_SECRET_ACCESS_KEY=env-secret AWS_SESSION_TOKEN=forged \
	mount_stfs "$T/m-envbad" -o "$S3OPTS,state_dir=$T/sd-envbad,$COMMON,aws_credentials_provider=env"; then
	check "[env] a forged session token: no checkpoint is listed" \
		test -z "$(listing "$T/m-envbad" 2>/dev/null)"
	check "[env] ... and the store refused it (InvalidToken)" \
		grep -q "^REFUSED InvalidToken ASIAENV" "$SLOG"
	unmount_stfs "$T/m-envbad"
else
	bad "[env] mount with a forged token"
fi

# ---- profile ------------------------------------------------------------------
echo "# profile"
mkdir -p "$T/aws"
printf '[default]\naws_access_key_id = NOPE\naws_secret_access_key = NOPE\n[ops]\naws_access_key_id = ASIAPROF\naws_secret_access_key = prof-secret\naws_session_token = prof-token\n' \
	>"$T/aws/credentials"
chmod 600 "$T/aws/credentials"
AWS_SHARED_CREDENTIALS_FILE=$T/aws/credentials AWS_PROFILE=ops \
	provider_mount profile "profile (profile ops)" ASIAPROF ""
chmod 644 "$T/aws/credentials"
if AWS_SHARED_CREDENTIALS_FILE=$T/aws/credentials AWS_PROFILE=ops \
	mount_stfs "$T/m-profbad" -o "$S3OPTS,state_dir=$T/sd-profbad,$COMMON,aws_credentials_provider=profile" 2>/dev/null; then
	bad "[profile] a credentials file readable by others is refused"
	unmount_stfs "$T/m-profbad"
else
	check "[profile] a credentials file readable by others is refused (says chmod 600)" \
		grep -q "chmod 600" "$T/stfs-m-profbad.log"
fi

# ---- instance (amazon-ec2-metadata-mock, IMDSv2 only) ---------------------------
echo "# instance"
if [ -x "$AEMM" ]; then
	AP=$(free_port)
	mkdir -p "$T/aemm"
	cat >"$T/aemm/cfg.json" <<-EOF
	{"imdsv2": true, "server": {"hostname": "127.0.0.1", "port": "$AP"},
	 "metadata": {"values": {"iam-security-credentials-role": "stfs-role",
	  "iam-security-credentials": {"Code": "Success", "LastUpdated": "2026-01-01T00:00:00Z",
	   "Type": "AWS-HMAC", "AccessKeyId": "ASIAIMDS1", "SecretAccessKey": "imds-secret-1",
	   "Token": "imds-token-1", "Expiration": "$(date -u -d '+6 hours' +%Y-%m-%dT%H:%M:%SZ)"}}}}
	EOF
	(cd "$T/aemm" && HOME=$T/aemm exec "$AEMM" -c "$T/aemm/cfg.json") >"$T/aemm/log" 2>&1 &
	PIDS+=("$!")
	for _ in $(seq 100); do
		curl -s -o /dev/null -m 1 -X PUT -H 'X-aws-ec2-metadata-token-ttl-seconds: 60' \
			"http://127.0.0.1:$AP/latest/api/token" && break
		sleep 0.1
	done
	check_eq "[instance] the mock wants an IMDSv2 token" 401 \
		"$(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$AP/latest/meta-data/iam/security-credentials/")"
	cat >"$T/seatunnel.yaml" <<-EOF
	seatunnel:
	  engine:
	    checkpoint:
	      interval: 6000
	      timeout: 7000
	      storage:
	        type: hdfs
	        max-retained: 3
	        plugin-config:
	          namespace: /$PREFIX/
	          storage.type: s3
	          s3.bucket: s3a://ckpt
	          fs.s3a.endpoint: http://127.0.0.1:$SP
	          fs.s3a.endpoint.region: us-east-1
	          fs.s3a.path.style.access: true
	          fs.s3a.aws.credentials.provider: com.amazonaws.auth.InstanceProfileCredentialsProvider
	EOF
	S3OPTS_SAVED=$S3OPTS
	S3OPTS="seatunnel_yaml=$T/seatunnel.yaml"
	AWS_EC2_METADATA_DISABLED= AWS_EC2_METADATA_SERVICE_ENDPOINT=http://127.0.0.1:$AP \
		provider_mount instance "instance (role stfs-role)" ASIAIMDS1 ""
	S3OPTS=$S3OPTS_SAVED
else
	bad "[instance] amazon-ec2-metadata-mock is installed"
fi

# ---- container: rotation under a walker -------------------------------------------
echo "# container"
CST=$T/ecs-state.json
ecs() { # ecs GEN LIFE STALL_MS REFUSE
	printf '{"gen": %s, "life": %s, "stall_ms": %s, "refuse": %s, "auth": "Bearer ecs-auth-xyz"}' \
		"$1" "$2" "$3" "$4" >"$CST.tmp" && mv "$CST.tmp" "$CST"
}
ecs 1 10 0 0
python3 "$ROOT/tests/integration/credsrv.py" --state "$CST" --port-file "$T/ecs.port" \
	--log "$T/ecs.log" --max-seconds 300 &
PIDS+=("$!")
for _ in $(seq 100); do [ -s "$T/ecs.port" ] && break; sleep 0.05; done
EP=$(cat "$T/ecs.port")
M=$T/m-container
export AWS_CONTAINER_CREDENTIALS_FULL_URI=http://127.0.0.1:$EP/creds
export AWS_CONTAINER_AUTHORIZATION_TOKEN="Bearer ecs-auth-xyz"
if mount_stfs "$M" -o "$S3OPTS,state_dir=$T/sd-container,$COMMON,storage_ttl=0,cache_ttl=0,aws_credentials_provider=com.amazonaws.auth.ContainerCredentialsProvider"; then
	CPID=$STFS_PID
	check "[container] .stfs/config names the ECS endpoint" \
		grep -q "^credentials = container (container endpoint)" "$M/.stfs/config"
	EXP1=$(grep '^credentials_expire' "$M/.stfs/config")
	# the walker: every checkpoint read, over and over, for ~18 s
	(
		end=$((SECONDS + 18)) n=0 f=0
		while [ $SECONDS -lt $end ]; do
			out=$(listing "$M" 2>&1) || f=$((f + 1))
			[ "$out" == "$WANT" ] || f=$((f + 1))
			(cd "$M/jobs" && find . -path '*checkpoints*' -type f -exec cat {} + >/dev/null 2>"$T/walk.err") ||
				f=$((f + 1))
			n=$((n + 1))
		done
		echo "$n $f" >"$T/walk.result"
	) &
	WALKER=$!
	# credentials live 10 s (refreshed after ~5 s).  New keys are issued,
	# the old ones expire in the store, then are revoked; the endpoint
	# refuses when a refresh is due, then stalls: each within the life of
	# the credentials in use, so no call may fail
	sleep 2
	keys "${ENVK[@]}" $(ecsk 1 expired) $(ecsk 2) # expired before due
	ecs 2 10 0 0
	sleep 4
	keys "${ENVK[@]}" $(ecsk 3) # gen 2 revoked before due
	ecs 3 10 0 0
	sleep 4
	ecs 3 10 0 1 # gen 3 is due around now: the endpoint refuses
	# until it has refused a refresh (a loaded box refreshes a little late;
	# gen 3 stays valid for seconds after that)
	for _ in $(seq 40); do
		grep -q REFUSED "$T/ecs.log" && break
		sleep 0.2
	done
	sleep 0.5
	keys "${ENVK[@]}" $(ecsk 3) $(ecsk 4)
	ecs 4 10 1200 0 # ... then answers slowly
	wait "$WALKER"
	# one more walk: the refresh after the refused and stalled ones is in
	sleep 1
	[ "$(listing "$M")" == "$WANT" ] || echo "0 1" >"$T/walk.result"
	read -r walks fails <"$T/walk.result"
	check "[container] the walker ran ($walks walks)" test "${walks:-0}" -ge 3
	check_eq "[container] no call failed while the credentials rotated" 0 "${fails:-x}"
	# a failed storage call is logged by stfs: none may be (a failed
	# refresh while the current keys are valid is no failed call)
	# Logged storage failures during the rotation are a figure, not a check:
	# on a loaded 2-core box a refresh can come late and a call is refused
	# and sent again (the walker above checks that no call failed)
	logged=$(grep -E 'Permission denied|no credentials|failed|HTTP [45]' "$T/stfs-m-container.log" | grep -v 'container credentials: ' |
		grep -vc 'refreshing the credentials failed; the current ones are still used')
	echo "    figure: $logged storage failures logged during the rotation (all retried: no call failed)"
	for g in 1 2 3 4; do
		check "[container] generation $g signed requests" test "$(okcount ASIAECS$g)" -gt 0
	done
	check "[container] a due refresh was refused by the endpoint" \
		grep -q REFUSED "$T/ecs.log"
	check "[container] the store refused expired and revoked keys" \
		grep -qE "^REFUSED (ExpiredToken|InvalidAccessKeyId) ASIAECS" "$SLOG"
	check "[container] ... and stfs sent those requests again with fresh keys" \
		grep -q "sending again with fresh" "$T/stfs-m-container.log"
	check "[container] .stfs/config shows the new expiry" \
		test "$(grep '^credentials_expire' "$M/.stfs/config")" != "$EXP1"
	echo "    (store refusals $(grep -c "^REFUSED .* ASIAECS" "$SLOG"), requests sent again $(grep -c "sending again with fresh" "$T/stfs-m-container.log"))"
	tr '\0' ' ' <"/proc/$CPID/cmdline" >"$T/cmdline-container.txt"
	cp "$M/.stfs/config" "$T/config-container.txt"
	unmount_stfs "$M"
else
	bad "[container] mount"
fi
unset AWS_CONTAINER_CREDENTIALS_FULL_URI AWS_CONTAINER_AUTHORIZATION_TOKEN

# ---- GCS through the JSON API (fake-gcs-server), OAuth2 ---------------------------
echo "# gcs"
FGCS=$GOBIN_DIR/fake-gcs-server
if [ ! -x "$FGCS" ]; then
	GOBIN=$GOBIN_DIR go install github.com/fsouza/fake-gcs-server@v1.52.3 \
		>>"$T/go-install.log" 2>&1 || tail -5 "$T/go-install.log"
fi
if [ -x "$FGCS" ]; then
	mkdir -p "$T/gcsdata/ckpt/$PREFIX"
	cp -r "$NS"/. "$T/gcsdata/ckpt/$PREFIX/"
	GP=$(free_port)
	(cd "$T" && exec "$FGCS" -scheme http -host 127.0.0.1 -port "$GP" -backend memory \
		-data "$T/gcsdata" -public-host "127.0.0.1:$GP") >"$T/fgcs.log" 2>&1 &
	PIDS+=("$!")
	for _ in $(seq 100); do
		curl -s -o /dev/null -m 1 "http://127.0.0.1:$GP/storage/v1/b" && break
		sleep 0.1
	done
	# a service account: a key pair made here, its public half given to the
	# token endpoint, which verifies each JWT's RS256 signature
	openssl genpkey -algorithm RSA -pkeyopt rsa_keygen_bits:2048 -out "$T/sa.pem" 2>/dev/null
	openssl pkey -in "$T/sa.pem" -pubout -out "$T/sa.pub" 2>/dev/null
	GST=$T/gcs-state.json
	gst() { printf '{"gen": %s, "life": %s, "stall_ms": 0, "refuse": %s, "email": "stfs@proj.iam.gserviceaccount.com"}' \
		"$1" "$2" "$3" >"$GST.tmp" && mv "$GST.tmp" "$GST"; }
	gst 1 3600 0
	python3 "$ROOT/tests/integration/credsrv.py" --state "$GST" --port-file "$T/gtok.port" \
		--log "$T/gtok.log" --pubkey "$T/sa.pub" --max-seconds 300 &
	PIDS+=("$!")
	for _ in $(seq 100); do [ -s "$T/gtok.port" ] && break; sleep 0.05; done
	TP=$(cat "$T/gtok.port")
	python3 - "$T/sa.pem" "http://127.0.0.1:$TP/token" >"$T/sa.json" <<-'EOF'
	import json, sys
	print(json.dumps({"type": "service_account", "project_id": "proj",
	  "private_key_id": "k1", "private_key": open(sys.argv[1]).read(),
	  "client_email": "stfs@proj.iam.gserviceaccount.com", "token_uri": sys.argv[2]}))
	EOF
	chmod 600 "$T/sa.json"
	cat >"$T/seatunnel-gcs.yaml" <<-EOF
	seatunnel:
	  engine:
	    checkpoint:
	      storage:
	        type: hdfs
	        plugin-config:
	          namespace: /$PREFIX/
	          storage.type: gcs
	          gcs.bucket: gs://ckpt
	          fs.gs.project.id: proj
	          fs.gs.auth.service.account.json.keyfile: $T/sa.json
	EOF
	GOPTS="endpoint=http://127.0.0.1:$GP,state_dir=$T/sd-gcs,$COMMON"
	if mount_stfs "$T/m-gcs" -o "seatunnel_yaml=$T/seatunnel-gcs.yaml,$GOPTS"; then
		check_eq "[gcs key] the listing equals the file:// mount's" "$WANT" "$(listing "$T/m-gcs")"
		check "[gcs key] a checkpoint reads the same bytes" cmp -s "$T/mloc/jobs/$ONE" "$T/m-gcs/jobs/$ONE"
		check "[gcs key] the token endpoint verified a signed JWT" grep -q "^TOKEN gcs 1" "$T/gtok.log"
		cp "$T/m-gcs/.stfs/config" "$T/config-gcs.txt"
		check "[gcs key] .stfs/config names the service account" \
			grep -q "^credentials = keyfile (service account stfs@proj.iam.gserviceaccount.com)" "$T/config-gcs.txt"
		tr '\0' ' ' <"/proc/$STFS_PID/cmdline" >"$T/cmdline-gcs.txt"
		unmount_stfs "$T/m-gcs"
	else
		bad "[gcs key] mount through the JSON API"
	fi
	# a key signed by another key pair is refused by the token endpoint
	openssl genpkey -algorithm RSA -pkeyopt rsa_keygen_bits:2048 -out "$T/other.pem" 2>/dev/null
	python3 - "$T/other.pem" "http://127.0.0.1:$TP/token" >"$T/other.json" <<-'EOF'
	import json, sys
	print(json.dumps({"type": "service_account", "private_key": open(sys.argv[1]).read(),
	  "client_email": "stfs@proj.iam.gserviceaccount.com", "token_uri": sys.argv[2]}))
	EOF
	chmod 600 "$T/other.json"
	if GOOGLE_APPLICATION_CREDENTIALS=$T/other.json \
		mount_stfs "$T/m-gcsbad" -o "checkpoint=gs://ckpt/$PREFIX/,$GOPTS" 2>/dev/null; then
		bad "[gcs key] a JWT signed by a foreign key gets no token"
		unmount_stfs "$T/m-gcsbad"
	else
		check "[gcs key] a JWT signed by a foreign key gets no token (the endpoint said invalid_grant)" \
			grep -q BADJWT "$T/gtok.log"
	fi
	# GOOGLE_APPLICATION_CREDENTIALS, and a token living 4 s: refreshed
	gst 2 4 0
	if GOOGLE_APPLICATION_CREDENTIALS=$T/sa.json \
		mount_stfs "$T/m-gcsadc" -o "checkpoint=gs://ckpt/$PREFIX/,cache_ttl=0,storage_ttl=0,$GOPTS"; then
		fails=0
		for _ in 1 2 3 4 5 6; do
			[ "$(listing "$T/m-gcsadc")" == "$WANT" ] || fails=$((fails + 1))
			cmp -s "$T/mloc/jobs/$ONE" "$T/m-gcsadc/jobs/$ONE" || fails=$((fails + 1))
			sleep 1
		done
		check_eq "[gcs adc] every walk while the token is refreshed" 0 "$fails"
		check "[gcs adc] the token was refreshed before it expired" \
			test "$(grep -c "^TOKEN gcs 2" "$T/gtok.log")" -ge 2
		unmount_stfs "$T/m-gcsadc"
	else
		bad "[gcs adc] mount with GOOGLE_APPLICATION_CREDENTIALS"
	fi
	# the metadata server of GCE/GKE
	gst 3 3600 0
	# (fake-gcs-server 1.52 cuts a listing at maxResults without a
	# nextPageToken: paging is covered by tests/backends/test_gcs.c)
	if GCE_METADATA_HOST=127.0.0.1:$TP \
		mount_stfs "$T/m-gce" -o "checkpoint=gs://ckpt/$PREFIX/,$GOPTS"; then
		check_eq "[gcs metadata] the listing equals the file:// mount's" "$WANT" "$(listing "$T/m-gce")"
		check "[gcs metadata] the token came from the metadata server" grep -q "^TOKEN gce 3" "$T/gtok.log"
		check "[gcs metadata] .stfs/config says so" grep -q "^credentials = metadata" "$T/m-gce/.stfs/config"
		unmount_stfs "$T/m-gce"
	else
		bad "[gcs metadata] mount with GCE_METADATA_HOST"
	fi
	SECRETS+=(gcs-token-1 gcs-token-2 gce-token-3 "$(sed -n 2p "$T/sa.pem")" eyJhbGci)
else
	bad "[gcs] fake-gcs-server is installed"
fi

# ---- never leak ---------------------------------------------------------------------
echo "# leaks"
SECRETS+=(ecs-secret-1 ecs-secret-2 ecs-secret-3 ecs-secret-4 ecs-token-1 ecs-token-2
	ecs-token-3 ecs-token-4)
leaks=0
for s in "${SECRETS[@]}"; do
	if grep -rlF -- "$s" "$T"/stfs-*.log "$T"/config-*.txt "$T"/cmdline-*.txt 2>/dev/null; then
		leaks=$((leaks + 1))
	fi
done
check_eq "no key, token or authorization token in a log, .stfs/config or argv" 0 "$leaks"

STFS_PID=$LOC_PID
unmount_stfs "$T/mloc"
finish
