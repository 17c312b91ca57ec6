"""Tests for scripts/stsim.py, the SeaTunnel REST API v2 simulator.

Starts the simulator on a free loopback port (port 0), queries every
endpoint with urllib and stops it by PID.
Run: python3 -m unittest discover -s tests/scripts -p 'test_*.py'
"""

import http.client
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import unittest
import urllib.error
import urllib.request

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SIM = os.path.join(ROOT, "scripts", "stsim.py")
SCEN = os.path.join(ROOT, "tests", "fixtures", "scenarios")

RUNNING_KEYS = ["jobId", "jobName", "jobStatus", "envOptions", "createTime",
                "jobDag", "pluginJarsUrls", "isStartWithSavePoint", "metrics"]
FINISHED_KEYS = ["jobId", "jobName", "jobStatus", "errorMsg", "createTime",
                 "finishTime", "jobDag", "pluginJarsUrls", "metrics"]
OVERVIEW_KEYS = ["projectVersion", "gitCommitAbbrev", "totalSlot", "unassignedSlot",
                 "runningJobs", "finishedJobs", "failedJobs", "cancelledJobs",
                 "workers"]
END = {"FAILED", "SAVEPOINT_DONE", "CANCELED", "FINISHED", "UNKNOWABLE"}


class Sim:
    def __init__(self, scenario, *extra):
        self.tmp = tempfile.mkdtemp(prefix="stsim-test-")
        self.pidfile = os.path.join(self.tmp, "pid")
        self.proc = subprocess.Popen(
            [sys.executable, SIM, "--scenario", scenario, "--port", "0",
             "--pidfile", self.pidfile] + list(extra),
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        line = self.proc.stdout.readline()
        if not line.startswith("listening on "):
            self.stop()
            raise RuntimeError("simulator did not start: %r %s"
                               % (line, self.proc.stderr.read()))
        self.port = int(line.split()[2])
        self.base = "http://127.0.0.1:%d" % self.port

    def stop(self):
        pid = self.proc.pid
        if self.proc.poll() is None:
            os.kill(pid, signal.SIGTERM)
            try:
                self.proc.wait(5)
            except subprocess.TimeoutExpired:
                os.kill(pid, signal.SIGKILL)
                self.proc.wait(5)
        self.proc.stdout.close()
        self.proc.stderr.close()
        shutil.rmtree(self.tmp, ignore_errors=True)


def req(base, path, method="GET", body=None, timeout=5, headers=None):
    data = None if body is None else json.dumps(body).encode()
    r = urllib.request.Request(base + path, data=data, method=method,
                               headers=headers or {})
    if data is not None:
        r.add_header("Content-Type", "application/json")
    try:
        with urllib.request.urlopen(r, timeout=timeout) as resp:
            return resp.status, resp.headers, resp.read()
    except urllib.error.HTTPError as e:
        return e.code, e.headers, e.read()


class StsimBase(unittest.TestCase):
    scenario = os.path.join(SCEN, "generated_seed1.json")
    extra = ()

    @classmethod
    def setUpClass(cls):
        cls.sim = Sim(cls.scenario, *cls.extra)
        cls.base = cls.sim.base
        with open(cls.scenario) as f:
            cls.scen = json.load(f)

    @classmethod
    def tearDownClass(cls):
        cls.sim.stop()

    def get(self, path, **kw):
        return req(self.base, path, **kw)

    def get_json(self, path, code=200, **kw):
        st, h, body = self.get(path, **kw)
        self.assertEqual(st, code, body[:300])
        obj = json.loads(body)
        if h.get("Content-Type", "").startswith("application/json"):
            # compact output, key order preserved
            self.assertEqual(body.decode(),
                             json.dumps(obj, separators=(",", ":"), ensure_ascii=False))
        return obj

    def ctl(self, path, body=None, method="POST"):
        st, _, b = req(self.base, path, method=method, body=body)
        self.assertEqual(st, 200, b)
        return json.loads(b)

    def tearDown(self):
        self.ctl("/__sim/fault", {"mode": "none"})


class TestApi(StsimBase):
    def check_metrics(self, m):
        self.assertEqual(len(m), 16)
        for k, v in m.items():
            if k.startswith("Table"):
                self.assertIsInstance(v, dict)
                for x in v.values():
                    self.assertIsInstance(x, str)
            else:
                self.assertIsInstance(v, str, k)

    def test_overview(self):
        ov = self.get_json("/overview")
        self.assertEqual(list(ov), OVERVIEW_KEYS)
        self.assertTrue(all(isinstance(v, str) for v in ov.values()))
        jobs = self.get_json("/__sim/jobs")
        self.assertEqual(int(ov["runningJobs"]),
                         sum(1 for j in jobs if j["jobStatus"] not in END))
        self.assertEqual(int(ov["failedJobs"]),
                         sum(1 for j in jobs if j["jobStatus"] == "FAILED"))
        self.assertEqual(self.get_json("/overview?tag=x"), ov)

    def test_running_jobs(self):
        rj = self.get_json("/running-jobs")
        self.assertIsInstance(rj, list)
        self.assertGreater(len(rj), 0)
        for j in rj:
            self.assertEqual(list(j), RUNNING_KEYS)
            self.assertNotIn(j["jobStatus"], END)
            self.assertIsInstance(j["isStartWithSavePoint"], bool)
            self.check_metrics(j["metrics"])
            self.assertEqual(list(j["jobDag"]),
                             ["jobId", "pipelineEdges", "envOptions", "vertexInfoMap"])

    def test_running_jobs_paging(self):
        allj = self.get_json("/running-jobs")
        p = self.get_json("/running-jobs?page=1&rows=2")
        self.assertEqual(list(p), ["data", "total"])
        self.assertEqual(p["total"], len(allj))
        self.assertEqual(p["data"], allj[:2])
        p2 = self.get_json("/running-jobs?page=2&rows=2")
        self.assertEqual(p2["data"], allj[2:4])
        self.assertEqual(len(self.get_json("/running-jobs?page=1")["data"]),
                         min(10, len(allj)))
        for bad in ("?page=0", "?page=-1", "?page=99&rows=2", "?page=x"):
            e = self.get_json("/running-jobs" + bad, code=400)
            self.assertEqual(list(e), ["status", "message"])
            self.assertEqual(e["status"], "fail")

    def test_finished_jobs(self):
        fj = self.get_json("/finished-jobs")
        self.assertEqual(fj, self.get_json("/finished-jobs/"))
        self.assertGreater(len(fj), 0)
        times = [j["finishTime"] for j in fj]
        self.assertEqual(times, sorted(times))
        for j in fj:
            self.assertEqual(list(j), FINISHED_KEYS)
            self.assertIn(j["jobStatus"], END)
            self.assertEqual(j["pluginJarsUrls"], [])
            self.check_metrics(j["metrics"])
        failed = self.get_json("/finished-jobs/failed")
        self.assertTrue(failed)
        self.assertTrue(all(j["jobStatus"] == "FAILED" and j["errorMsg"] for j in failed))
        self.assertEqual(failed, self.get_json("/finished-jobs/FAILED"))
        self.assertEqual(self.get_json("/finished-jobs/BOGUS"), [])
        p = self.get_json("/finished-jobs?page=1&rows=1")
        self.assertEqual(p, {"data": fj[:1], "total": len(fj)})
        self.get_json("/finished-jobs?page=%d&rows=1" % (len(fj) + 1), code=400)

    def test_job_info(self):
        for j in self.scen["jobs"]:
            o = self.get_json("/job-info/" + j["jobId"])
            self.assertEqual(o["jobId"], j["jobId"])
            self.assertEqual(list(o), FINISHED_KEYS if j["jobStatus"] in END
                             else RUNNING_KEYS)
            self.assertEqual(self.get_json("/running-job/" + j["jobId"]), o)
        self.assertEqual(self.get_json("/job-info/123"), {"jobId": "123"})
        e = self.get_json("/job-info/abc", code=400)
        self.assertEqual(e["status"], "fail")
        self.assertIn("abc", e["message"])
        e = self.get_json("/job-info/", code=400)
        self.assertEqual(e["message"], "The jobId must not be empty.")
        self.get_json("/job-info/99999999999999999999", code=400)

    def test_system_monitoring_and_metrics(self):
        sm = self.get_json("/system-monitoring-information")
        self.assertIsInstance(sm, list)
        for m in sm:
            self.assertEqual(list(m)[:3], ["isMaster", "host", "port"])
            self.assertTrue(all(isinstance(v, str) for v in m.values()))
        st, h, body = self.get("/metrics")
        self.assertEqual(st, 200)
        self.assertTrue(h["Content-Type"].startswith("text/plain"))
        text = body.decode()
        self.assertIn('job_count{cluster="seatunnel",type="running",}', text)
        self.assertIn("# TYPE job_count gauge", text)

    def test_unknown_path_and_method(self):
        st, _, _ = self.get("/nope")
        self.assertEqual(st, 404)
        st, _, b = self.get("/overview", method="POST", body={})
        self.assertEqual(st, 405)

    def test_stop_job_and_sim_job(self):
        # add a running job, stop it, restore it with -r (same id), forget it
        jid = "912345678901234501"
        o = self.ctl("/__sim/job", {"jobId": jid, "state": "RUNNING",
                                    "jobName": "added job"})
        self.assertEqual(list(o), RUNNING_KEYS)
        self.assertIn(jid, [j["jobId"] for j in self.get_json("/running-jobs")])
        r = self.get_json("/stop-job", method="POST",
                          body={"jobId": int(jid), "isStopWithSavePoint": True})
        self.assertEqual(r, {"jobId": jid})
        o = self.get_json("/job-info/" + jid)
        self.assertEqual(o["jobStatus"], "SAVEPOINT_DONE")
        self.assertRegex(o["finishTime"], r"^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d$")
        self.assertNotIn(jid, [j["jobId"] for j in self.get_json("/running-jobs")])
        self.assertIn(jid, [j["jobId"] for j in
                            self.get_json("/finished-jobs/savepoint_done")])
        o = self.ctl("/__sim/job", {"jobId": jid, "state": "RUNNING"})
        self.assertEqual(o["jobStatus"], "RUNNING")
        r = self.get_json("/stop-job", method="POST", body={"jobId": jid})
        self.assertEqual(self.get_json("/job-info/" + jid)["jobStatus"], "CANCELED")
        self.assertEqual(self.ctl("/__sim/job/" + jid, method="DELETE"),
                         {"deleted": True})
        self.assertEqual(self.get_json("/job-info/" + jid), {"jobId": jid})
        e = self.get_json("/stop-job", method="POST", body={}, code=400)
        self.assertEqual(e["status"], "fail")

    def test_stats(self):
        self.ctl("/__sim/reset-stats")
        self.get("/running-jobs")
        self.get("/job-info/1")
        self.get("/job-info/2")
        s = self.ctl("/__sim/stats", method="GET")
        self.assertEqual(s["paths"], {"/running-jobs": 1, "/job-info": 2})
        self.assertEqual(s["total"], 3)


class TestFaults(StsimBase):
    def test_5xx(self):
        self.ctl("/__sim/fault", {"mode": "5xx"})
        codes = set()
        for _ in range(2):
            st, _, b = self.get("/overview")
            codes.add(st)
            e = json.loads(b)
            self.assertEqual(list(e), ["status", "message"])
        self.assertEqual(codes, {500, 503})

    def test_garbage(self):
        self.ctl("/__sim/fault", {"mode": "garbage"})
        st, _, b = self.get("/running-jobs")
        self.assertEqual(st, 200)
        with self.assertRaises(ValueError):
            json.loads(b)

    def test_slow(self):
        self.ctl("/__sim/fault", {"mode": "slow", "delay_ms": 400})
        t = time.monotonic()
        self.get_json("/overview")
        self.assertGreaterEqual(time.monotonic() - t, 0.38)

    def test_hang_times_out_then_clears(self):
        self.ctl("/__sim/fault", {"mode": "hang"})
        t = time.monotonic()
        with self.assertRaises((socket.timeout, TimeoutError, urllib.error.URLError)):
            urllib.request.urlopen(self.base + "/overview", timeout=1).read()
        self.assertLess(time.monotonic() - t, 3)
        self.ctl("/__sim/fault", {"mode": "none"})
        self.get_json("/overview")

    def test_count_and_paths(self):
        self.ctl("/__sim/fault", {"mode": "5xx", "paths": "/job-info", "count": 1})
        self.get_json("/overview")  # not matched
        st, _, _ = self.get("/job-info/1")
        self.assertIn(st, (500, 503))
        self.get_json("/job-info/1")  # count used up
        self.assertEqual(self.ctl("/__sim/fault", method="GET")["mode"], "none")

    def test_truncated(self):
        self.ctl("/__sim/fault", {"mode": "truncated"})
        c = http.client.HTTPConnection("127.0.0.1", self.sim.port, timeout=5)
        c.request("GET", "/running-jobs")
        r = c.getresponse()
        with self.assertRaises(http.client.IncompleteRead):
            r.read()
        c.close()

    def test_oversize(self):
        self.ctl("/__sim/fault", {"mode": "oversize", "size_mb": 2})
        st, h, b = self.get("/running-jobs", timeout=10)
        self.assertEqual(st, 200)
        self.assertGreaterEqual(len(b), 2 << 20)
        self.assertEqual(int(h["Content-Length"]), len(b))
        self.assertIsInstance(json.loads(b), list)


class TestLegacyPaged(StsimBase):
    scenario = os.path.join(SCEN, "legacy_paged.json")
    extra = ("--ctl-token", "s3cret")

    def ctl(self, path, body=None, method="POST"):
        st, _, b = req(self.base, path, method=method, body=body,
                       headers={"X-Sim-Token": "s3cret"})
        self.assertEqual(st, 200, b)
        return json.loads(b)

    def test_lists_always_paged(self):
        r = self.get_json("/running-jobs")
        self.assertEqual(list(r), ["data", "total"])
        self.assertEqual(r["total"], 1)
        f = self.get_json("/finished-jobs")
        self.assertEqual(f["total"], 2)
        self.assertEqual([j["jobStatus"] for j in f["data"]], ["FAILED", "FINISHED"])
        self.assertEqual(f["data"][1]["metrics"]["SourceReceivedQPS"], "1.0E-4")

    def test_control_token(self):
        st, _, _ = req(self.base, "/__sim/stats")
        self.assertEqual(st, 403)
        self.assertIn("total", self.ctl("/__sim/stats", method="GET"))


class TestProcess(unittest.TestCase):
    def test_pidfile_and_sigterm(self):
        sim = Sim(os.path.join(SCEN, "legacy_paged.json"))
        with open(sim.pidfile) as f:
            self.assertEqual(int(f.read()), sim.proc.pid)
        pidfile = sim.pidfile
        os.kill(sim.proc.pid, signal.SIGTERM)
        sim.proc.wait(5)
        self.assertEqual(sim.proc.returncode, 0)
        self.assertFalse(os.path.exists(pidfile))
        sim.stop()


if __name__ == "__main__":
    unittest.main()
