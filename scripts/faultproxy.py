#!/usr/bin/env python3
"""A fault-injecting HTTP reverse proxy for stfs's object-store tests.

    scripts/faultproxy.py --upstream http://127.0.0.1:4568 [--port 0]
                          [--port-file F] [--control-file F]

Every request is passed to the upstream unchanged: method, path and query
verbatim, every header in order (Host included, so a SigV4 signature made
for the proxy's host:port still verifies upstream), and the body.  The
answer comes back unchanged too, apart from hop-by-hop headers.

Faults: instead of forwarding, the proxy answers
"503 SlowDown" (S3 error XML, like a throttling S3) for
  * the next N requests:          {"mode": "next", "n": N}
  * a percentage of requests:     {"mode": "percent", "percent": P}
  * no request:                   {"mode": "none"}
Other faults, for every request while set:
  * a 200 answer of junk bytes:   {"mode": "garbage"}
  * the real answer, its body trickled at B bytes a second:
                                  {"mode": "trickle", "bps": B}
  * the real headers and half the body, then nothing until the fault
    changes (or 600 s), then the connection is closed:
                                  {"mode": "stall"}
  * the real answer, forwarded MS milliseconds late (a distant store):
                                  {"mode": "delay", "ms": MS}
"match": "TEXT" beside a mode limits the fault to requests whose path
and query contain TEXT (e.g. "list-type=" for listings only).
Rewrites: {"rewrite": [["FROM", "TO"], ...]} (alone or with a mode)
replaces bytes in every forwarded answer body (Content-Length follows), so
a test can make the server "return" keys it cannot store, such as "..":
upload ".../DOTDOT/x" and rewrite DOTDOT to "..".  {"rewrite": []} stops.
Set the fault through the control endpoint of the proxy itself (never
forwarded; "__fault" is no valid bucket name):
    POST /__fault  with one of the JSON objects above  -> the new state
    GET  /__fault                                      -> state + counters
or, with --control-file F, by writing one line to F: "none",
"next N" or "percent P" (re-read whenever F's mtime changes).
Counters: total (requests seen, control excluded), forwarded, faulted;
inflight / max_inflight (requests being answered now / at most at once),
object_gets (GETs of an object, i.e. a key after the bucket: /BUCKET/KEY;
listings excluded) and object_gets_inflight / max_object_gets_inflight.
{"reset": true} (alone or with a mode) sets the maxima to what is in
flight now, so that a test measures one operation.

Only loopback use is intended; the proxy stops on SIGTERM/SIGINT.
"""
import argparse
import http.client
import http.server
import json
import os
import random
import signal
import socketserver
import sys
import threading
import time
import urllib.parse

HOP = {"connection", "keep-alive", "proxy-connection", "transfer-encoding",
       "te", "trailer", "upgrade", "proxy-authenticate",
       "proxy-authorization"}

SLOWDOWN = (b'<?xml version="1.0" encoding="UTF-8"?>\n<Error><Code>SlowDown'
            b'</Code><Message>Please reduce your request rate.</Message>'
            b'<RequestId>FAULTPROXY</RequestId></Error>')

GARBAGE = b"\x00\xff<<not xml{[ \x01garbage\x7f" * 8


class State:
    def __init__(self, control_file):
        self.lock = threading.Lock()
        self.mode = "none"
        self.n = 0
        self.percent = 0.0
        self.total = 0
        self.forwarded = 0
        self.faulted = 0
        self.rewrite = []
        self.control_file = control_file
        self.control_mtime = None
        self.bps = 0
        self.match = ""
        self.gen = 0
        self.ms = 0
        self.inflight = 0
        self.max_inflight = 0
        self.gets = 0
        self.max_gets = 0
        self.obj_gets = 0
        self.cv = threading.Condition(self.lock)

    def set(self, d):
        """Apply a fault description (dict); raises ValueError."""
        keep = "rewrite" in d or "reset" in d
        mode = str(d.get("mode", "keep" if keep else "none"))
        with self.lock:
            if d.get("reset"):
                self.max_inflight = self.inflight
                self.max_gets = self.gets
            if "rewrite" in d:
                rw = [(str(a).encode(), str(b).encode())
                      for a, b in d["rewrite"]]
                if any(not a for a, _ in rw):
                    raise ValueError("empty rewrite pattern")
                self.rewrite = rw
            self.gen += 1
            self.cv.notify_all()
            if mode != "keep":
                self.match = str(d.get("match", ""))
            if mode == "keep":
                pass
            elif mode == "none":
                self.mode, self.n, self.percent = "none", 0, 0.0
            elif mode == "next":
                n = int(d.get("n", 1))
                if n < 0:
                    raise ValueError("n < 0")
                self.mode, self.n = "next", n
            elif mode == "percent":
                p = float(d.get("percent", 100))
                if not 0 <= p <= 100:
                    raise ValueError("percent not in 0..100")
                self.mode, self.percent = "percent", p
            elif mode in ("garbage", "stall"):
                self.mode = mode
            elif mode == "trickle":
                b = int(d.get("bps", 100))
                if b < 1:
                    raise ValueError("bps < 1")
                self.mode, self.bps = "trickle", b
            elif mode == "delay":
                ms = int(d.get("ms", 100))
                if not 0 <= ms <= 600000:
                    raise ValueError("ms not in 0..600000")
                self.mode, self.ms = "delay", ms
            else:
                raise ValueError("mode must be none, next, percent, "
                                 "garbage, trickle, stall or delay")
            return self.snapshot_locked()

    def snapshot_locked(self):
        return {"mode": self.mode, "n": self.n, "percent": self.percent,
                "bps": self.bps, "match": self.match,
                "total": self.total, "forwarded": self.forwarded,
                "faulted": self.faulted, "ms": self.ms,
                "inflight": self.inflight, "max_inflight": self.max_inflight,
                "object_gets": self.obj_gets,
                "object_gets_inflight": self.gets,
                "max_object_gets_inflight": self.max_gets,
                "rewrite": [[a.decode(), b.decode()] for a, b in self.rewrite]}

    def snapshot(self):
        with self.lock:
            return self.snapshot_locked()

    def poll_file(self):
        if not self.control_file:
            return
        try:
            m = os.stat(self.control_file).st_mtime_ns
        except OSError:
            return
        if m == self.control_mtime:
            return
        self.control_mtime = m
        try:
            with open(self.control_file) as f:
                words = f.read().split()
        except OSError:
            return
        try:
            if not words or words[0] == "none":
                self.set({"mode": "none"})
            elif words[0] == "next":
                self.set({"mode": "next", "n": int(words[1])})
            elif words[0] == "percent":
                self.set({"mode": "percent", "percent": float(words[1])})
            else:
                raise ValueError(words[0])
        except (ValueError, IndexError) as e:
            sys.stderr.write("faultproxy: bad control file: %s\n" % e)

    def fault_of(self, path):
        """Count one request; the fault to apply to it: None (forward),
        "503", "garbage", ("trickle", bps), ("stall", generation) or
        ("delay", ms)."""
        self.poll_file()
        with self.lock:
            self.total += 1
            fault = None
            if self.match and self.match not in path:
                pass
            elif self.mode == "next" and self.n > 0:
                self.n -= 1
                fault = "503"
            elif self.mode == "percent":
                if random.random() * 100 < self.percent:
                    fault = "503"
            elif self.mode == "garbage":
                fault = "garbage"
            elif self.mode == "trickle":
                fault = ("trickle", self.bps)
            elif self.mode == "stall":
                fault = ("stall", self.gen)
            elif self.mode == "delay":
                fault = ("delay", self.ms)
            if fault:
                self.faulted += 1
            if fault is None or isinstance(fault, tuple):
                self.forwarded += 1
            return fault

    def begin(self, obj_get):
        """A request is being answered (obj_get: a GET of an object)."""
        with self.lock:
            self.inflight += 1
            self.max_inflight = max(self.max_inflight, self.inflight)
            if obj_get:
                self.obj_gets += 1
                self.gets += 1
                self.max_gets = max(self.max_gets, self.gets)

    def end(self, obj_get):
        with self.lock:
            self.inflight -= 1
            if obj_get:
                self.gets -= 1

    def wait_change(self, gen, secs):
        """Block until the fault is changed or secs elapse."""
        with self.lock:
            self.cv.wait_for(lambda: self.gen != gen, timeout=secs)


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "faultproxy"

    def log_message(self, fmt, *args):
        if self.server.verbose:
            sys.stderr.write("faultproxy: %s\n" % (fmt % args))

    def read_body(self):
        te = self.headers.get("Transfer-Encoding", "").lower()
        if "chunked" in te:
            out = b""
            while True:
                line = self.rfile.readline(65537)
                size = int(line.split(b";")[0].strip() or b"0", 16)
                if size == 0:
                    while self.rfile.readline(65537) not in (b"\r\n", b"\n",
                                                             b""):
                        pass
                    return out, True
                out += self.rfile.read(size)
                self.rfile.readline(65537)
        n = int(self.headers.get("Content-Length") or 0)
        return (self.rfile.read(n) if n > 0 else b""), False

    def answer(self, status, body, ctype, extra=()):
        self.send_response(status)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(body)))
        for k, v in extra:
            self.send_header(k, v)
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)

    def control(self, body):
        st = self.server.state
        if self.command == "GET":
            out = st.snapshot()
        elif self.command == "POST":
            try:
                out = st.set(json.loads(body or b"{}"))
            except (ValueError, TypeError, AttributeError) as e:
                self.answer(400, json.dumps({"error": str(e)}).encode(),
                            "application/json")
                return
        else:
            self.answer(405, b"{}", "application/json")
            return
        self.answer(200, json.dumps(out).encode(), "application/json")

    def handle_any(self):
        body, chunked = self.read_body()
        path = urllib.parse.urlsplit(self.path).path
        if path.rstrip("/") == "/__fault":
            self.control(body)
            return
        st = self.server.state
        obj_get = is_object_get(self.command, path)
        st.begin(obj_get)
        try:
            self.forward(st, body, chunked)
        finally:
            st.end(obj_get)

    def forward(self, st, body, chunked):
        fault = st.fault_of(self.path)
        if isinstance(fault, tuple) and fault[0] == "delay":
            time.sleep(fault[1] / 1000.0)
        if fault == "503":
            self.answer(503, SLOWDOWN, "application/xml",
                        [("x-amz-request-id", "FAULTPROXY"),
                         ("Retry-After", "0")])
            return
        if fault == "garbage":
            self.answer(200, GARBAGE, "application/xml")
            return
        conn = http.client.HTTPConnection(self.server.up_host,
                                          self.server.up_port, timeout=60)
        try:
            conn.putrequest(self.command, self.path, skip_host=True,
                            skip_accept_encoding=True)
            for k, v in self.headers.items():
                if k.lower() in HOP or (chunked and
                                        k.lower() == "content-length"):
                    continue
                conn.putheader(k, v)
            if chunked or (body and "Content-Length" not in self.headers):
                conn.putheader("Content-Length", str(len(body)))
            conn.endheaders(body if body else None)
            r = conn.getresponse()
            data = r.read()
            with st.lock:
                rw = list(st.rewrite)
            for a, b in rw:
                data = data.replace(a, b)
            self.send_response(r.status, r.reason)
            has_len = False
            for k, v in r.getheaders():
                kl = k.lower()
                if kl in HOP:
                    continue
                if kl == "content-length":
                    if self.command != "HEAD":
                        continue
                    has_len = True
                self.send_header(k, v)
            if self.command != "HEAD":
                self.send_header("Content-Length", str(len(data)))
            elif not has_len:
                self.send_header("Content-Length", "0")
            self.end_headers()
            if self.command != "HEAD":
                self.send_body(data, fault)
        except (OSError, http.client.HTTPException) as e:
            self.answer(502, ("upstream: %s" % e).encode(), "text/plain")
        finally:
            conn.close()

    def send_body(self, data, fault):
        if isinstance(fault, tuple) and fault[0] == "trickle":
            step = max(1, fault[1] // 10)
            for i in range(0, len(data), step):
                self.wfile.write(data[i:i + step])
                self.wfile.flush()
                time.sleep(0.1)
            return
        if isinstance(fault, tuple) and fault[0] == "stall":
            self.wfile.write(data[:len(data) // 2])
            self.wfile.flush()
            self.server.state.wait_change(fault[1], 600)
            self.close_connection = True
            return
        self.wfile.write(data)

    do_GET = do_HEAD = do_PUT = do_POST = do_DELETE = do_PATCH = \
        do_OPTIONS = handle_any


def is_object_get(method, path):
    """A GET of an object: path-style /BUCKET/KEY (a listing is a GET of
    /BUCKET, its parameters in the query)."""
    return method == "GET" and "/" in path.strip("/")


class Server(socketserver.ThreadingMixIn, http.server.HTTPServer):
    daemon_threads = True
    allow_reuse_address = True
    request_queue_size = 128  # many clients at once (the default is 5)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--upstream", required=True,
                    help="http://HOST:PORT of the real server")
    ap.add_argument("--host", default="127.0.0.1")
    ap.add_argument("--port", type=int, default=0, help="0: any free port")
    ap.add_argument("--port-file", help="write the bound port here")
    ap.add_argument("--control-file", help="fault control file (see above)")
    ap.add_argument("--verbose", action="store_true")
    a = ap.parse_args()
    up = urllib.parse.urlsplit(a.upstream)
    if up.scheme != "http" or not up.hostname:
        ap.error("--upstream must be http://HOST:PORT")
    srv = Server((a.host, a.port), Handler)
    srv.up_host = up.hostname
    srv.up_port = up.port or 80
    srv.verbose = a.verbose
    srv.state = State(a.control_file)
    port = srv.server_address[1]
    if a.port_file:
        tmp = a.port_file + ".tmp"
        with open(tmp, "w") as f:
            f.write("%d\n" % port)
        os.replace(tmp, a.port_file)

    def stop(*_):
        threading.Thread(target=srv.shutdown, daemon=True).start()

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
    srv.serve_forever()
    srv.server_close()


if __name__ == "__main__":
    main()
