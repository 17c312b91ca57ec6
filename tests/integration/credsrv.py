#!/usr/bin/env python3
"""A stand-in for the ECS container credentials endpoint, from AWS's public
description of it (AWS_CONTAINER_CREDENTIALS_FULL_URI + Authorization
header; amazon-ecs-local-container-endpoints is not on the Go module proxy),
and for Google's OAuth2 token endpoint and GCE metadata token, from their
public descriptions (no emulator on the registries covers them).

    credsrv.py --state FILE --port-file FILE [--log FILE] [--pubkey PEM]

POST /token takes the JWT bearer grant (RFC 7523): the assertion's RS256
signature is verified against --pubkey (with the openssl command), its aud
must be this URL, iss the key's client_email, exp in the future; it answers
{"access_token": "gcs-token-<N>", "expires_in": life}.  GET
/computeMetadata/v1/instance/service-accounts/default/token wants
"Metadata-Flavor: Google" and answers "gce-token-<N>".

Serves GET /creds.  The behaviour is read from the JSON state file at every
request, so a test changes it by rewriting the file:
    {"gen": N, "life": SECONDS, "stall_ms": MS, "refuse": 0|1,
     "auth": "Bearer ..."}
Generation N's credentials are ASIAECS<N> / ecs-secret-<N> / ecs-token-<N>,
expiring `life` seconds from the answer.  A wrong Authorization is 403,
refuse is 500, stall_ms delays the answer.  Loopback only.
"""
import argparse
import base64
import datetime
import json
import os
import subprocess
import sys
import tempfile
import urllib.parse
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--state", required=True)
    ap.add_argument("--port-file", required=True)
    ap.add_argument("--log")
    ap.add_argument("--max-seconds", type=float, default=600)
    ap.add_argument("--pubkey")
    a = ap.parse_args()
    lock = threading.Lock()

    def log(line):
        if a.log:
            with lock, open(a.log, "a") as f:
                f.write(line + "\n")

    class H(BaseHTTPRequestHandler):
        def log_message(self, *args):
            pass

        def reply(self, code, body, ctype="application/json"):
            b = body.encode()
            self.send_response(code)
            self.send_header("Content-Type", ctype)
            self.send_header("Content-Length", str(len(b)))
            self.end_headers()
            self.wfile.write(b)

        def state(self):
            try:
                with open(a.state) as f:
                    return json.load(f)
            except (OSError, ValueError):
                return {}

        def token(self, st, kind):
            if st.get("stall_ms"):
                time.sleep(st["stall_ms"] / 1000.0)
            if st.get("refuse"):
                log("REFUSED " + kind)
                return self.reply(500, '{"error":"down"}')
            g = int(st.get("gen", 1))
            log("TOKEN %s %d" % (kind, g))
            self.reply(200, json.dumps({
                "access_token": "%s-token-%d" % (kind, g),
                "expires_in": int(st.get("life", 3600)),
                "token_type": "Bearer"}))

        def do_POST(self):
            st = self.state()
            n = int(self.headers.get("Content-Length", "0"))
            form = urllib.parse.parse_qs(self.rfile.read(n).decode())
            if self.path != "/token" or not a.pubkey:
                return self.reply(404, "{}")
            if form.get("grant_type") != [
                    "urn:ietf:params:oauth:grant-type:jwt-bearer"]:
                log("BADGRANT")
                return self.reply(400, '{"error":"unsupported_grant_type"}')
            jwt = form.get("assertion", [""])[0]
            if not verify(jwt, st, "http://127.0.0.1:%d/token" %
                          srv.server_address[1]):
                log("BADJWT")
                return self.reply(400, '{"error":"invalid_grant"}')
            self.token(st, "gcs")

        def do_GET(self):
            st = self.state()
            if self.path == ("/computeMetadata/v1/instance/"
                             "service-accounts/default/token"):
                if self.headers.get("Metadata-Flavor") != "Google":
                    return self.reply(403, "{}")
                return self.token(st, "gce")
            if self.path != "/creds":
                return self.reply(404, "{}")
            if self.headers.get("Authorization") != st.get("auth"):
                log("DENIED")
                return self.reply(403, '{"message":"bad token"}')
            if st.get("stall_ms"):
                time.sleep(st["stall_ms"] / 1000.0)
            if st.get("refuse"):
                log("REFUSED")
                return self.reply(500, '{"message":"down"}')
            g = int(st.get("gen", 1))
            exp = datetime.datetime.now(datetime.timezone.utc) + \
                datetime.timedelta(seconds=float(st.get("life", 3600)))
            log("SERVED %d" % g)
            self.reply(200, json.dumps({
                "AccessKeyId": "ASIAECS%d" % g,
                "SecretAccessKey": "ecs-secret-%d" % g,
                "Token": "ecs-token-%d" % g,
                "Expiration": exp.strftime("%Y-%m-%dT%H:%M:%SZ"),
                "RoleArn": "arn:aws:iam::123456789012:role/stfs-task",
            }))

    def b64d(x):
        return base64.urlsafe_b64decode(x + "=" * (-len(x) % 4))

    def verify(jwt, st, aud):
        parts = jwt.split(".")
        if len(parts) != 3:
            return False
        try:
            hdr = json.loads(b64d(parts[0]))
            claims = json.loads(b64d(parts[1]))
            sig = b64d(parts[2])
        except ValueError:
            return False
        if hdr.get("alg") != "RS256" or claims.get("aud") != aud or \
                claims.get("iss") != st.get("email") or \
                claims.get("exp", 0) < time.time() or \
                "devstorage" not in claims.get("scope", ""):
            return False
        with tempfile.TemporaryDirectory() as d:
            with open(d + "/msg", "wb") as f:
                f.write((parts[0] + "." + parts[1]).encode())
            with open(d + "/sig", "wb") as f:
                f.write(sig)
            r = subprocess.run(["openssl", "dgst", "-sha256", "-verify",
                                a.pubkey, "-signature", d + "/sig",
                                d + "/msg"], capture_output=True)
            return r.returncode == 0

    srv = ThreadingHTTPServer(("127.0.0.1", 0), H)
    srv.daemon_threads = True
    tmp = a.port_file + ".tmp"
    with open(tmp, "w") as f:
        f.write(str(srv.server_address[1]))
    os.rename(tmp, a.port_file)
    # bounded: stops by itself
    threading.Timer(a.max_seconds, srv.shutdown).start()
    srv.serve_forever()
    return 0


if __name__ == "__main__":
    sys.exit(main())
