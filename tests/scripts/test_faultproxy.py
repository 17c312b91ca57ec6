"""Tests for scripts/faultproxy.py: the delay mode and the concurrency
counters (inflight, max_inflight, and the same for GETs of an object),
with a real proxy process in front of a small upstream HTTP server.

Run: python3 -m unittest discover -s tests/scripts -p 'test_*.py'
"""

import http.client
import http.server
import json
import os
import socketserver
import subprocess
import sys
import tempfile
import threading
import time
import unittest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
PROXY = os.path.join(ROOT, "scripts", "faultproxy.py")
sys.path.insert(0, os.path.join(ROOT, "scripts"))

import faultproxy  # noqa: E402


class Upstream(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *a):
        pass

    def do_GET(self):
        body = ("ok " + self.path).encode()
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


class Srv(socketserver.ThreadingMixIn, http.server.HTTPServer):
    daemon_threads = True


class FaultProxy(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.up = Srv(("127.0.0.1", 0), Upstream)
        threading.Thread(target=cls.up.serve_forever, daemon=True).start()
        cls.tmp = tempfile.TemporaryDirectory()
        pf = os.path.join(cls.tmp.name, "port")
        cls.proc = subprocess.Popen(
            [sys.executable, PROXY, "--upstream",
             "http://127.0.0.1:%d" % cls.up.server_address[1], "--port", "0",
             "--port-file", pf])
        for _ in range(200):
            if os.path.exists(pf):
                break
            time.sleep(0.025)
        with open(pf) as f:
            cls.port = int(f.read())

    @classmethod
    def tearDownClass(cls):
        cls.proc.terminate()
        cls.proc.wait(10)
        cls.up.shutdown()
        cls.tmp.cleanup()

    def req(self, method, path, body=None):
        c = http.client.HTTPConnection("127.0.0.1", self.port, timeout=30)
        c.request(method, path, body=body)
        r = c.getresponse()
        data = r.read()
        c.close()
        return r.status, data

    def ctl(self, d=None):
        st, data = self.req("POST" if d is not None else "GET", "/__fault",
                            json.dumps(d).encode() if d is not None else None)
        self.assertEqual(st, 200, data)
        return json.loads(data)

    def parallel(self, paths):
        out = [None] * len(paths)

        def one(i):
            out[i] = self.req("GET", paths[i])

        ts = [threading.Thread(target=one, args=(i,)) for i in range(len(paths))]
        t0 = time.monotonic()
        for t in ts:
            t.start()
        for t in ts:
            t.join(30)
        return out, time.monotonic() - t0

    def tearDown(self):
        self.ctl({"mode": "none"})

    def test_delay_holds_each_request(self):
        self.ctl({"mode": "delay", "ms": 300})
        t0 = time.monotonic()
        st, body = self.req("GET", "/b/k1")
        self.assertGreaterEqual(time.monotonic() - t0, 0.29)
        self.assertEqual((st, body), (200, b"ok /b/k1"))  # the real answer
        self.assertEqual(self.ctl()["ms"], 300)

    def test_max_inflight_counts_concurrent_object_gets(self):
        g0 = self.ctl({"mode": "delay", "ms": 400, "reset": True})["object_gets"]
        out, dt = self.parallel(["/b/obj%d" % i for i in range(6)])
        self.assertTrue(all(o == (200, b"ok /b/obj%d" % i) for i, o in enumerate(out)), out)
        self.assertLess(dt, 6 * 0.4)  # delayed side by side, not in turn
        s = self.ctl()
        self.assertEqual(s["max_object_gets_inflight"], 6)
        self.assertEqual(s["object_gets"] - g0, 6)
        self.assertEqual(s["max_inflight"], 6)
        self.assertEqual(s["inflight"], 0)
        self.assertEqual(s["object_gets_inflight"], 0)

    def test_in_turn_is_one_at_a_time(self):
        self.ctl({"mode": "delay", "ms": 50, "reset": True})
        for i in range(4):
            self.req("GET", "/b/seq%d" % i)
        self.assertEqual(self.ctl()["max_object_gets_inflight"], 1)

    def test_listings_are_not_object_gets(self):
        self.ctl({"mode": "delay", "ms": 300, "reset": True})
        self.parallel(["/b?list-type=2&prefix=x%d" % i for i in range(3)])
        s = self.ctl()
        self.assertEqual(s["max_object_gets_inflight"], 0)
        self.assertEqual(s["max_inflight"], 3)

    def test_reset_keeps_the_mode(self):
        self.ctl({"mode": "delay", "ms": 120})
        self.parallel(["/b/r%d" % i for i in range(3)])
        self.assertGreaterEqual(self.ctl()["max_object_gets_inflight"], 3)
        s = self.ctl({"reset": True})
        self.assertEqual((s["mode"], s["ms"]), ("delay", 120))
        self.assertEqual(s["max_object_gets_inflight"], 0)

    def test_bad_delay_refused(self):
        st, _ = self.req("POST", "/__fault", json.dumps({"mode": "delay", "ms": -1}).encode())
        self.assertEqual(st, 400)

    def test_is_object_get(self):
        self.assertTrue(faultproxy.is_object_get("GET", "/ckpt/seatunnel/a.ser"))
        self.assertFalse(faultproxy.is_object_get("GET", "/ckpt"))
        self.assertFalse(faultproxy.is_object_get("GET", "/ckpt/"))
        self.assertFalse(faultproxy.is_object_get("HEAD", "/ckpt/a"))


if __name__ == "__main__":
    unittest.main()
