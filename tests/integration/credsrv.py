#!/usr/bin/env python3
"""A stand-in for the ECS container credentials endpoint, from AWS's public
description of it (AWS_CONTAINER_CREDENTIALS_FULL_URI + Authorization
header; amazon-ecs-local-container-endpoints is not on the Go module proxy).

    credsrv.py --state FILE --port-file FILE [--log FILE]

Serves GET /creds.  The behaviour is read from the JSON state file at every
request, so a test changes it by rewriting the file:
    {"gen": N, "life": SECONDS, "stall_ms": MS, "refuse": 0|1,
     "auth": "Bearer ..."}
Generation N's credentials are ASIAECS<N> / ecs-secret-<N> / ecs-token-<N>,
expiring `life` seconds from the answer.  A wrong Authorization is 403,
refuse is 500, stall_ms delays the answer.  Loopback only.
"""
import argparse
import datetime
import json
import os
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--state", required=True)
    ap.add_argument("--port-file", required=True)
    ap.add_argument("--log")
    ap.add_argument("--max-seconds", type=float, default=600)
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

        def do_GET(self):
            try:
                with open(a.state) as f:
                    st = json.load(f)
            except (OSError, ValueError):
                st = {}
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
