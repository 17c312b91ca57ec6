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
                "startTime", "jobDag", "pluginJarsUrls", "isStartWithSavePoint",
                "metrics"]
FINISHED_KEYS = ["jobId", "jobName", "jobStatus", "errorMsg", "createTime",
                 "startTime", "finishTime", "jobDag", "pluginJarsUrls", "metrics"]
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

    def test_running_jobs_no_paging_in_23(self):
        # 2.3.12 has no PageBaseServlet: ?page=&rows= is ignored
        allj = self.get_json("/running-jobs")
        self.assertEqual(self.get_json("/running-jobs?page=1&rows=2"), allj)
        self.assertEqual(self.get_json("/running-jobs?page=0"), allj)
        self.assertEqual(self.get_json("/finished-jobs?page=99&rows=1"),
                         self.get_json("/finished-jobs"))

    def test_pending_jobs_are_running_and_start_time(self):
        rj = {j["jobId"]: j for j in self.get_json("/running-jobs")}
        scen = {j["jobId"]: j for j in self.scen["jobs"]}
        pend = [i for i, j in scen.items() if j["jobStatus"] == "PENDING"]
        self.assertTrue(pend)
        for i in pend:
            self.assertIn(i, rj)
            self.assertEqual(rj[i]["startTime"], "")
        for i, j in rj.items():
            if j["jobStatus"] in ("RUNNING", "SCHEDULED", "FAILING"):
                self.assertRegex(j["startTime"], r"^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d$")
                self.assertGreaterEqual(j["startTime"], j["createTime"])
        # a job added without startTime gets one once it is scheduled
        jid = "912345678901234590"
        o = self.ctl("/__sim/job", {"jobId": jid, "state": "PENDING"})
        self.assertEqual(o["startTime"], "")
        o = self.ctl("/__sim/job", {"jobId": jid, "state": "RUNNING"})
        self.assertRegex(o["startTime"], r"^\d{4}-")
        self.ctl("/__sim/job/" + jid, method="DELETE")

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
        # mounted at /finished-jobs/*: the whole rest is the state
        self.assertEqual(self.get_json("/finished-jobs/FAILED/x"), [])

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
        self.assertEqual(e["message"], 'For input string: ""')
        self.get_json("/job-info/99999999999999999999", code=400)
        e = self.get_json("/job-info/123/x", code=400)
        self.assertEqual(e["message"], 'For input string: "123/x"')

    def test_system_monitoring_and_metrics(self):
        sm = self.get_json("/system-monitoring-information")
        self.assertIsInstance(sm, list)
        for m in sm:
            self.assertEqual(list(m)[:3], ["isMaster", "host", "port"])
            self.assertTrue(all(isinstance(v, str) for v in m.values()))
        # telemetry is off by default: both text/plain and empty
        for path in ("/metrics", "/openmetrics"):
            st, h, body = self.get(path)
            self.assertEqual(st, 200)
            self.assertEqual(h["Content-Type"], "text/plain;charset=utf-8")
            self.assertEqual(body, b"")

    def test_json_content_type_is_jettys(self):
        st, h, _ = self.get("/overview")
        self.assertEqual(h["Content-Type"], "application/json;charset=utf-8")

    def test_no_checkpoint_endpoints_in_23(self):
        jid = self.scen["jobs"][0]["jobId"]
        for p in ("/jobs/checkpoints/" + jid, "/jobs/checkpoints/history/" + jid,
                  "/pending-jobs"):
            st, h, b = self.get(p)
            self.assertEqual(st, 404, p)
            self.assertTrue(h["Content-Type"].startswith("text/html"))

    def test_overview_has_no_pending_jobs_in_23(self):
        ov = self.get_json("/overview")
        self.assertNotIn("pendingJobs", ov)
        self.assertEqual(ov["projectVersion"], "2.3.12")

    def test_sub_paths_are_served(self):
        # servlets are mounted at <path>/*
        for base in ("/overview", "/running-jobs", "/system-monitoring-information"):
            self.assertEqual(self.get_json(base + "/x"), self.get_json(base), base)
            self.assertEqual(self.get_json(base + "/"), self.get_json(base), base)
        st, _, _ = self.get("/overviewx")
        self.assertEqual(st, 404)
        r = self.get_json("/stop-job/x", method="POST", body={"jobId": 5})
        self.assertEqual(r, {"jobId": "5"})

    def test_unknown_path_and_method(self):
        st, h, b = self.get("/nope")
        self.assertEqual(st, 404)
        self.assertEqual(h["Content-Type"], "text/html;charset=iso-8859-1")
        t = b.decode("iso-8859-1")
        self.assertIn("<title>Error 404 Not Found</title>", t)
        self.assertIn("<h2>HTTP ERROR 404 Not Found</h2>", t)
        self.assertIn("<tr><th>URI:</th><td>/nope</td></tr>", t)
        for path, method, body in (("/overview", "POST", {}),
                                   ("/running-jobs/x", "DELETE", None),
                                   ("/stop-job", "GET", None),
                                   ("/stop-jobs", "PUT", [])):
            st, h, b = self.get(path, method=method, body=body)
            self.assertEqual(st, 405, (path, method))
            self.assertTrue(h["Content-Type"].startswith("text/html"))
            msg = "HTTP method %s is not supported by this URL" % method
            self.assertIn("<h2>HTTP ERROR 405 %s</h2>" % msg, b.decode("iso-8859-1"))

    def wait_state(self, jid, want, secs=5):
        t = time.monotonic() + secs
        while True:
            s = self.get_json("/job-info/" + jid).get("jobStatus")
            if s == want or time.monotonic() > t:
                return s
            time.sleep(0.05)

    def test_stop_job_is_asynchronous(self):
        jid = "912345678901234501"
        o = self.ctl("/__sim/job", {"jobId": jid, "state": "RUNNING",
                                    "jobName": "added job"})
        self.assertEqual(list(o), RUNNING_KEYS)
        self.assertIn(jid, [j["jobId"] for j in self.get_json("/running-jobs")])
        r = self.get_json("/stop-job", method="POST",
                          body={"jobId": int(jid), "isStopWithSavePoint": True})
        self.assertEqual(r, {"jobId": jid})
        o = self.get_json("/job-info/" + jid)
        self.assertEqual(o["jobStatus"], "DOING_SAVEPOINT")
        self.assertIn(jid, [j["jobId"] for j in self.get_json("/running-jobs")])
        self.assertEqual(self.wait_state(jid, "SAVEPOINT_DONE"), "SAVEPOINT_DONE")
        o = self.get_json("/job-info/" + jid)
        self.assertRegex(o["finishTime"], r"^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d$")
        self.assertNotIn(jid, [j["jobId"] for j in self.get_json("/running-jobs")])
        self.assertIn(jid, [j["jobId"] for j in
                            self.get_json("/finished-jobs/savepoint_done")])
        o = self.ctl("/__sim/job", {"jobId": jid, "state": "RUNNING"})
        self.assertEqual(o["jobStatus"], "RUNNING")
        # the id is echoed as given (a string here)
        r = self.get_json("/stop-job", method="POST", body={"jobId": jid})
        self.assertEqual(r, {"jobId": jid})
        self.assertEqual(self.get_json("/job-info/" + jid)["jobStatus"], "CANCELING")
        self.assertEqual(self.wait_state(jid, "CANCELED"), "CANCELED")
        self.assertEqual(self.ctl("/__sim/job/" + jid, method="DELETE"),
                         {"deleted": True})
        self.assertEqual(self.get_json("/job-info/" + jid), {"jobId": jid})

    def test_stop_job_answers(self):
        # unknown job: 200 with the id as given, and nothing happens
        self.assertEqual(self.get_json("/stop-job", method="POST",
                                       body={"jobId": "0042"}), {"jobId": "0042"})
        self.assertEqual(self.get_json("/job-info/42"), {"jobId": "42"})
        e = self.get_json("/stop-job", method="POST", body={}, code=400)
        self.assertEqual(e, {"status": "fail", "message": "jobId cannot be empty."})
        e = self.get_json("/stop-job", method="POST", body={"jobId": None}, code=400)
        self.assertEqual(e["message"], "jobId cannot be empty.")
        st, _, b = req(self.base, "/stop-job", method="POST", body=None)
        self.assertEqual(st, 400)
        self.assertEqual(json.loads(b), {"status": "fail",
                                         "message": "Request body is empty."})
        e = self.get_json("/stop-job", method="POST", body={"jobId": "abc"}, code=400)
        self.assertEqual(e["message"], 'For input string: "abc"')

    def test_stop_jobs(self):
        a, b = "912345678901234511", "912345678901234512"
        for j in (a, b):
            self.ctl("/__sim/job", {"jobId": j, "state": "RUNNING"})
        r = self.get_json("/stop-jobs", method="POST",
                          body=[{"jobId": int(a)}, {"jobId": int(b),
                                                    "isStopWithSavePoint": True}])
        self.assertEqual(r, [{"jobId": int(a)}, {"jobId": int(b)}])
        st, _, raw = self.get("/stop-jobs", method="POST", body=[{"jobId": int(a)}])
        self.assertEqual(raw.decode(), '[{"jobId":%s}]' % a)
        self.assertEqual(self.wait_state(a, "CANCELED"), "CANCELED")
        self.assertEqual(self.wait_state(b, "SAVEPOINT_DONE"), "SAVEPOINT_DONE")
        # string ids: ClassCastException -> 500 (after the stop was issued)
        self.ctl("/__sim/job", {"jobId": a, "state": "RUNNING"})
        e = self.get_json("/stop-jobs", method="POST", body=[{"jobId": a}], code=500)
        self.assertEqual(e["status"], "fail")
        self.assertIn("java.lang.String cannot be cast", e["message"])
        self.assertEqual(self.wait_state(a, "CANCELED"), "CANCELED")
        # ids that fit in 32 bits come out of Jackson as Integer: 500 as well
        e = self.get_json("/stop-jobs", method="POST", body=[{"jobId": 7}], code=500)
        self.assertIn("java.lang.Integer cannot be cast", e["message"])
        st, _, b2 = req(self.base, "/stop-jobs", method="POST", body=None)
        self.assertEqual(st, 400)
        for j in (a, b):
            self.ctl("/__sim/job/" + j, method="DELETE")

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


def write_scenario(tmpdir, scen, **changes):
    d = dict(scen, **changes)
    path = os.path.join(tmpdir, "scen.json")
    with open(path, "w") as f:
        json.dump(d, f)
    return path


class TestEngineFaults23(unittest.TestCase):
    """The 2.3.12 whole-answer failures (issue #10041, #10695, members)."""
    version = "2.3"

    @classmethod
    def setUpClass(cls):
        with open(os.path.join(SCEN, "generated_seed1.json")) as f:
            scen = json.load(f)
        cls.tmp = tempfile.mkdtemp(prefix="stsim-faults-")
        jobs = []
        for j in scen["jobs"]:
            j = dict(j)
            if j["jobStatus"] == "FAILED":
                j["__missingDag"] = True
                cls.nodag = j["jobId"]
            if j["jobStatus"] == "FINISHED":
                j["__missingMetrics"] = True
                cls.nometrics = j["jobId"]
            jobs.append(j)
        cls.scen = dict(scen, jobs=jobs)
        path = write_scenario(cls.tmp, cls.scen)
        cls.sim = Sim(path, "--version", cls.version)
        cls.base = cls.sim.base

    @classmethod
    def tearDownClass(cls):
        cls.sim.stop()
        shutil.rmtree(cls.tmp, ignore_errors=True)

    def get(self, path, **kw):
        st, h, b = req(self.base, path, **kw)
        return st, json.loads(b) if b else None

    def test_missing_dag_breaks_every_list_holding_the_job(self):
        npe = {"status": "fail", "message": None}
        self.assertEqual(self.get("/finished-jobs"), (500, npe))
        self.assertEqual(self.get("/finished-jobs/"), (500, npe))
        self.assertEqual(self.get("/finished-jobs/failed"), (500, npe))
        self.assertEqual(self.get("/job-info/" + self.nodag), (500, npe))
        # lists without that job still answer
        st, fin = self.get("/finished-jobs/CANCELED")
        self.assertEqual(st, 200)
        self.assertTrue(fin)
        self.assertEqual(self.get("/running-jobs")[0], 200)

    def test_missing_metrics_breaks_job_info(self):
        self.assertEqual(self.get("/job-info/" + self.nometrics),
                         (500, {"status": "fail", "message": None}))
        st, fin = self.get("/finished-jobs/FINISHED")
        self.assertEqual(st, 200)
        self.assertIn(self.nometrics, [j["jobId"] for j in fin])

    def test_missing_dag_set_by_control(self):
        # __sim/job can set and clear the marker on a job
        jid = "912345678901234599"
        r = req(self.base, "/__sim/job", method="POST",
                body={"jobId": jid, "state": "SAVEPOINT_DONE", "__missingDag": True})
        self.assertEqual(r[0], 200)
        self.assertEqual(self.get("/finished-jobs/SAVEPOINT_DONE")[0], 500)
        req(self.base, "/__sim/job", method="POST",
            body={"jobId": jid, "__missingDag": False})
        self.assertEqual(self.get("/finished-jobs/SAVEPOINT_DONE")[0], 200)
        req(self.base, "/__sim/job/" + jid, method="DELETE")

    def test_member_fail_fault(self):
        self.assertEqual(self.get("/system-monitoring-information")[0], 200)
        r = req(self.base, "/__sim/fault", method="POST", body={"mode": "member_fail"})
        self.assertEqual(r[0], 200)
        try:
            self.assertEqual(self.get("/system-monitoring-information"),
                             (500, {"status": "fail", "message": None}))
            self.assertEqual(self.get("/system-monitoring-information/x")[0], 500)
            self.assertEqual(self.get("/overview")[0], 200)  # only that servlet
        finally:
            req(self.base, "/__sim/fault", method="POST", body={"mode": "none"})
        self.assertEqual(self.get("/system-monitoring-information")[0], 200)


class TestEngineFaults3(TestEngineFaults23):
    """3.x: the missing-DAG NPE is fixed (#10599), missing metrics are empty."""
    version = "3"

    def test_missing_dag_breaks_every_list_holding_the_job(self):
        st, fin = self.get("/finished-jobs")
        self.assertEqual(st, 200)
        j = [x for x in fin if x["jobId"] == self.nodag][0]
        self.assertEqual(j["jobDag"], {})
        st, o = self.get("/job-info/" + self.nodag)
        self.assertEqual(st, 200)
        self.assertEqual(o["jobDag"], {})

    def test_missing_metrics_breaks_job_info(self):
        st, o = self.get("/job-info/" + self.nometrics)
        self.assertEqual(st, 200)
        self.assertEqual(o["metrics"]["SourceReceivedCount"], "0")
        self.assertEqual(o["metrics"]["TableSourceReceivedCount"], {})

    def test_missing_dag_set_by_control(self):
        pass


class TestVersion3(StsimBase):
    extra = ("--version", "3")

    def test_paging(self):
        allj = self.get_json("/running-jobs")
        self.assertIsInstance(allj, list)  # without page: still an array
        p = self.get_json("/running-jobs?page=1&rows=2")
        self.assertEqual(list(p), ["data", "total"])
        self.assertEqual(p["total"], len(allj))
        self.assertEqual(p["data"], allj[:2])
        self.assertEqual(self.get_json("/running-jobs?page=2&rows=2")["data"], allj[2:4])
        self.assertEqual(len(self.get_json("/running-jobs?page=1")["data"]),
                         min(10, len(allj)))
        e = self.get_json("/running-jobs?page=0", code=400)
        self.assertEqual(e, {"status": "fail",
                             "message": "Page number must be greater than 0"})
        e = self.get_json("/running-jobs?page=99&rows=2", code=400)
        self.assertEqual(e["message"], "Page number exceeds total pages")
        e = self.get_json("/running-jobs?page=x", code=400)
        self.assertEqual(e["message"], 'For input string: "x"')
        fj = self.get_json("/finished-jobs")
        self.assertEqual(self.get_json("/finished-jobs?page=1&rows=1"),
                         {"data": fj[:1], "total": len(fj)})
        self.get_json("/finished-jobs?page=%d&rows=1" % (len(fj) + 1), code=400)
        # an empty list has no page 1
        self.get_json("/finished-jobs/BOGUS?page=1", code=400)

    def test_overview_pending_jobs(self):
        ov = self.get_json("/overview")
        self.assertEqual(list(ov), OVERVIEW_KEYS + ["pendingJobs"])
        n = sum(1 for j in self.scen["jobs"] if j["jobStatus"] == "PENDING")
        self.assertEqual(ov["pendingJobs"], str(n))
        self.assertEqual(ov["projectVersion"], "3.1.0")

    def test_job_info_diagnostics(self):
        for j in self.scen["jobs"]:
            o = self.get_json("/job-info/" + j["jobId"])
            if j["jobStatus"] in END:
                self.assertEqual(list(o), FINISHED_KEYS)
                continue
            self.assertEqual(list(o), RUNNING_KEYS + ["diagnostics"])
            d = o["diagnostics"]
            self.assertIsInstance(d, dict)
            self.assertEqual(d["restoreCount"], 0)
            self.assertEqual([p["pipelineId"] for p in d["pipelines"]],
                             [int(x) for x in j["jobDag"]["pipelineEdges"]])
        # lists carry no diagnostics
        for j in self.get_json("/running-jobs"):
            self.assertEqual(list(j), RUNNING_KEYS)

    def test_table_metric_keys_carry_the_vertex(self):
        seen = 0
        for j in self.get_json("/running-jobs") + self.get_json("/finished-jobs"):
            m = j["metrics"]
            for k in ("SinkCommittedCount", "SinkCommittedQPS", "IntermediateQueueSize",
                      "TableSinkCommittedCount"):
                self.assertIn(k, m)
            for k, v in m.items():
                if not k.startswith("Table"):
                    self.assertNotIn("E", v, k)  # BigDecimal.toPlainString
                    continue
                want = "Source[" if k.startswith("TableSource") else "Sink["
                for t in v:
                    self.assertTrue(t.startswith(want), (k, t))
                    self.assertRegex(t, r"^(Source|Sink)\[\d+\]\..+")
                    seen += 1
        self.assertGreater(seen, 0)

    def test_plain_rates(self):
        sys.path.insert(0, os.path.dirname(SIM))
        import stsim
        # BigDecimal(Double.toString(x)).toPlainString()
        self.assertEqual(stsim.plain("1.0E-4"), "0.00010")
        self.assertEqual(stsim.plain("1.0E7"), "10000000")
        self.assertEqual(stsim.plain("1.2345678E7"), "12345678")
        self.assertEqual(stsim.plain("20.0"), "20.0")
        self.assertEqual(stsim.plain("0"), "0")

    def test_stop_job_same_as_23(self):
        e = self.get_json("/stop-job", method="POST", body={}, code=400)
        self.assertEqual(e["message"], "jobId cannot be empty.")


class TestTelemetry(StsimBase):
    extra = ("--telemetry",)

    def test_metrics_with_telemetry(self):
        st, h, body = self.get("/metrics")
        self.assertEqual(st, 200)
        self.assertEqual(h["Content-Type"], "text/plain;charset=utf-8")
        text = body.decode()
        self.assertIn('job_count{cluster="seatunnel",type="running",}', text)
        self.assertIn("# TYPE job_count gauge", text)
        st, h, body = self.get("/openmetrics")
        self.assertEqual(h["Content-Type"], "text/plain;charset=utf-8")
        self.assertTrue(body.decode().endswith("# EOF\n"))


class TestScenarioSwitches(unittest.TestCase):
    """version, telemetry, stop_delay_ms and member_fail from the scenario."""

    def test_scenario_switches(self):
        with open(os.path.join(SCEN, "generated_seed1.json")) as f:
            scen = json.load(f)
        tmp = tempfile.mkdtemp(prefix="stsim-switch-")
        try:
            cl = dict(scen["cluster"], member_fail=True)
            path = write_scenario(tmp, scen, version="3.1.0", telemetry=True,
                                  stop_delay_ms=0, cluster=cl)
            sim = Sim(path)
            try:
                st, _, b = req(sim.base, "/overview")
                self.assertIn("pendingJobs", json.loads(b))
                st, _, b = req(sim.base, "/metrics")
                self.assertIn(b"job_count", b)
                st, _, b = req(sim.base, "/system-monitoring-information")
                self.assertEqual((st, json.loads(b)),
                                 (500, {"status": "fail", "message": None}))
                jid = "912345678901234577"
                req(sim.base, "/__sim/job", method="POST",
                    body={"jobId": jid, "state": "RUNNING"})
                req(sim.base, "/stop-job", method="POST", body={"jobId": jid})
                time.sleep(0.05)
                st, _, b = req(sim.base, "/job-info/" + jid)
                self.assertEqual(json.loads(b)["jobStatus"], "CANCELED")
            finally:
                sim.stop()
            # --version wins over the scenario; a bad one is refused
            sim = Sim(path, "--version", "2.3")
            try:
                st, _, b = req(sim.base, "/overview")
                self.assertNotIn("pendingJobs", json.loads(b))
            finally:
                sim.stop()
            r = subprocess.run([sys.executable, SIM, "--scenario", path, "--port", "0",
                                "--version", "2.2"], capture_output=True, text=True,
                               timeout=10)
            self.assertEqual(r.returncode, 2)
            self.assertIn("unsupported engine version", r.stderr)
        finally:
            shutil.rmtree(tmp, ignore_errors=True)


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


class TestVersionHz(StsimBase):
    """--version 2.3.8: the REST API on Hazelcast's port, as the real 2.3.8
    node answers (test_sim_agrees.sh compares it with one)."""
    scenario = os.path.join(SCEN, "engine-2.3.8.json")
    extra = ("--version", "2.3.8")
    M = "/hazelcast/rest/maps"

    def job(self, name):
        return next(j for j in self.scen["jobs"] if j["jobName"] == name)

    def test_paths(self):
        st, h, b = self.get(self.M + "/nosuch")
        self.assertEqual((st, b, h.get("Content-Type")), (400, b"", None))
        with self.assertRaises(Exception):  # not at the root: no answer
            self.get("/overview")
        st, h, b = self.get(self.M + "/overview/x")
        self.assertEqual((st, h["Content-Type"]), (200, "application/json"))
        ov = json.loads(b)
        self.assertEqual(ov["projectVersion"], "2.3.8")
        self.assertNotIn("pendingJobs", ov)
        self.assertTrue(all(isinstance(v, str) for v in ov.values()))
        st, h, b = self.get("/hazelcast/rest/instance/openmetrics")
        self.assertEqual((st, h["Content-Type"], b), (200, "text/plain", b"# EOF\n"))
        e = self.get_json(self.M + "/job-info/abc", code=500)
        self.assertEqual(e["message"], 'For input string: "abc"')
        e = self.get_json(self.M + "/job-info", code=500)
        self.assertEqual(e["message"], 'For input string: "%s/job-info"' % self.M)

    def test_dag_and_no_start_time(self):
        s = self.get_json(self.M + "/job-info/" + self.job("two")["jobId"])
        self.assertNotIn("startTime", s)
        self.assertEqual(sorted(s["jobDag"]), ["edges", "vertices"])
        self.assertEqual(s["jobDag"]["vertices"][0],
                         {"id": 1, "name": "Source[0]-FakeSource(id=1)", "parallelism": 1})
        self.assertEqual(s["jobDag"]["edges"][1],
                         {"inputVertex": "Source[1]-FakeSource",
                          "targetVertex": "Sink[1]-Console-MultiTableSink"})
        f = self.get_json(self.M + "/job-info/" + self.job("f")["jobId"])
        self.assertNotIn("startTime", f)
        dag = json.loads(f["jobDag"])  # a JSON string
        self.assertEqual(dag["pipelineEdges"],
                         {"1": [{"inputVertexId": 1, "targetVertexId": 2}]})
        self.assertEqual(dag["vertexInfoMap"]["1"]["type"], "SOURCE")

    def test_restored_job_listed_twice(self):
        sp = self.job("sp")["jobId"]
        run = [j["jobId"] for j in self.get_json(self.M + "/running-jobs")]
        fin = {j["jobId"]: j["jobStatus"]
               for j in self.get_json(self.M + "/finished-jobs/")}
        self.assertIn(sp, run)
        self.assertEqual(fin[sp], "SAVEPOINT_DONE")
        self.assertEqual(self.get_json(self.M + "/job-info/" + sp)["jobStatus"], "RUNNING")
        # a job that ends again leaves the old record; restoring it keeps one
        self.ctl("/__sim/job", {"jobId": sp, "state": "FAILED"})
        fin = [j for j in self.get_json(self.M + "/finished-jobs") if j["jobId"] == sp]
        self.assertEqual([j["jobStatus"] for j in fin], ["FAILED"])
        self.ctl("/__sim/job", {"jobId": sp, "state": "RUNNING"})
        fin = [j for j in self.get_json(self.M + "/finished-jobs") if j["jobId"] == sp]
        self.assertEqual([j["jobStatus"] for j in fin], ["FAILED"])

    def test_stop_job(self):
        st, _, b = self.get(self.M + "/stop-job")  # GET of a POST path
        self.assertEqual((st, b), (400, b""))
        o = self.get_json(self.M + "/stop-job", method="POST",
                          body={"jobId": 123, "isStopWithSavePoint": False})
        self.assertEqual(o, {"jobId": "123"})


if __name__ == "__main__":
    unittest.main()
