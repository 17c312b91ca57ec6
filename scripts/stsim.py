#!/usr/bin/env python3
"""stsim.py - a SeaTunnel (Zeta) REST API v2 simulator for stfs tests.

Python 3 stdlib only.  Loopback use; not a security boundary.

    stsim.py --scenario FILE --port P [--host 127.0.0.1] [--pidfile F]
             [--port-file F] [--ctl-token TOKEN|none]

--port 0 binds a free port.  Once bound, the simulator prints
"listening on PORT" on stdout (flushed) and writes PORT to --port-file.
SIGTERM/SIGINT stop it (and remove the pidfile).

Scenario file (written by scripts/genstate.py; only "jobs" is required):
  {
    "format": "stsim-scenario/1",
    "timezone": "UTC",                  # times below are rendered as given
    "legacy_paged": false,              # true: every list is {"data":[..],"total":N}
    "cluster": {
      "overview": {"projectVersion": "2.3.10", "gitCommitAbbrev": "...",
                   "totalSlot": "0", "unassignedSlot": "0", "workers": "2"},
      "members": [ {"isMaster": "true", "host": "...", "port": "5801", ...}, ...]
    },
    "jobs": [ {                         # every job the ENGINE knows
      "jobId": "<18 digits>", "jobName": str, "jobStatus": <JobStatus name>,
      "envOptions": {str: str}, "createTime": "yyyy-MM-dd HH:mm:ss",
      "finishTime": str|null (end states), "errorMsg": str|null (FAILED),
      "jobDag": {"jobId", "pipelineEdges": {"<pid>": [{"inputVertexId",
                 "targetVertexId"}]}, "envOptions", "vertexInfoMap": [...]},
      "pluginJarsUrls": [], "isStartWithSavePoint": bool,
      "metrics": {16 keys, string values, Table* keys are {table: str}} } ],
    "orphans": [jobId...], "storage": {...}   # generator info, ignored here
  }
A job whose jobStatus is an end state (FAILED, SAVEPOINT_DONE, CANCELED,
FINISHED, UNKNOWABLE) is a finished job (engine_finishedJobState); any other
state is a running job (engine_runningJobInfo).

Real API (SEATUNNEL.md 4; compact JSON, exact key order, Content-Type
application/json; errors {"status":"fail","message":..} with 400/500):
  GET  /overview                      all values strings
  GET  /running-jobs[?page=&rows=]    array, or {"data":[..],"total":N} with page
  GET  /finished-jobs[/][<STATE>][?page=&rows=]  by finishTime ascending
  GET  /job-info/<id>, /running-job/<id>   unknown -> 200 {"jobId":"<id>"}
  GET  /system-monitoring-information
  GET  /metrics, /openmetrics         Prometheus text (text/plain)
  POST /stop-job {"jobId":..,"isStopWithSavePoint":bool} -> {"jobId":"<id>"}
  POST /stop-jobs [{...}, ...]        -> [{"jobId":<long>}, ...]
Control API (not part of SeaTunnel; never subject to faults; with
--ctl-token T the header "X-Sim-Token: T" is required, else 403):
  GET    /__sim/stats        {"total":N,"paths":{"/running-jobs":n,..},"faulted":n}
  POST   /__sim/reset-stats
  GET    /__sim/fault        current fault
  POST   /__sim/fault {"mode": "none"|"5xx"|"garbage"|"hang"|"slow"|
                       "truncated"|"oversize", "delay_ms": N,
                       "paths": "/prefix" | ["/a","/b"] (optional),
                       "count": N (optional: affect N requests, then none),
                       "size_mb": N (oversize body size, default 64)}
       hang: no answer until the fault is cleared or 600 s, then the
       connection is closed; slow: sleep delay_ms then answer; garbage: 200
       with invalid JSON; 5xx: 500/503 alternately with the real error body;
       truncated: Content-Length of the full body, half of it sent, close;
       oversize: 200 application/json of size_mb MiB (a valid JSON array).
  POST   /__sim/job {"jobId": "..", "state"|"jobStatus": "..", other job
                     fields...}  add or change a job; moves it between running
                     and finished as the state dictates (finishTime set on
                     entering an end state, cleared on leaving it; errorMsg
                     cleared when leaving FAILED).  -> the job's API object
  DELETE /__sim/job/<id>     forget the job (history expiry) -> {"deleted":true}
  GET    /__sim/jobs         the raw scenario jobs (debugging)
"""

import argparse
import json
import os
import signal
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, unquote, urlsplit

JOB_STATUSES = ["INITIALIZING", "CREATED", "PENDING", "SCHEDULED", "RUNNING",
                "FAILING", "FAILED", "DOING_SAVEPOINT", "SAVEPOINT_DONE",
                "CANCELING", "CANCELED", "FINISHED", "UNKNOWABLE"]
END_STATES = {"FAILED", "SAVEPOINT_DONE", "CANCELED", "FINISHED", "UNKNOWABLE"}
METRIC_KEYS = ["SourceReceivedCount", "SinkWriteCount", "SourceReceivedBytes",
               "SinkWriteBytes", "SourceReceivedQPS", "SinkWriteQPS",
               "SourceReceivedBytesPerSeconds", "SinkWriteBytesPerSeconds",
               "TableSourceReceivedCount", "TableSinkWriteCount",
               "TableSourceReceivedBytes", "TableSinkWriteBytes",
               "TableSourceReceivedQPS", "TableSinkWriteQPS",
               "TableSourceReceivedBytesPerSeconds",
               "TableSinkWriteBytesPerSeconds"]
FAULT_MODES = {"none", "5xx", "garbage", "hang", "slow", "truncated", "oversize"}
HANG_MAX_S = 600
LONG_MAX = (1 << 63) - 1


class ApiError(Exception):
    def __init__(self, code, msg):
        Exception.__init__(self, msg)
        self.code = code
        self.msg = msg


def dumps(o):
    return json.dumps(o, separators=(",", ":"), ensure_ascii=False)


def fmt_now():
    return time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime())


def parse_long(s):
    """Long.parseLong semantics: NumberFormatException -> 400."""
    if s is None or s == "":
        raise ApiError(400, "The jobId must not be empty.")
    t = s[1:] if s[:1] in "+-" else s
    if not t or not t.isdigit() or not t.isascii():
        raise ApiError(400, 'For input string: "%s"' % s)
    v = int(s)
    if v > LONG_MAX or v < -LONG_MAX - 1:
        raise ApiError(400, 'For input string: "%s"' % s)
    return v


def default_metrics():
    m = {}
    for k in METRIC_KEYS:
        if k.startswith("Table"):
            m[k] = {}
        elif k.endswith("Count") or k.endswith("Bytes"):
            m[k] = "0"
        else:
            m[k] = "0.0"
    return m


class State:
    def __init__(self, scen):
        self.lock = threading.Lock()
        self.cluster = scen.get("cluster", {})
        self.legacy_paged = bool(scen.get("legacy_paged", False))
        self.jobs = {}
        for j in scen.get("jobs", []):
            self.jobs[str(j["jobId"])] = dict(j, jobId=str(j["jobId"]))
        self.stats = {}
        self.total = 0
        self.faulted = 0
        self.fault = {"mode": "none"}
        self.fault_gen = 0
        self.fault_cv = threading.Condition(self.lock)
        self.fivexx_flip = 0

    # ---------------------------------------------------------- rendering
    @staticmethod
    def running_obj(j):
        return {
            "jobId": j["jobId"],
            "jobName": j.get("jobName", ""),
            "jobStatus": j["jobStatus"],
            "envOptions": j.get("envOptions", {}),
            "createTime": j.get("createTime", ""),
            "jobDag": j.get("jobDag", {}),
            "pluginJarsUrls": j.get("pluginJarsUrls", []),
            "isStartWithSavePoint": bool(j.get("isStartWithSavePoint", False)),
            "metrics": j.get("metrics", {}),
        }

    @staticmethod
    def finished_obj(j):
        return {
            "jobId": j["jobId"],
            "jobName": j.get("jobName", ""),
            "jobStatus": j["jobStatus"],
            "errorMsg": j.get("errorMsg"),
            "createTime": j.get("createTime", ""),
            "finishTime": j.get("finishTime") or "",
            "jobDag": j.get("jobDag", {}),
            "pluginJarsUrls": [],
            "metrics": j.get("metrics", {}),
        }

    def obj(self, j):
        if j["jobStatus"] in END_STATES:
            return self.finished_obj(j)
        return self.running_obj(j)

    # ---------------------------------------------------------- queries
    def running(self):
        with self.lock:
            return [self.running_obj(j) for j in self.jobs.values()
                    if j["jobStatus"] not in END_STATES]

    def finished(self, state):
        with self.lock:
            js = [j for j in self.jobs.values() if j["jobStatus"] in END_STATES]
            if state:
                js = [j for j in js if j["jobStatus"] == state.upper()]
            js.sort(key=lambda j: (j.get("finishTime") or ""))
            return [self.finished_obj(j) for j in js]

    def job_info(self, jid):
        with self.lock:
            j = self.jobs.get(str(jid))
            return self.obj(j) if j else {"jobId": str(jid)}

    def overview(self):
        ov = dict(self.cluster.get("overview", {}))
        with self.lock:
            sts = [j["jobStatus"] for j in self.jobs.values()]
        out = {
            "projectVersion": str(ov.get("projectVersion", "2.3.10")),
            "gitCommitAbbrev": str(ov.get("gitCommitAbbrev", "bef7607")),
            "totalSlot": str(ov.get("totalSlot", "0")),
            "unassignedSlot": str(ov.get("unassignedSlot", "0")),
            "runningJobs": str(sum(1 for s in sts if s not in END_STATES)),
            "finishedJobs": str(sts.count("FINISHED")),
            "failedJobs": str(sts.count("FAILED")),
            "cancelledJobs": str(sts.count("CANCELED")),
            "workers": str(ov.get("workers", len(self.members()) or 1)),
        }
        return out

    def members(self):
        ms = self.cluster.get("members")
        if ms:
            return ms
        return [{"isMaster": "true", "host": "127.0.0.1", "port": "5801",
                 "processors": "2"}]

    def prometheus(self, openmetrics=False):
        with self.lock:
            sts = [j["jobStatus"] for j in self.jobs.values()]
        types = [("canceled", "CANCELED"), ("cancelling", "CANCELING"),
                 ("created", "CREATED"), ("failed", "FAILED"),
                 ("failing", "FAILING"), ("finished", "FINISHED"),
                 ("running", "RUNNING"), ("scheduled", "SCHEDULED")]
        lines = ["# HELP job_count All job counts of seatunnel cluster",
                 "# TYPE job_count gauge"]
        for t, s in types:
            lines.append('job_count{cluster="seatunnel",type="%s",} %.1f'
                         % (t, sts.count(s)))
        lines += ["# HELP node_count Cluster node total count",
                  "# TYPE node_count gauge",
                  'node_count{cluster="seatunnel",} %.1f' % len(self.members())]
        if openmetrics:
            lines.append("# EOF")
        return "\n".join(lines) + "\n"

    # ---------------------------------------------------------- mutations
    def set_job(self, body):
        if not isinstance(body, dict) or "jobId" not in body:
            raise ApiError(400, "jobId required")
        jid = str(parse_long(str(body["jobId"])))
        state = body.get("state", body.get("jobStatus"))
        with self.lock:
            j = self.jobs.get(jid)
            if j is None:
                if state is None:
                    raise ApiError(400, "state required for a new job")
                j = {"jobId": jid, "jobName": "sim_job", "jobStatus": "CREATED",
                     "envOptions": {"job.mode": "STREAMING"},
                     "createTime": fmt_now(), "finishTime": None,
                     "errorMsg": None,
                     "jobDag": {"jobId": jid, "pipelineEdges": {"1": []},
                                "envOptions": {"job.mode": "STREAMING"},
                                "vertexInfoMap": []},
                     "pluginJarsUrls": [], "isStartWithSavePoint": False,
                     "metrics": default_metrics()}
            else:
                j = dict(j)
            for k, v in body.items():
                if k not in ("jobId", "state"):
                    j[k] = v
            if state is not None:
                state = str(state).upper()
                if state not in JOB_STATUSES:
                    raise ApiError(400, "unknown state %s" % state)
                was_end = j.get("jobStatus") in END_STATES and jid in self.jobs
                j["jobStatus"] = state
                if state in END_STATES:
                    if not body.get("finishTime") and (not was_end
                                                       or not j.get("finishTime")):
                        j["finishTime"] = fmt_now()
                else:
                    if "finishTime" not in body:
                        j["finishTime"] = None
                    if "errorMsg" not in body:
                        j["errorMsg"] = None
            self.jobs[jid] = j
            return self.obj(j)

    def stop_job(self, body):
        if not isinstance(body, dict) or body.get("jobId") in (None, ""):
            raise ApiError(400, "The jobId must not be empty.")
        jid = str(parse_long(str(body["jobId"])))
        sp = body.get("isStopWithSavePoint", False)
        if isinstance(sp, str):
            sp = sp.lower() == "true"
        with self.lock:
            j = self.jobs.get(jid)
            if j is None:
                raise ApiError(500, "Job %s not found" % jid)
            if j["jobStatus"] not in END_STATES:
                j = dict(j, jobStatus="SAVEPOINT_DONE" if sp else "CANCELED",
                         finishTime=fmt_now())
                self.jobs[jid] = j
        return jid

    def forget(self, jid):
        with self.lock:
            return self.jobs.pop(str(jid), None) is not None

    # ---------------------------------------------------------- faults/stats
    def count(self, path):
        parts = path.split("/")
        prefix = "/" + parts[1] if len(parts) > 1 else path
        with self.lock:
            self.total += 1
            self.stats[prefix] = self.stats.get(prefix, 0) + 1

    def take_fault(self, path):
        """Return the fault to apply to this request (consuming count)."""
        with self.lock:
            f = self.fault
            if f["mode"] == "none":
                return None
            paths = f.get("paths")
            if paths:
                if isinstance(paths, str):
                    paths = [paths]
                if not any(path.startswith(p) for p in paths):
                    return None
            if f.get("count") is not None:
                if f["count"] <= 0:
                    return None
                f["count"] -= 1
                if f["count"] == 0:
                    self.fault = {"mode": "none"}
                    self.fault_gen += 1
                    self.fault_cv.notify_all()
            self.faulted += 1
            return dict(f, _gen=self.fault_gen)

    def set_fault(self, body):
        if not isinstance(body, dict):
            raise ApiError(400, "object expected")
        mode = body.get("mode", "none")
        if mode not in FAULT_MODES:
            raise ApiError(400, "unknown mode %r" % (mode,))
        f = {"mode": mode, "delay_ms": int(body.get("delay_ms", 0) or 0),
             "paths": body.get("paths"),
             "count": None if body.get("count") is None else int(body["count"]),
             "size_mb": int(body.get("size_mb", 64) or 64)}
        with self.lock:
            self.fault = f if mode != "none" else {"mode": "none"}
            self.fault_gen += 1
            self.fault_cv.notify_all()
            return dict(self.fault)

    def wait_hang(self, gen, secs):
        """Block until the fault generation changes or secs elapse."""
        deadline = time.monotonic() + secs
        with self.lock:
            while self.fault_gen == gen:
                left = deadline - time.monotonic()
                if left <= 0:
                    return
                self.fault_cv.wait(min(left, 1.0))


def page_of(items, q, always):
    """PageBaseServlet: with ?page= (or legacy_paged) -> {"data","total"}."""
    if "page" not in q and not always:
        return items
    total = len(items)
    if "page" not in q:
        return {"data": items, "total": total}
    try:
        page = int(q["page"][0])
        rows = int(q.get("rows", ["10"])[0])
    except ValueError:
        raise ApiError(400, "page and rows must be numbers")
    if page < 1 or rows < 1:
        raise ApiError(400, "page and rows must be greater than 0")
    start = (page - 1) * rows
    if start >= total and not (page == 1 and total == 0):
        raise ApiError(400, "page %d is out of range, total %d" % (page, total))
    return {"data": items[start:start + rows], "total": total}


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "Jetty(9.4.56.v20240826)"
    sys_version = ""
    st = None          # State
    ctl_token = None   # str or None

    def log_message(self, fmt, *args):  # quiet
        pass

    def version_string(self):
        return self.server_version

    # ---------------------------------------------------------- plumbing
    def send(self, code, body, ctype="application/json"):
        if isinstance(body, str):
            body = body.encode("utf-8")
        self.send_response(code)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)

    def send_json(self, code, obj):
        self.send(code, dumps(obj))

    def fail(self, code, msg):
        self.send_json(code, {"status": "fail", "message": msg})

    def read_body(self):
        n = int(self.headers.get("Content-Length") or 0)
        if n > 16 << 20:
            raise ApiError(400, "body too large")
        return self.rfile.read(n) if n > 0 else b""

    def read_json(self):
        raw = self.read_body()
        if not raw.strip():
            return None
        try:
            return json.loads(raw.decode("utf-8"))
        except (ValueError, UnicodeDecodeError) as e:
            raise ApiError(400, "Invalid JSON: %s" % e)

    def do_GET(self):
        self.dispatch("GET")

    def do_POST(self):
        self.dispatch("POST")

    def do_DELETE(self):
        self.dispatch("DELETE")

    def do_PUT(self):
        self.dispatch("PUT")

    def dispatch(self, method):
        u = urlsplit(self.path)
        path = unquote(u.path)
        q = parse_qs(u.query, keep_blank_values=True)
        try:
            if path.startswith("/__sim/") or path == "/__sim":
                if self.ctl_token and self.headers.get("X-Sim-Token") != self.ctl_token:
                    raise ApiError(403, "bad control token")
                self.control(method, path)
                return
            self.st.count(path)
            f = self.st.take_fault(path)
            if f and self.apply_fault(f, method, path, q):
                return
            self.api(method, path, q)
        except ApiError as e:
            self.fail(e.code, e.msg)
        except (BrokenPipeError, ConnectionResetError):
            self.close_connection = True
        except Exception as e:  # the real filter maps anything else to 500
            try:
                self.fail(500, "%s: %s" % (type(e).__name__, e))
            except OSError:
                self.close_connection = True

    # ---------------------------------------------------------- faults
    def apply_fault(self, f, method, path, q):
        """Returns True when the fault fully answered the request."""
        mode = f["mode"]
        if mode == "slow":
            time.sleep(f.get("delay_ms", 0) / 1000.0)
            return False
        if mode == "hang":
            secs = HANG_MAX_S
            if f.get("delay_ms"):
                secs = min(secs, f["delay_ms"] / 1000.0)
            self.st.wait_hang(f["_gen"], secs)
            self.close_connection = True
            return True
        if mode == "5xx":
            with self.st.lock:
                self.st.fivexx_flip += 1
                code = 500 if self.st.fivexx_flip % 2 else 503
            self.fail(code, "com.hazelcast.core.HazelcastInstanceNotActiveException: "
                            "Hazelcast instance is not active!")
            return True
        if mode == "garbage":
            self.send(200, '{"jobId":"12\x00<html>garbage ]]} not json')
            return True
        if mode == "truncated":
            body = self.render(method, path, q)
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body[:max(1, len(body) // 2)])
            self.wfile.flush()
            self.close_connection = True
            return True
        if mode == "oversize":
            size = f.get("size_mb", 64) << 20
            elem = b'{"jobId":"1","jobName":"' + b"x" * 1000 + b'"},'
            n = max(1, -(-size // len(elem)))
            total = 1 + n * len(elem) + 3  # '[' + n * 'elem,' + '{}]'
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(total))
            self.end_headers()
            self.wfile.write(b"[")
            chunk = elem * 64
            left = n
            while left >= 64:
                self.wfile.write(chunk)
                left -= 64
            self.wfile.write(elem * left)
            self.wfile.write(b"{}]")
            self.close_connection = True
            return True
        return False

    # ---------------------------------------------------------- API
    def render(self, method, path, q):
        """Body bytes of a normal answer (used by the truncated fault)."""
        try:
            code, obj = self.answer(method, path, q)
        except ApiError as e:
            obj = {"status": "fail", "message": e.msg}
        if isinstance(obj, tuple):
            return obj[0].encode()
        return dumps(obj).encode("utf-8")

    def api(self, method, path, q):
        code, obj = self.answer(method, path, q)
        if isinstance(obj, tuple):
            self.send(code, obj[0], obj[1])
        else:
            self.send_json(code, obj)

    def answer(self, method, path, q):
        st = self.st
        parts = [p for p in path.split("/")]
        head = parts[1] if len(parts) > 1 else ""
        rest = "/".join(parts[2:]) if len(parts) > 2 else None
        gets = {"overview", "running-jobs", "finished-jobs", "job-info",
                "running-job", "system-monitoring-information", "metrics",
                "openmetrics"}
        posts = {"stop-job", "stop-jobs"}
        if head in gets and method != "GET":
            raise ApiError(405, "HTTP method %s is not supported by this URL" % method)
        if head in posts and method != "POST":
            raise ApiError(405, "HTTP method %s is not supported by this URL" % method)
        if head == "overview" and not rest:
            return 200, st.overview()
        if head == "running-jobs" and not rest:
            return 200, page_of(st.running(), q, st.legacy_paged)
        if head == "finished-jobs":
            return 200, page_of(st.finished(rest or ""), q, st.legacy_paged)
        if head in ("job-info", "running-job"):
            jid = parse_long(rest or "")
            return 200, st.job_info(jid)
        if head == "system-monitoring-information" and not rest:
            return 200, st.members()
        if head in ("metrics", "openmetrics") and not rest:
            om = head == "openmetrics"
            ctype = ("application/openmetrics-text; version=1.0.0; charset=utf-8"
                     if om else "text/plain; version=0.0.4; charset=utf-8")
            return 200, (st.prometheus(om), ctype)
        if head == "stop-job" and not rest:
            jid = st.stop_job(self.read_json())
            return 200, {"jobId": jid}
        if head == "stop-jobs" and not rest:
            body = self.read_json()
            if not isinstance(body, list):
                raise ApiError(400, "array expected")
            return 200, [{"jobId": int(st.stop_job(b))} for b in body]
        return 404, ("<html><body><h2>HTTP ERROR 404 Not Found</h2></body></html>",
                     "text/html;charset=iso-8859-1")

    # ---------------------------------------------------------- control
    def control(self, method, path):
        st = self.st
        if path == "/__sim/stats" and method == "GET":
            with st.lock:
                self.send_json(200, {"total": st.total, "paths": dict(st.stats),
                                     "faulted": st.faulted})
            return
        if path == "/__sim/reset-stats" and method == "POST":
            self.read_body()
            with st.lock:
                st.stats, st.total, st.faulted = {}, 0, 0
            self.send_json(200, {"ok": True})
            return
        if path == "/__sim/fault":
            if method == "GET":
                with st.lock:
                    self.send_json(200, dict(st.fault))
                return
            if method == "POST":
                self.send_json(200, st.set_fault(self.read_json() or {}))
                return
        if path == "/__sim/job" and method == "POST":
            self.send_json(200, st.set_job(self.read_json()))
            return
        if path.startswith("/__sim/job/") and method == "DELETE":
            jid = path[len("/__sim/job/"):]
            self.read_body()
            if st.forget(jid):
                self.send_json(200, {"deleted": True})
            else:
                self.send_json(404, {"deleted": False})
            return
        if path == "/__sim/jobs" and method == "GET":
            with st.lock:
                self.send_json(200, list(st.jobs.values()))
            return
        raise ApiError(404, "no such control endpoint %s %s" % (method, path))


def main(argv=None):
    ap = argparse.ArgumentParser(description="SeaTunnel REST API v2 simulator")
    ap.add_argument("--scenario", required=True, help="scenario JSON file")
    ap.add_argument("--port", type=int, required=True, help="0 = any free port")
    ap.add_argument("--host", default="127.0.0.1")
    ap.add_argument("--pidfile")
    ap.add_argument("--port-file", help="write the bound port here")
    ap.add_argument("--ctl-token", default="none",
                    help="token required in X-Sim-Token for /__sim/ (none = open)")
    a = ap.parse_args(argv)
    with open(a.scenario) as f:
        scen = json.load(f)
    Handler.st = State(scen)
    Handler.ctl_token = None if a.ctl_token in (None, "", "none") else a.ctl_token
    ThreadingHTTPServer.daemon_threads = True
    ThreadingHTTPServer.allow_reuse_address = True
    srv = ThreadingHTTPServer((a.host, a.port), Handler)
    port = srv.server_address[1]

    def stop(signum, frame):
        raise SystemExit(0)

    signal.signal(signal.SIGTERM, stop)
    try:
        if a.pidfile:
            with open(a.pidfile, "w") as f:
                f.write("%d\n" % os.getpid())
        if a.port_file:
            tmp = a.port_file + ".tmp"
            with open(tmp, "w") as f:
                f.write("%d\n" % port)
            os.replace(tmp, a.port_file)
        print("listening on %d" % port, flush=True)
        srv.serve_forever(poll_interval=0.2)
    except (KeyboardInterrupt, SystemExit):
        pass
    finally:
        srv.server_close()
        if a.pidfile:
            try:
                os.unlink(a.pidfile)
            except OSError:
                pass
    return 0


if __name__ == "__main__":
    sys.exit(main())
