#!/usr/bin/env python3
"""stsim.py - a SeaTunnel (Zeta) REST API v2 simulator for stfs tests.

Python 3 stdlib only.  Loopback use; not a security boundary.

    stsim.py --scenario FILE --port P [--host 127.0.0.1] [--pidfile F]
             [--basic-auth USER:PASSWORD] [--tls-cert PEM --tls-key PEM]
             [--port-file F] [--ctl-token TOKEN|none] [--version 2.3|2.3.8|3]
             [--stop-delay-ms MS] [--telemetry]

--port 0 binds a free port.  Once bound, the simulator prints
"listening on PORT" on stdout (flushed) and writes PORT to --port-file.
SIGTERM/SIGINT stop it (and remove the pidfile).

--version picks the engine line whose REST shapes are served (default: the
scenario's "version", else 2.3; "2.3.12", "3.1.0" etc. are accepted):
  2.3  the 2.3 line (2.3.12): plain arrays only (?page=&rows= is ignored), no
       /jobs/checkpoints/*, no "pendingJobs" in /overview, table metric keys
       are bare table names, rates in Double.toString form ("1.0E-4"), and
       the 2.3.12 failures below (__missingDag, __missingMetrics).
  3    3.x (3.1.0): ?page=N[&rows=R] -> {"data":[..],"total":N} (no page ->
       still a plain array; page < 1 or past the end -> 400), "pendingJobs"
       in /overview, a "diagnostics" object on /job-info of running jobs
       (shape not confirmed against a real 3.1.0), table metric keys
       "Source[0].db.table"/"Sink[0].db.table" (the source or sink vertex
       that carries the table; when several do, the lowest one), SinkCommitted*/
       IntermediateQueueSize keys, rates in BigDecimal.toPlainString form.
  2.3.8 (or 2.3-hz; any 2.3.0-2.3.8) the 2.3 line before Jetty's REST v2,
       as a real 2.3.8 node answers (tests/integration/test_sim_agrees.sh
       compares the two): the API under /hazelcast/rest/maps/<servlet>, and
       /hazelcast/rest/instance/{metrics,openmetrics} (text/plain; empty and
       "# EOF\n" without telemetry); Content-Type application/json (no
       charset); GET of an unknown or POST-only path -> 400 with an empty
       body and no Content-Type; HEAD/DELETE -> 200 empty; PUT, or POST of a
       GET path without a key -> 400 "Missing map name" (with a key, 200
       empty: Hazelcast would store it into an IMap); a path outside
       /hazelcast/rest/ -> the connection closes without an answer; a bad or
       missing job id -> 500 'For input string: ".."' (the whole path when
       empty); POST /stop-job without Content-Length -> 500; no startTime; a
       running job's jobDag is the logical DAG {"vertices":[{id,name,
       parallelism}],"edges":[{inputVertex,targetVertex}]} (names like
       "Source[0]-FakeSource(id=1)"), a finished job's the physical DAG as a
       JSON *string* {"jobId":<number>,"pipelineEdges":{..},"vertexInfoMap":
       {"<id>":{vertexId,type,connectorType}}}; a restored job (running
       again after an end state) stays listed in /finished-jobs with its old
       end state ("finishedRun" in the scenario, set when /__sim/job moves a
       job from an end state to a running one, dropped when it ends again)
       while /running-jobs and /job-info say it runs.
--stop-delay-ms (default: scenario "stop_delay_ms", else 500): how long a
stopped job stays in CANCELING / DOING_SAVEPOINT before it ends.
--telemetry (or scenario "telemetry": true): /metrics and /openmetrics carry
Prometheus text; without it both answer an empty text/plain body, as the
engine does unless seatunnel.engine.telemetry.metric.enabled is true.

Scenario file (written by scripts/genstate.py; only "jobs" is required):
  {
    "format": "stsim-scenario/1",
    "timezone": "UTC",                  # times below are rendered as given
    "version": "2.3",                   # optional, see --version (2.3, 2.3.8, 3)
    "stop_delay_ms": 500,               # optional, see --stop-delay-ms
    "telemetry": false,                 # optional, see --telemetry
    "legacy_paged": false,              # true: every list is {"data":[..],
                                        # "total":N} even without ?page= (no
                                        # real engine does this; a robustness
                                        # knob for the client's page walk)
    "cluster": {
      "overview": {"projectVersion": "2.3.12", "gitCommitAbbrev": "...",
                   "totalSlot": "0", "unassignedSlot": "0", "workers": "2"},
      "members": [ {"isMaster": "true", "host": "...", "port": "5801", ...}, ...],
      "member_fail": false              # true: as the member_fail fault
    },
    "jobs": [ {                         # every job the ENGINE knows
      "jobId": "<18 digits>", "jobName": str, "jobStatus": <JobStatus name>,
      "envOptions": {str: str}, "createTime": "yyyy-MM-dd HH:mm:ss",
      "startTime": str ("" before SCHEDULED; derived from createTime when
                   the key is absent),
      "finishTime": str|null (end states), "errorMsg": str|null (FAILED),
      "jobDag": {"jobId", "pipelineEdges": {"<pid>": [{"inputVertexId",
                 "targetVertexId"}]}, "envOptions", "vertexInfoMap": [...]},
      "pluginJarsUrls": [], "isStartWithSavePoint": bool,
      "metrics": {16 keys, string values, Table* keys are {table: str}},
      "finishedRun": {"jobStatus", "createTime", "finishTime", "errorMsg"},
                                        # 2.3.8: a running job's old end
                                        # state, still in /finished-jobs
      "__missingDag": bool,             # 2.3.12 fault, see below
      "__missingMetrics": bool } ],     # 2.3.12 fault, see below
    "orphans": [jobId...], "storage": {...}   # generator info, ignored here
  }
A job whose jobStatus is an end state (FAILED, SAVEPOINT_DONE, CANCELED,
FINISHED, UNKNOWABLE) is a finished job (engine_finishedJobState); any other
state, PENDING included, is a running job (engine_runningJobInfo).

Real API (REST API v2 of 2.3.x and 3.x, README "Where the state comes from"; compact JSON, exact key order, Content-Type
application/json;charset=utf-8; errors {"status":"fail","message":..} with
400 for IllegalArgumentException/NumberFormatException, else 500; an NPE has
"message":null).  Every servlet is mounted at <path>/*, so /overview/x or
/running-jobs/ are served as /overview and /running-jobs.  Unknown paths and
wrong methods get Jetty's HTML 404 / 405 pages, not JSON.
  GET  /overview                      all values strings
  GET  /running-jobs[?page=&rows=]    array; {"data":[..],"total":N} with page (3)
  GET  /finished-jobs[/][<STATE>][?page=&rows=]  by finishTime ascending; the
                                      whole rest of the path is the state
  GET  /job-info/<id>, /running-job/<id>   unknown -> 200 {"jobId":"<id>"};
                                      "" or non-numeric -> 400 'For input
                                      string: "<id>"'
  GET  /system-monitoring-information one object per member
  GET  /jobs/checkpoints/<id>         --version 3 only (2.3.13+): the
                                      checkpoint monitor (counts, latest
                                      completed/failed per pipeline)
  GET  /metrics, /openmetrics         text/plain;charset=utf-8, empty unless
                                      telemetry is on
  POST /stop-job {"jobId":..,"isStopWithSavePoint":bool} -> 200 {"jobId":
       "<as given>"} even for an unknown job; a running job moves on
       asynchronously: RUNNING -> CANCELING -> CANCELED, or (savepoint, only
       from RUNNING) RUNNING -> DOING_SAVEPOINT -> SAVEPOINT_DONE, after
       --stop-delay-ms.  No jobId -> 400 "jobId cannot be empty."; empty
       body -> 400 "Request body is empty."; invalid JSON -> 400.
  POST /stop-jobs [{...}, ...]        -> [{"jobId":<number>}, ...]; every
       element is stopped first, then its jobId cast to Long: a string id, or
       a number that fits in 32 bits (Jackson makes it an Integer), -> 500
       ClassCastException.
Engine failures of 2.3.12 (--version 2.3 only; 3.x fixed them):
  "__missingDag": true on a finished job (its engine_finishedJobVertexInfo
       entry is gone, issue #10041): every list that would contain it
       (/finished-jobs, /finished-jobs/<its state>) and its own /job-info
       answer 500 {"status":"fail","message":null}.  In 3.x it is listed
       with "jobDag":{} (#10599).
  "__missingMetrics": true on a finished job (issue #10695): its /job-info
       answers 500 {"status":"fail","message":null}.  In 3.x its metrics are
       empty (zero sums, {} tables).
  member_fail (fault mode below, or "cluster": {"member_fail": true}): one
       member's health operation fails, so /system-monitoring-information
       answers 500 {"status":"fail","message":null} (both versions).
Control API (not part of SeaTunnel; never subject to faults; with
--ctl-token T the header "X-Sim-Token: T" is required, else 403):
  GET    /__sim/stats        {"total":N,"paths":{"/running-jobs":n,..},"faulted":n}
  POST   /__sim/reset-stats
  GET    /__sim/fault        current fault
  POST   /__sim/fault {"mode": "none"|"5xx"|"garbage"|"hang"|"slow"|
                       "truncated"|"oversize"|"member_fail", "delay_ms": N,
                       "paths": "/prefix" | ["/a","/b"] (optional),
                       "count": N (optional: affect N requests, then none),
                       "size_mb": N (oversize body size, default 64)}
       hang: no answer until the fault is cleared or 600 s, then the
       connection is closed; slow: sleep delay_ms then answer; garbage: 200
       with invalid JSON; 5xx: 500/503 alternately with the real error body;
       truncated: Content-Length of the full body, half of it sent, close;
       oversize: 200 application/json of size_mb MiB (a valid JSON array);
       member_fail: the 2.3.12 member failure above (applies to
       /system-monitoring-information only, whatever "paths" says).
  POST   /__sim/job {"jobId": "..", "state"|"jobStatus": "..", other job
                     fields...}  add or change a job; moves it between running
                     and finished as the state dictates (finishTime set on
                     entering an end state, cleared on leaving it; errorMsg
                     cleared when leaving FAILED; a pending stop is dropped).
                     "__missingDag"/"__missingMetrics" set or clear the
                     faults above.  -> the job's API object (never faulted)
  DELETE /__sim/job/<id>     forget the job (history expiry) -> {"deleted":true}
  GET    /__sim/jobs         the raw scenario jobs (debugging)
"""

import argparse
import base64
import json
import os
import re
import signal
import ssl
import sys
import threading
import time
from decimal import Decimal, InvalidOperation
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, unquote, urlsplit

JOB_STATUSES = ["INITIALIZING", "CREATED", "PENDING", "SCHEDULED", "RUNNING",
                "FAILING", "FAILED", "DOING_SAVEPOINT", "SAVEPOINT_DONE",
                "CANCELING", "CANCELED", "FINISHED", "UNKNOWABLE"]
END_STATES = {"FAILED", "SAVEPOINT_DONE", "CANCELED", "FINISHED", "UNKNOWABLE"}
NOT_STARTED = {"INITIALIZING", "CREATED", "PENDING"}  # no SCHEDULED timestamp
METRIC_KEYS = ["SourceReceivedCount", "SinkWriteCount", "SourceReceivedBytes",
               "SinkWriteBytes", "SourceReceivedQPS", "SinkWriteQPS",
               "SourceReceivedBytesPerSeconds", "SinkWriteBytesPerSeconds",
               "TableSourceReceivedCount", "TableSinkWriteCount",
               "TableSourceReceivedBytes", "TableSinkWriteBytes",
               "TableSourceReceivedQPS", "TableSinkWriteQPS",
               "TableSourceReceivedBytesPerSeconds",
               "TableSinkWriteBytesPerSeconds"]
# 3.x BaseService: committed counters beside the written ones
COMMITTED_OF = {"SinkCommittedCount": "SinkWriteCount",
                "SinkCommittedBytes": "SinkWriteBytes",
                "SinkCommittedQPS": "SinkWriteQPS",
                "SinkCommittedBytesPerSeconds": "SinkWriteBytesPerSeconds",
                "TableSinkCommittedCount": "TableSinkWriteCount",
                "TableSinkCommittedBytes": "TableSinkWriteBytes",
                "TableSinkCommittedQPS": "TableSinkWriteQPS",
                "TableSinkCommittedBytesPerSeconds": "TableSinkWriteBytesPerSeconds"}
FAULT_MODES = {"none", "5xx", "garbage", "hang", "slow", "truncated", "oversize",
               "member_fail"}
VERSIONS = {"2.3": "2.3.12", "3": "3.1.0"}   # line -> default projectVersion
HZ_VERSION = "2.3.8"   # --version 2.3.8 / 2.3-hz: the REST API on Hazelcast's port
HZ_MAPS = "/hazelcast/rest/maps"
HZ_INSTANCE = "/hazelcast/rest/instance"
HZ_JSON_CT = "application/json"
HZ_TEXT_CT = "text/plain"
HANG_MAX_S = 600
LONG_MAX = (1 << 63) - 1
INT_MIN, INT_MAX = -(1 << 31), (1 << 31) - 1
JSON_CT = "application/json;charset=utf-8"
TEXT_CT = "text/plain;charset=utf-8"
HTML_CT = "text/html;charset=iso-8859-1"
CCE = ("class java.lang.%s cannot be cast to class java.lang.Long "
       "(java.lang.%s and java.lang.Long are in module java.base of loader "
       "'bootstrap')")
# servlet (first path segment) -> the one method it implements
SERVLETS = {"overview": "GET", "running-jobs": "GET", "finished-jobs": "GET",
            "job-info": "GET", "running-job": "GET",
            "system-monitoring-information": "GET", "metrics": "GET",
            "openmetrics": "GET", "stop-job": "POST", "stop-jobs": "POST"}


class ApiError(Exception):
    """An answer of the engine's ExceptionHandlingFilter (JSON) or, with
    html=True, a Jetty error page."""

    def __init__(self, code, msg, html=False):
        Exception.__init__(self, msg)
        self.code = code
        self.msg = msg
        self.html = html


def dumps(o):
    return json.dumps(o, separators=(",", ":"), ensure_ascii=False)


def fmt_now():
    return time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime())


def version_line(v):
    """'2.3', '2.3.12' -> '2.3'; '3', '3.1.0' -> '3'."""
    v = str(v or "2.3")
    if v in ("2.3", "2.3-hz") or v.startswith("2.3."):
        return "2.3"
    if v == "3" or v.startswith("3."):
        return "3"
    raise ValueError("unsupported engine version %r (2.3, 2.3.8 or 3)" % v)


def hz_mode(v):
    """True for the 2.3 releases before Jetty's REST v2 (2.3.0-2.3.8, or
    "2.3-hz"): their REST API lives on the Hazelcast port."""
    v = str(v or "")
    if v == "2.3-hz":
        return True
    m = re.match(r"^2\.3\.(\d+)$", v)
    return bool(m) and int(m.group(1)) <= 8


def hz_vertex(name):
    """'pipeline-1 [Source[0]-FakeSource]' -> 'Source[0]-FakeSource'."""
    m = re.match(r"^pipeline-\d+ \[(.*)\]$", name or "")
    return m.group(1) if m else (name or "")


def hz_dag_running(dag, env):
    """2.3.8 running jobs: the logical DAG, {"vertices":[{id,name,
    parallelism}],"edges":[{inputVertex,targetVertex}]}."""
    if "vertices" in (dag or {}):
        return dag
    par = int(str((env or {}).get("parallelism", "1")) or 1)
    names, verts = {}, []
    for v in (dag or {}).get("vertexInfoMap") or []:
        vid = int(v.get("vertexId", 0))
        names[str(vid)] = hz_vertex(v.get("vertexName"))
        verts.append({"id": vid, "name": "%s(id=%d)" % (names[str(vid)], vid),
                      "parallelism": par})
    edges = []
    for pid in sorted((dag or {}).get("pipelineEdges") or {}, key=int):
        for e in dag["pipelineEdges"][pid]:
            edges.append({"inputVertex": names.get(str(e.get("inputVertexId")), ""),
                          "targetVertex": names.get(str(e.get("targetVertexId")), "")})
    return {"vertices": verts, "edges": edges}


def hz_dag_finished(jid, dag):
    """2.3.8 finished jobs: the physical DAG as a JSON *string*, ids as
    numbers, vertexInfoMap an object by id with "connectorType"."""
    if isinstance(dag, str):
        return dag
    edges = {}
    for pid, es in ((dag or {}).get("pipelineEdges") or {}).items():
        edges[str(pid)] = [{"inputVertexId": int(e.get("inputVertexId", 0)),
                            "targetVertexId": int(e.get("targetVertexId", 0))}
                           for e in es]
    vmap = {}
    for v in (dag or {}).get("vertexInfoMap") or []:
        vid = int(v.get("vertexId", 0))
        vmap[str(vid)] = {"vertexId": vid, "type": str(v.get("type", "")).upper(),
                          "connectorType": v.get("vertexName", "")}
    return dumps({"jobId": int(jid), "pipelineEdges": edges,
                  "vertexInfoMap": vmap})


def number_format(s):
    return ApiError(400, 'For input string: "%s"' % s)


def parse_long(s):
    """Long.parseLong semantics: NumberFormatException -> 400."""
    s = "" if s is None else s
    t = s[1:] if s[:1] in "+-" else s
    if not t or not t.isdigit() or not t.isascii():
        raise number_format(s)
    v = int(s)
    if v > LONG_MAX or v < -LONG_MAX - 1:
        raise number_format(s)
    return v


def parse_int(s):
    v = parse_long(s)
    if v < INT_MIN or v > INT_MAX:
        raise number_format(s)
    return v


def java_str(v):
    """Object.toString() of a value Jackson read from JSON."""
    if v is True or v is False:
        return "true" if v else "false"
    return str(v)


def plain(v):
    """Double.toString form -> BigDecimal.toPlainString form (3.x)."""
    try:
        d = Decimal(v)
    except (InvalidOperation, TypeError, ValueError):
        return v
    if "E" not in v and "e" not in v:
        return v
    return format(d, "f")   # "1.0E-4" -> "0.00010", "1.0E7" -> "10000000"


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


def vertex_label(name):
    """'pipeline-1 [Sink[0]-console-MultiTableSink]' -> 'Sink[0]'."""
    m = re.search(r"((?:Sink|Source|Transform)\[\d+\])", name or "")
    return m.group(1) if m else None


def metrics_v3(m, dag):
    """3.x BaseService.getJobMetrics: committed keys, plain rates and table
    keys prefixed with the vertex of that kind that carries the table."""
    owners = {"source": {}, "sink": {}}
    for v in (dag or {}).get("vertexInfoMap") or []:
        lab = vertex_label(v.get("vertexName"))
        kind = owners.get(v.get("type"))
        if lab is None or kind is None:
            continue
        for t in v.get("tablePaths") or []:
            kind.setdefault(t, []).append(lab)
    src = dict(m)
    for k, w in COMMITTED_OF.items():
        if k not in src and w in src:
            src[k] = src[w]
    src.setdefault("IntermediateQueueSize", "0")
    out = {}
    for k, v in src.items():
        if isinstance(v, dict):
            kind = owners["source" if k.startswith("TableSource") else "sink"]
            t2 = {}
            for t, x in v.items():
                # the engine splits a table's samples by the vertex tag; with
                # one scenario value per table, the lowest vertex gets it all
                labs = sorted(set(kind.get(t, [])),
                              key=lambda s: (int(re.sub(r"\D", "", s)), s))
                key = labs[0] + "." + t if labs else t
                t2[key] = plain(x) if isinstance(x, str) else x
            out[k] = t2
        else:
            out[k] = plain(v) if isinstance(v, str) else v
    return out


def jetty_error(code, reason, uri, message=None):
    """Jetty 9.4 ErrorHandler page (what 404/405 look like)."""
    msg = message or reason
    esc = (msg.replace("&", "&amp;").replace("<", "&lt;")
           .replace(">", "&gt;"))
    u = uri.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    return ("<html>\n<head>\n<meta http-equiv=\"Content-Type\" "
            "content=\"text/html;charset=ISO-8859-1\"/>\n"
            "<title>Error %d %s</title>\n</head>\n<body><h2>HTTP ERROR %d %s</h2>\n"
            "<table>\n<tr><th>URI:</th><td>%s</td></tr>\n"
            "<tr><th>STATUS:</th><td>%d</td></tr>\n"
            "<tr><th>MESSAGE:</th><td>%s</td></tr>\n"
            "</table>\n\n</body>\n</html>\n"
            % (code, esc, code, esc, u, code, esc))


class State:
    def __init__(self, scen, version=None, stop_delay_ms=None, telemetry=None):
        self.lock = threading.Lock()
        self.cluster = scen.get("cluster", {})
        self.version = version_line(version or scen.get("version"))
        self.hz = hz_mode(version or scen.get("version"))
        self.stop_delay = (stop_delay_ms if stop_delay_ms is not None
                           else int(scen.get("stop_delay_ms", 500))) / 1000.0
        self.telemetry = bool(telemetry or scen.get("telemetry", False))
        self.member_fail = bool(self.cluster.get("member_fail", False))
        self.legacy_paged = bool(scen.get("legacy_paged", False))
        self.jobs = {}
        for j in scen.get("jobs", []):
            self.jobs[str(j["jobId"])] = dict(j, jobId=str(j["jobId"]))
        self.pending = {}  # jobId -> (monotonic due time, final state)
        self.stats = {}
        self.total = 0
        self.faulted = 0
        self.fault = {"mode": "none"}
        self.fault_gen = 0
        self.fault_cv = threading.Condition(self.lock)
        self.fivexx_flip = 0

    @property
    def v3(self):
        return self.version == "3"

    # ---------------------------------------------------------- rendering
    @staticmethod
    def start_time(j):
        if "startTime" in j:
            return j["startTime"] or ""
        if j["jobStatus"] in NOT_STARTED:
            return ""
        return j.get("createTime", "")

    def metrics_of(self, j, dag):
        m = j.get("metrics", {})
        if self.v3:
            if j.get("__missingMetrics"):
                m = default_metrics()  # JobMetrics.empty()
            return metrics_v3(m, dag)
        return m

    def running_obj(self, j):
        dag = j.get("jobDag", {})
        o = {
            "jobId": j["jobId"],
            "jobName": j.get("jobName", ""),
            "jobStatus": j["jobStatus"],
            "envOptions": j.get("envOptions", {}),
            "createTime": j.get("createTime", ""),
            "startTime": self.start_time(j),
            "jobDag": hz_dag_running(dag, j.get("envOptions")) if self.hz else dag,
            "pluginJarsUrls": j.get("pluginJarsUrls", []),
            "isStartWithSavePoint": bool(j.get("isStartWithSavePoint", False)),
            "metrics": self.metrics_of(j, dag),
        }
        if self.hz:
            del o["startTime"]  # 2.3.8 has none
        return o

    def finished_obj(self, j, info=False, faults=True):
        if faults and j.get("__missingDag") and not self.v3:
            raise ApiError(500, None)   # NPE in BaseService.getJobInfoJson
        if faults and info and j.get("__missingMetrics") and not self.v3:
            raise ApiError(500, None)   # NPE in JobInfoServlet
        dag = {} if j.get("__missingDag") else j.get("jobDag", {})
        o = {
            "jobId": j["jobId"],
            "jobName": j.get("jobName", ""),
            "jobStatus": j["jobStatus"],
            "errorMsg": j.get("errorMsg"),
            "createTime": j.get("createTime", ""),
            "startTime": self.start_time(j),
            "finishTime": j.get("finishTime") or "",
            "jobDag": hz_dag_finished(j["jobId"], dag) if self.hz else dag,
            "pluginJarsUrls": [],
            "metrics": self.metrics_of(j, dag),
        }
        if self.hz:
            del o["startTime"]
        return o

    def diagnostics(self, j):
        """3.x job-info "diagnostics" (PR #11982: restore counters and state
        timestamps; the exact key names are not confirmed)."""
        pids = sorted(int(p) for p in (j.get("jobDag", {}).get("pipelineEdges")
                                       or {"1": []}))
        ts = {"CREATED": j.get("createTime", "")}
        if self.start_time(j):
            ts["SCHEDULED"] = self.start_time(j)
        return {"restoreCount": int(j.get("restoreCount", 0)),
                "stateTimestamps": ts,
                "pipelines": [{"pipelineId": p, "restoreCount": 0,
                               "maxRestoreCount": 3, "stateTimestamps": ts}
                              for p in pids]}

    def obj(self, j, info=False, faults=True):
        if j["jobStatus"] in END_STATES:
            return self.finished_obj(j, info, faults)
        o = self.running_obj(j)
        if info and self.v3:
            o["diagnostics"] = self.diagnostics(j)
        return o

    # ---------------------------------------------------------- time
    def tick(self):
        """Apply the stops that are due (caller holds the lock)."""
        if not self.pending:
            return
        now = time.monotonic()
        for jid, (due, final) in list(self.pending.items()):
            if due > now:
                continue
            del self.pending[jid]
            j = self.jobs.get(jid)
            if j is not None and j["jobStatus"] not in END_STATES:
                j = dict(j, jobStatus=final, finishTime=fmt_now())
                j.pop("finishedRun", None)
                self.jobs[jid] = j

    # ---------------------------------------------------------- queries
    def running(self):
        with self.lock:
            self.tick()
            return [self.running_obj(j) for j in self.jobs.values()
                    if j["jobStatus"] not in END_STATES]

    def finished(self, state):
        with self.lock:
            self.tick()
            js = [j for j in self.jobs.values() if j["jobStatus"] in END_STATES]
            if self.hz:  # a restored job's old end state stays listed
                js += [dict(j, **j["finishedRun"]) for j in self.jobs.values()
                       if j["jobStatus"] not in END_STATES
                       and isinstance(j.get("finishedRun"), dict)]
            if state:
                js = [j for j in js if j["jobStatus"] == state.upper()]
            js.sort(key=lambda j: (j.get("finishTime") or ""))
            return [self.finished_obj(j) for j in js]

    def ckpt_monitor(self, jid):
        """/jobs/checkpoints/<id> (2.3.13+, --version 3): the engine's
        in-memory checkpoint monitor.  A scenario job's "checkpointMonitor"
        list ({pipelineId, triggered, completed, failed, inProgress,
        durationMillis, failureReason}) is served as given; otherwise each
        pipeline of the DAG gets counts derived from the job id."""
        with self.lock:
            self.tick()
            j = self.jobs.get(str(jid))
            if not j:
                return {"jobId": str(jid), "updatedAt": 0, "pipelines": []}
            mon = j.get("checkpointMonitor")
            if mon is None:
                pids = sorted(int(k) for k in ((j.get("jobDag") or {}).get(
                    "pipelineEdges") or {"1": []}))
                seed = int(str(jid)[-4:])
                mon = [{"pipelineId": p, "triggered": 40 + seed % 17 + p,
                        "completed": 38 + seed % 17 + p, "failed": 1,
                        "inProgress": 1, "durationMillis": 120 + seed % 50,
                        "failureReason": "checkpoint expired before completing"}
                       for p in pids]
        now = int(time.time() * 1000)
        out = []
        for m in mon:
            def info(status, cid, extra):
                d = {"checkpointId": cid, "checkpointType": "checkpoint",
                     "status": status, "triggerTimestamp": now - 5000,
                     "stateSize": 1024}
                d.update(extra)
                return d
            done = m.get("completed", 0)
            out.append({
                "pipelineId": m["pipelineId"],
                "counts": {"triggered": m.get("triggered", 0),
                           "completed": done, "failed": m.get("failed", 0),
                           "inProgress": m.get("inProgress", 0),
                           "restored": 0},
                "latestCompleted": info("COMPLETED", done, {
                    "completedTimestamp": now - 4000,
                    "durationMillis": m.get("durationMillis", 100)})
                if done else {},
                "latestFailed": info("FAILED", done + 1, {
                    "failureReason": m.get("failureReason", "")})
                if m.get("failed") else {},
                "latestSavepoint": {},
                "inProgress": [],
                "history": [],
            })
        return {"jobId": str(jid), "updatedAt": now, "pipelines": out}

    def job_info(self, jid):
        with self.lock:
            self.tick()
            j = self.jobs.get(str(jid))
            return self.obj(j, info=True) if j else {"jobId": str(jid)}

    def overview(self):
        ov = dict(self.cluster.get("overview", {}))
        with self.lock:
            self.tick()
            sts = [j["jobStatus"] for j in self.jobs.values()]
        pv = str(ov.get("projectVersion", ""))
        try:
            if version_line(pv) != self.version or hz_mode(pv) != self.hz:
                pv = HZ_VERSION if self.hz else VERSIONS[self.version]
        except ValueError:
            pv = HZ_VERSION if self.hz else VERSIONS[self.version]
        out = {
            "projectVersion": pv,
            "gitCommitAbbrev": str(ov.get("gitCommitAbbrev", "bef7607")),
            "totalSlot": str(ov.get("totalSlot", "0")),
            "unassignedSlot": str(ov.get("unassignedSlot", "0")),
            "runningJobs": str(sum(1 for s in sts if s not in END_STATES)),
            "finishedJobs": str(sts.count("FINISHED")),
            "failedJobs": str(sts.count("FAILED")),
            "cancelledJobs": str(sts.count("CANCELED")),
            "workers": str(ov.get("workers", len(self.members()) or 1)),
        }
        if self.v3:
            out["pendingJobs"] = str(sts.count("PENDING"))
        return out

    def members(self):
        ms = self.cluster.get("members")
        if ms:
            return ms
        return [{"isMaster": "true", "host": "127.0.0.1", "port": "5801",
                 "processors": "2"}]

    def prometheus(self, openmetrics=False):
        if not self.telemetry:
            return "# EOF\n" if openmetrics and self.hz else ""
        with self.lock:
            self.tick()
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
            self.tick()
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
                if self.hz and was_end and state not in END_STATES:
                    # 2.3.8 keeps the old run in engine_finishedJobState
                    j["finishedRun"] = {
                        k: j.get(k) for k in ("jobStatus", "createTime",
                                              "finishTime", "errorMsg")}
                elif state in END_STATES:
                    j.pop("finishedRun", None)
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
                if state in NOT_STARTED:
                    if "startTime" not in body:
                        j["startTime"] = ""
                elif "startTime" not in body and j.get("startTime") == "":
                    j["startTime"] = fmt_now()  # scheduled just now
                self.pending.pop(jid, None)
            self.jobs[jid] = j
            return self.obj(j, faults=False)

    def stop_job(self, body):
        """BaseService.handleStopJob on the master: cancel or savepoint
        without waiting for it.  Returns the jobId as given."""
        if not isinstance(body, dict) or body.get("jobId") is None:
            raise ApiError(400, "jobId cannot be empty.")
        given = java_str(body["jobId"])
        jid = str(parse_long(given))
        sp = java_str(body.get("isStopWithSavePoint", False)).lower() == "true"
        with self.lock:
            self.tick()
            j = self.jobs.get(jid)
            if j is None or j["jobStatus"] in END_STATES:
                return given
            if sp:
                if j["jobStatus"] != "RUNNING":
                    return given  # the savepoint fails, unobserved
                mid, final = "DOING_SAVEPOINT", "SAVEPOINT_DONE"
            else:
                if j["jobStatus"] == "CANCELING":
                    return given
                mid, final = "CANCELING", "CANCELED"
            self.jobs[jid] = dict(j, jobStatus=mid)
            self.pending[jid] = (time.monotonic() + self.stop_delay, final)
        return given

    def stop_jobs(self, body):
        if not isinstance(body, list):
            raise ApiError(500, "Cannot deserialize value of type "
                                "`java.util.ArrayList<java.util.Map>` from Object value")
        out = []
        for b in body:
            self.stop_job(b)
            v = b.get("jobId")
            if isinstance(v, str):
                raise ApiError(500, CCE % ("String", "String"))
            if isinstance(v, bool) or not isinstance(v, int):
                kind = "Boolean" if isinstance(v, bool) else "Double"
                raise ApiError(500, CCE % (kind, kind))
            if INT_MIN <= v <= INT_MAX:
                raise ApiError(500, CCE % ("Integer", "Integer"))
            out.append({"jobId": v})
        return out

    def forget(self, jid):
        with self.lock:
            self.pending.pop(str(jid), None)
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
            if f["mode"] == "member_fail":
                paths = ["/system-monitoring-information"]
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


def page_of(items, q, paging, always):
    """3.x PageBaseServlet: with ?page= -> {"data","total"}; 2.3 ignores
    the parameters.  always (legacy_paged): the wrapper even without page."""
    if "page" not in q or not (paging or always):
        return {"data": items, "total": len(items)} if always else items
    total = len(items)
    page = parse_int(q["page"][-1])
    rows = parse_int(q["rows"][-1]) if "rows" in q else 10
    start = (page - 1) * rows
    if start >= total or page < 1:
        raise ApiError(400, "Page number must be greater than 0" if page < 1
                       else "Page number exceeds total pages")
    end = min(start + rows, total)
    if end < start:
        raise ApiError(400, "fromIndex(%d) > toIndex(%d)" % (start, end))
    return {"data": items[start:end], "total": total}


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    # headers and body are two writes: with Nagle on, the body waits for the
    # ACK of the headers, which a client delays ~40 ms (a real engine's
    # Jetty/Hazelcast answer goes out in one piece)
    disable_nagle_algorithm = True
    server_version = "Jetty(9.4.56.v20240826)"
    sys_version = ""
    st = None          # State
    ctl_token = None   # str or None
    basic_auth = None  # "user:password" or None (no auth)

    def log_message(self, fmt, *args):  # quiet
        pass

    def version_string(self):
        return self.server_version

    # ---------------------------------------------------------- plumbing
    def send(self, code, body, ctype=JSON_CT, headers=()):
        if isinstance(body, str):
            body = body.encode("utf-8" if ctype != HTML_CT else "iso-8859-1",
                               "replace")
        self.send_response(code)
        if ctype:
            self.send_header("Content-Type", ctype)
        for k, v in headers:
            self.send_header(k, v)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)

    def send_json(self, code, obj):
        self.send(code, dumps(obj), HZ_JSON_CT if self.st.hz else JSON_CT)

    def fail(self, code, msg):
        self.send_json(code, {"status": "fail", "message": msg})

    def send_error_page(self, e, path):
        self.send(e.code, jetty_error(e.code, self.responses.get(
            e.code, ("Error",))[0], path, e.msg), HTML_CT,
            (("Cache-Control", "must-revalidate,no-cache,no-store"),))

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

    def read_request_json(self):
        """BaseService.requestHandle: the engine's body rules."""
        raw = self.read_body()
        if len(raw) == 0:
            raise ApiError(400, "Request body is empty.")
        try:
            return json.loads(raw.decode("utf-8"))
        except (ValueError, UnicodeDecodeError):
            raise ApiError(400, "Invalid JSON format in request body.")

    def authorized(self):
        h = self.headers.get("Authorization") or ""
        want = "Basic " + base64.b64encode(self.basic_auth.encode()).decode()
        return h == want

    def do_GET(self):
        self.dispatch("GET")

    def do_HEAD(self):
        self.dispatch("HEAD")

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
            if self.basic_auth and not self.authorized():
                # the engine's basic-auth filter: 401, a challenge, HTML
                self.st.count("/__unauthorized")
                self.send(401, jetty_error(401, "Unauthorized", path,
                                           "Unauthorized"), HTML_CT,
                          (("WWW-Authenticate", 'Basic realm="seatunnel"'),))
                return
            if self.st.hz:
                path = self.hz_route(method, path)
                if path is None:
                    return
            self.st.count(path)
            f = self.st.take_fault(path)
            if f and self.apply_fault(f, method, path, q):
                return
            self.api(method, path, q)
        except ApiError as e:
            if e.html:
                self.send_error_page(e, path)
            else:
                self.fail(e.code, e.msg)
        except (BrokenPipeError, ConnectionResetError):
            self.close_connection = True
        except Exception as e:  # the real filter maps anything else to 500
            try:
                self.fail(500, "%s: %s" % (type(e).__name__, e))
            except OSError:
                self.close_connection = True

    def hz_route(self, method, path):
        """2.3.8: Hazelcast's REST handler.  Returns the servlet path under
        /hazelcast/rest/maps, or None when the request is answered here:
        GET of an unknown path (or of a POST-only one) -> 400 with an empty
        body; HEAD/DELETE -> 200 empty; PUT, or POST of a GET path without a
        key -> 400 "Missing map name" (with a key Hazelcast stores into an
        IMap of that name: 200 empty); /hazelcast/rest/instance/{metrics,
        openmetrics} -> text/plain; any other path -> no answer at all."""
        st = self.st
        if path.startswith(HZ_INSTANCE + "/"):
            name = path[len(HZ_INSTANCE) + 1:]
            if name in ("metrics", "openmetrics") and method in ("GET", "HEAD"):
                st.count("/" + name)
                self.send(200, st.prometheus(name == "openmetrics"), HZ_TEXT_CT)
            else:
                self.send(200, dumps({"name": "stsim"}), HZ_JSON_CT)
            return None
        if not path.startswith(HZ_MAPS + "/"):
            self.close_connection = True  # Hazelcast closes without a reply
            return None
        sub = path[len(HZ_MAPS):]
        parts = sub.split("/")
        want = SERVLETS.get(parts[1])
        if parts[1] in ("metrics", "openmetrics"):
            want = None  # under /hazelcast/rest/instance in 2.3.8
        if method in ("HEAD", "DELETE"):
            self.send(200, b"", None)
            return None
        if method == "PUT" or (method == "POST" and want != "POST"):
            if method == "POST" and len(parts) > 2 and parts[2]:
                self.read_body()
                self.send(200, b"", None)
            else:
                self.fail(400, "Missing map name")
            return None
        if method == "GET" and want != "GET":
            self.send(400, b"", None)
            return None
        return sub

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
        if mode == "member_fail":
            self.fail(500, None)   # NPE: a member's health string is null
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
        parts = path.split("/")
        head = parts[1] if len(parts) > 1 else ""
        # Jetty mapping <ctx>/<head>/*: the rest is the servlet's path info
        rest = "/".join(parts[2:]) if len(parts) > 2 else ""
        if st.v3 and head == "jobs" and len(parts) == 4 and \
                parts[2] == "checkpoints" and method in ("GET", "HEAD"):
            return 200, st.ckpt_monitor(parse_long(parts[3]))
        want = SERVLETS.get(head)
        if want is None:
            raise ApiError(404, "Not Found", html=True)
        if method == "HEAD":
            method = "GET"  # HttpServlet.doHead runs doGet without a body
        if method != want:
            raise ApiError(405, "HTTP method %s is not supported by this URL"
                           % method, html=True)
        paging = st.v3
        if head == "overview":
            return 200, st.overview()
        if head == "running-jobs":
            return 200, page_of(st.running(), q, paging, st.legacy_paged)
        if head == "finished-jobs":
            return 200, page_of(st.finished(rest), q, paging, st.legacy_paged)
        if head in ("job-info", "running-job"):
            if st.hz:  # NumberFormatException is a 500 there
                try:
                    jid = parse_long(rest if rest else "")
                except ApiError:
                    raise ApiError(500, 'For input string: "%s"' % (
                        rest if rest else HZ_MAPS + "/" + head))
                return 200, st.job_info(jid)
            return 200, st.job_info(parse_long(rest))
        if head == "system-monitoring-information":
            if st.member_fail:
                raise ApiError(500, None)
            return 200, st.members()
        if head in ("metrics", "openmetrics"):
            return 200, (st.prometheus(head == "openmetrics"), TEXT_CT)
        if head == "stop-job":
            if st.hz and self.headers.get("Content-Length") is None:
                raise ApiError(500, 'Cannot read the array length because '
                                    '"requestBody" is null')
            return 200, {"jobId": st.stop_job(self.read_request_json())}
        # stop-jobs
        return 200, st.stop_jobs(self.read_request_json())

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
                st.tick()
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
    ap.add_argument("--version", default=None,
                    help="engine line: 2.3 (default), 2.3.8 (2.3-hz: the API on "
                         "Hazelcast's port) or 3 (2.3.12, 3.1.0 also accepted)")
    ap.add_argument("--stop-delay-ms", type=int, default=None,
                    help="ms a stopped job stays CANCELING/DOING_SAVEPOINT (default 500)")
    ap.add_argument("--telemetry", action="store_true",
                    help="serve Prometheus text on /metrics and /openmetrics")
    ap.add_argument("--basic-auth", metavar="USER:PASSWORD",
                    help="require HTTP basic auth on the API (401 + HTML otherwise)")
    ap.add_argument("--tls-cert", help="serve HTTPS with this PEM certificate")
    ap.add_argument("--tls-key", help="its PEM private key")
    a = ap.parse_args(argv)
    with open(a.scenario) as f:
        scen = json.load(f)
    try:
        Handler.st = State(scen, a.version, a.stop_delay_ms, a.telemetry)
    except ValueError as e:
        ap.error(str(e))
    Handler.ctl_token = None if a.ctl_token in (None, "", "none") else a.ctl_token
    Handler.basic_auth = a.basic_auth
    ThreadingHTTPServer.daemon_threads = True
    ThreadingHTTPServer.allow_reuse_address = True
    srv = ThreadingHTTPServer((a.host, a.port), Handler)
    if a.tls_cert:
        ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        ctx.load_cert_chain(a.tls_cert, a.tls_key)
        srv.socket = ctx.wrap_socket(srv.socket, server_side=True)
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
