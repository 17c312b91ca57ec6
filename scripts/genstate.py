#!/usr/bin/env python3
"""genstate.py - deterministic sample SeaTunnel cluster state for stfs tests.

Writes, under --out DIR:
  checkpoint/<jobId>/<writeTs>-<rand>-<pid>-<cid>.ser   real layout; body is a
      protostuff PipelineState{CompletedCheckpoint} (scripts/pstuff_enc.py);
      mtime = writeTs.  In-flight ".sertmp" files (own ts/rand, a partial
      body: a write cut short) beside some RUNNING/DOING_SAVEPOINT jobs.
  checkpoint/<jobId>/.<file>.crc                                      (--crc)
      Hadoop ChecksumFileSystem sidecars ("crc\0", int 512, one CRC32 per
      512 bytes, big-endian) beside every .ser/.sertmp, as the hdfs plugin on
      fs.defaultFS file:/// may write them (inferred from the engine's code; off by
      default until a real engine run confirms it).
  checkpoint/<jobId>/<pid>/<cid>/<task-location>/state-data          (--doc-jobs)
  checkpoint/savepoint/<jobId>/<sp-ts>/<pid>/<task-location>/state-data (--doc-jobs)
      the layouts the engine's docs describe and no engine writes
      (README "Layouts"): robustness input only.
  imap/seatunnel/<mapName>/<region>/wal.txt                           (--imap)
      every engine IMap; one region (System.nanoTime(), not chronological
      across members) per member start.  Member 127.0.0.1:5801 was restarted
      (an old region with superseded records, or empty), 127.0.0.1:5802
      joined at the restart.  Each member's newest region is live and its
      wal.txt is created EMPTY at start, so maps not written since are empty.
  imap/seatunnel/<mapName>/<region>/<N>_wal.txt    (--imap --imap-object-store)
      S3/OSS CloudWriter: 1_wal.txt, 2_wal.txt, ... (next file once one is
      past --imap-block-size); no object before a region's first write.
  imap/seatunnel/engine_runningJobMetrics/...      (--imap --imap-wal-mix)
      five regions (two older starts of 5801 besides those of every map):
      key 1L rewritten every 10 s, a tombstone, a same-timestamp conflict,
      a truncated tail (in 2_wal.txt on object stores, after which more
      blocks follow: 10_wal.txt after 2_wal.txt with a small block size),
      5802's empty live region; scenario.json imap.expected: the reader's
      counts (records, keys, live_keys, tombstones, ties, tail_bytes).
  scenario.json (or --scenario-out): input of scripts/stsim.py; "version"
      (--version), jobs with startTime, and "imap" (members, and per map and
      region its member, start time and whether it is live).

Which jobs have storage (README "Where the state comes from"):
  RUNNING/FAILING/DOING_SAVEPOINT/CANCELING/FAILED/UNKNOWABLE: N..2N-1 files per
  pipeline (N = max-retained = 3); some "restored" jobs keep 6..9 (issue #12094).
  SAVEPOINT_DONE: the same plus a SAVEPOINT_TYPE file as the newest per pipeline.
  RUNNING restored from a savepoint (isStartWithSavePoint, leftovers): the old
  run's files and savepoint, then N newer checkpoints of the new run.
  INITIALIZING/CREATED/PENDING/SCHEDULED: only restores (-r) keep the old dir.
  FINISHED/CANCELED: no dir, except at most one anomaly of each.
  Orphans: dirs of job ids the engine does not know; one is fresh (newest
  mtime 2..5 minutes before --now-ms), the others are days old.

--mix STATE=W,...: the engine jobs' states in these shares instead of the
default spread (which starts with one job of every JobStatus), e.g. the
bench's RUNNING=70,FAILED=15,SAVEPOINT_DONE=10,FINISHED=5.

Bench mode (--checkpoints C): every engine job and orphan gets a dir with
exactly C .ser files per pipeline (no leftovers, retention/cleanup not modelled;
.sertmp extras still added), e.g. --jobs 2000 --pipelines 2 --checkpoints 5.

Output is a pure function of (--seed, --now-ms, other flags).  --now-ms
defaults to the current time, so pass it for byte-identical trees.
Times in the scenario are rendered in UTC ("yyyy-MM-dd HH:mm:ss").
"""

import argparse
import json
import os
import random
import struct
import sys
import time
import zlib
from decimal import Decimal

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import pstuff_enc as pe  # noqa: E402

MAX_RETAINED = 3
ALL_STATES = list(pe.JOB_STATUSES)
END_STATES = pe.END_STATES
# weights of the states beyond the first 13 jobs
STATE_WEIGHTS = [("RUNNING", 30), ("FINISHED", 20), ("FAILED", 10),
                 ("CANCELED", 10), ("SAVEPOINT_DONE", 8), ("CREATED", 2),
                 ("PENDING", 2), ("SCHEDULED", 2), ("INITIALIZING", 1),
                 ("FAILING", 2), ("DOING_SAVEPOINT", 2), ("CANCELING", 2),
                 ("UNKNOWABLE", 2)]
NAMES = ["fake_to_console", "fake_to_console", "mysql-cdc to doris",
         "orders/daily sync", "kafka events/to s3 sink", "pg_to_es",
         "fake_to_console", "nightly batch", "mysql-cdc to doris",
         "clickhouse_export", "nightly batch"]
SOURCES = [("FakeSource", ["fake"]), ("MySQL-CDC", ["shop.orders", "shop.users"]),
           ("Kafka", ["events"]), ("Jdbc", ["public.accounts"]),
           ("FakeSource", ["fake", "fake2"])]
SINKS = ["console-MultiTableSink", "Doris-MultiTableSink", "S3File-MultiTableSink",
         "Elasticsearch-MultiTableSink", "Clickhouse-MultiTableSink"]
ERRORS = [
    "java.lang.RuntimeException: java.sql.SQLException: Communications link failure\n"
    "\tat org.apache.seatunnel.connectors.seatunnel.jdbc.internal.JdbcInputFormat.open(JdbcInputFormat.java:79)",
    "org.apache.seatunnel.common.utils.SeaTunnelException: Task failed: "
    "TaskGroupLocation{jobId=1, pipelineId=1, taskGroupId=30000}",
    "java.util.concurrent.TimeoutException: checkpoint 17 expired after 60000 ms",
]
MON_KEYS = ["processors", "physical.memory.total", "physical.memory.free",
            "swap.space.total", "swap.space.free", "heap.memory.used",
            "heap.memory.free", "heap.memory.total", "heap.memory.max",
            "heap.memory.used/total", "heap.memory.used/max",
            "minor.gc.count", "minor.gc.time", "major.gc.count", "major.gc.time",
            "load.process", "load.system", "load.systemAverage", "thread.count",
            "thread.peakCount", "cluster.timeMillis", "event.q.size",
            "executor.q.async.size", "executor.q.client.size",
            "executor.q.query.size", "executor.q.scheduled.size",
            "executor.q.io.size", "executor.q.system.size",
            "executor.q.operations.size", "executor.q.priorityOperation.size",
            "operations.completed.count", "executor.q.cluster.size",
            "executor.q.response.size", "operations.running.count",
            "operations.pending.invocations.percentage",
            "operations.pending.invocations.count", "proxy.count",
            "clientEndpoint.count", "connection.active.count",
            "client.connection.count", "connection.count"]
IMAP_REGION_BASE = 283746519283746
# the engine's metric names (3.x adds engine_checkpoint_monitor)
IMAPS = ["engine_runningJobInfo", "engine_runningJobState",
         "engine_stateTimestamps", "engine_finishedJobState",
         "engine_finishedJobMetrics", "engine_finishedJobVertexInfo",
         "engine_ownedSlotProfilesIMap", "engine_checkpoint-id-map",
         "engine_runningJobMetrics", "engine_connectorJarRefCounters"]
IMAPS_3 = IMAPS + ["engine_checkpoint_monitor"]
MEMBERS = [("127.0.0.1", 5801), ("127.0.0.1", 5802)]   # the first is master
PROJECT_VERSION = {"2.3": "2.3.12", "3": "3.1.0"}
NOT_STARTED = ("INITIALIZING", "CREATED", "PENDING")
CRC_CHUNK = 512  # io.bytes.per.checksum default


def fmt_time(ms):
    return time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime(ms // 1000))


def java_double(x):
    """Double.toString(x)."""
    x = float(x)
    if x == 0:
        return "0.0"
    ax = abs(x)
    if 1e-3 <= ax < 1e7:
        s = repr(x)
        if "e" in s or "E" in s:
            s = format(Decimal(s), "f")
        return s if "." in s else s + ".0"
    sign, digits, exp = Decimal(repr(x)).as_tuple()
    digits = list(digits)
    e10 = len(digits) + exp - 1
    while len(digits) > 1 and digits[-1] == 0:
        digits.pop()
    mant = str(digits[0]) + "." + ("".join(map(str, digits[1:])) or "0")
    return ("-" if sign else "") + mant + "E" + str(e10)


def crc_sidecar(data):
    """Hadoop ChecksumFileSystem .crc file of data (CRC32 per 512 bytes)."""
    out = [b"crc\0", struct.pack(">i", CRC_CHUNK)]
    for i in range(0, len(data), CRC_CHUNK):
        out.append(struct.pack(">I", zlib.crc32(data[i:i + CRC_CHUNK])))
    return b"".join(out)


def start_time(state, create_ms):
    """startTime: the SCHEDULED timestamp, "" before it (BaseService)."""
    if state in NOT_STARTED:
        return ""
    return fmt_time(create_ms + 1000 * (1 + create_ms % 29))


def info_record(jid, name, cp):
    """What checkpoints/<cid>/info shows of a .ser (README "Checkpoint
    info"), from the CompletedCheckpoint the generator encoded."""
    acts = []
    for e in cp["taskStates"]:
        v = e["value"]
        subs = [x for x in v["subtaskStates"] if x is not None]
        co = v["coordinatorState"]
        nbytes = sum(len(b) for x in subs for b in x["state"] if b is not None)
        if co is not None:
            nbytes += sum(len(b) for b in co["state"] if b is not None)
        acts.append({"name": e["key"]["name"][len("ActionStateKey - "):],
                     "parallelism": v["parallelism"], "subtasks": len(subs),
                     "coordinator": co is not None, "state_bytes": nbytes})
    tasks = [{"vertex": e["key"],
              "acknowledged": e["value"]["numAcknowledgedSubtasks"],
              "subtasks": len([x for x in e["value"]["subtaskStats"] if x]),
              "state_size": sum(x["stateSize"] for x in e["value"]["subtaskStats"] if x)}
             for e in cp["taskStatistics"]]
    return {"job": jid, "object": name, "pipeline": cp["pipelineId"],
            "checkpoint": cp["checkpointId"],
            "type": {0: "checkpoint", 1: "schema-change-before-point",
                     2: "schema-change-after-point", 3: "savepoint"}[cp["checkpointType"]],
            "trigger_ms": cp["triggerTimestamp"],
            "completed_ms": cp["completedTimestamp"],
            "actions": acts, "tasks": tasks}


class Gen:
    def __init__(self, a):
        self.a = a
        self.rng = random.Random(a.seed)
        # a second stream for what was added later, so that the first one
        # (job ids, file names) stays what the suites were written against
        self.rng2 = random.Random(a.seed * 7919 + 17)
        self.imap_info = None
        self.torn = {}  # (map, region) -> truncated-tail bytes
        self.now = a.now_ms
        self.out = a.out
        self.ck = os.path.join(a.out, "checkpoint")
        self.jobs = []
        self.storage = {}
        self.orphans = []
        self.next_id = 900000000000000000 + self.rng.randrange(10 ** 15)
        self.nfiles = 0
        self.tiny_done = False
        self.info_recs = []  # --info-out: what each .ser holds

    # ------------------------------------------------------------ helpers
    def new_id(self):
        # FlakeId-like: increasing, 18 digits
        self.next_id += self.rng.randrange(1 << 16, 1 << 22)
        return self.next_id

    def write(self, path, data, ts_ms, crc=False):
        try:
            f = open(path, "wb")
        except FileNotFoundError:
            os.makedirs(os.path.dirname(path), exist_ok=True)
            f = open(path, "wb")
        with f:
            f.write(data)
        ns = ts_ms * 1000000
        os.utime(path, ns=(ns, ns))
        self.nfiles += 1
        if crc and self.a.crc:
            d, n = os.path.split(path)
            self.write(os.path.join(d, "." + n + ".crc"), crc_sidecar(data), ts_ms)

    # ------------------------------------------------------------ job model
    def make_dag(self, jid, npipe):
        vertices, edges = [], {}
        vid = 1
        pipes = []
        for p in range(1, npipe + 1):
            src, tables = self.rng.choice(SOURCES)
            sink = self.rng.choice(SINKS)
            chain = [("source", "pipeline-%d [Source[0]-%s]" % (p, src))]
            if self.rng.random() < 0.3:
                chain.append(("transform", "pipeline-%d [Transform[0]-Sql]" % p))
            chain.append(("sink", "pipeline-%d [Sink[0]-%s]" % (p, sink)))
            ids = []
            for typ, name in chain:
                vertices.append({"vertexId": vid, "type": typ,
                                 "vertexName": name, "tablePaths": list(tables)})
                ids.append(vid)
                vid += 1
            edges[str(p)] = [{"inputVertexId": str(x), "targetVertexId": str(y)}
                             for x, y in zip(ids, ids[1:])]
            pipes.append({"pid": p, "actions": chain, "vids": ids,
                          "tables": tables})
        return vertices, edges, pipes

    def make_metrics(self, tables, state, secs):
        m = {}
        if state in ("INITIALIZING", "CREATED", "PENDING", "SCHEDULED"):
            zero = {k: "0" for k in ("SourceReceivedCount", "SinkWriteCount",
                                     "SourceReceivedBytes", "SinkWriteBytes")}
            m.update(zero)
            for k in ("SourceReceivedQPS", "SinkWriteQPS",
                      "SourceReceivedBytesPerSeconds", "SinkWriteBytesPerSeconds"):
                m[k] = "0.0"
            per = {}
            for k in ("TableSourceReceivedCount", "TableSinkWriteCount",
                      "TableSourceReceivedBytes", "TableSinkWriteBytes",
                      "TableSourceReceivedQPS", "TableSinkWriteQPS",
                      "TableSourceReceivedBytesPerSeconds",
                      "TableSinkWriteBytesPerSeconds"):
                m[k] = dict(per)
            return m
        r = self.rng.random()
        if state == "RUNNING" and not self.tiny_done:
            r = 0.0  # guarantee one job with rates like "3.0E-4"
            self.tiny_done = True
        if r < 0.15:
            cnt = {t: self.rng.randrange(1, 4) for t in tables}
            secs = max(secs, 10000)
        else:
            cnt = {t: self.rng.randrange(5, 5000000) for t in tables}
        size = {t: c * self.rng.choice((41, 82, 120, 377)) for t, c in cnt.items()}
        running = state not in END_STATES
        wcnt = {t: c if not running else max(0, c - self.rng.randrange(0, 50))
                for t, c in cnt.items()}
        wsize = {t: size[t] * wcnt[t] // cnt[t] if cnt[t] else 0 for t in cnt}

        def rate(v):
            return java_double(v / max(secs, 1)) if running or r < 0.15 \
                else "0.0"
        m["SourceReceivedCount"] = str(sum(cnt.values()))
        m["SinkWriteCount"] = str(sum(wcnt.values()))
        m["SourceReceivedBytes"] = str(sum(size.values()))
        m["SinkWriteBytes"] = str(sum(wsize.values()))
        m["SourceReceivedQPS"] = rate(sum(cnt.values()))
        m["SinkWriteQPS"] = rate(sum(wcnt.values()))
        m["SourceReceivedBytesPerSeconds"] = rate(sum(size.values()))
        m["SinkWriteBytesPerSeconds"] = rate(sum(wsize.values()))
        m["TableSourceReceivedCount"] = {t: str(v) for t, v in cnt.items()}
        m["TableSinkWriteCount"] = {t: str(v) for t, v in wcnt.items()}
        m["TableSourceReceivedBytes"] = {t: str(v) for t, v in size.items()}
        m["TableSinkWriteBytes"] = {t: str(v) for t, v in wsize.items()}
        m["TableSourceReceivedQPS"] = {t: rate(v) for t, v in cnt.items()}
        m["TableSinkWriteQPS"] = {t: rate(v) for t, v in wcnt.items()}
        m["TableSourceReceivedBytesPerSeconds"] = {t: rate(v) for t, v in size.items()}
        m["TableSinkWriteBytesPerSeconds"] = {t: rate(v) for t, v in wsize.items()}
        return m

    def pick_states(self, n):
        first = ALL_STATES[:]
        self.rng.shuffle(first)
        names = [s for s, _ in STATE_WEIGHTS]
        weights = [w for _, w in STATE_WEIGHTS]
        out = first[:n]
        while len(out) < n:
            out.append(self.rng.choices(names, weights)[0])
        return out

    def pick_mix(self, n):
        """--mix: the job states in the given shares (largest remainders
        get the jobs rounding leaves), shuffled; every state of the mix
        that gets a share of at least one job appears."""
        mix = self.a.mix
        tot = sum(w for _, w in mix)
        want = [(s, n * w / tot) for s, w in mix]
        cnt = {s: int(x) for s, x in want}
        rest = n - sum(cnt.values())
        for s, x in sorted(want, key=lambda t: int(t[1]) - t[1])[:rest]:
            cnt[s] += 1
        out = [s for s, _ in mix for _ in range(cnt[s])]
        self.rng2.shuffle(out)
        return out

    def make_job(self, state, jid=None, name=None):
        jid = jid or self.new_id()
        npipe = self.a.pipelines or self.rng.choice((1, 1, 1, 2, 3))
        streaming = state not in ("FINISHED",) or self.rng.random() < 0.3
        interval = self.rng.choice((5000, 10000, 30000, 60000))
        env = {"job.mode": "STREAMING" if streaming else "BATCH",
               "checkpoint.interval": str(interval),
               "parallelism": str(self.rng.choice((1, 2, 2, 4)))}
        vertices, edges, pipes = self.make_dag(str(jid), npipe)
        if state in END_STATES:
            finish = self.now - self.rng.randrange(60000, 20 * 3600000)
            create = finish - self.rng.randrange(120000, 3 * 86400000)
        else:
            finish = None
            create = self.now - self.rng.randrange(300000, 5 * 86400000)
        tables = sorted({t for p in pipes for t in p["tables"]})
        end = finish or self.now
        j = {
            "jobId": str(jid),
            "jobName": name or self.rng.choice(NAMES),
            "jobStatus": state,
            "envOptions": env,
            "createTime": fmt_time(create),
            "startTime": start_time(state, create),
            "finishTime": fmt_time(finish) if finish else None,
            "errorMsg": self.rng.choice(ERRORS) if state == "FAILED" else None,
            "jobDag": {"jobId": str(jid), "pipelineEdges": edges,
                       "envOptions": env, "vertexInfoMap": vertices},
            "pluginJarsUrls": [],
            "isStartWithSavePoint": False,
            "metrics": self.make_metrics(tables, state, (end - create) // 1000),
        }
        ctx = {"id": jid, "pipes": pipes, "interval": interval,
               "create": create, "end": end, "parallelism": int(env["parallelism"])}
        return j, ctx

    # ------------------------------------------------------------ checkpoints
    def state_bytes(self, big):
        n = self.rng.randrange(200, 3000) if big else self.rng.randrange(4, 48)
        return self.rng.randbytes(n)

    def completed_checkpoint(self, ctx, pipe, cid, trig, ctype, big):
        par = ctx["parallelism"]
        savepoint = ctype == 3
        task_states = []
        sizes = {}
        for typ, name in pipe["actions"]:
            key = {"name": "ActionStateKey - " + name}
            subs = []
            tot = 0
            for i in range(par):
                if typ == "transform":
                    st = []
                else:
                    st = [self.state_bytes(big)]
                tot += sum(len(x) for x in st)
                subs.append({"stateKey": key, "index": i, "state": st})
            coord = None
            if typ == "source":
                coord = {"stateKey": key, "index": -1,
                         "state": [self.state_bytes(big)]}
            task_states.append({"key": key, "value": {
                "stateKey": key, "subtaskStates": subs,
                "coordinatorState": coord, "parallelism": par}})
            sizes[typ] = tot
        stats = []
        done = trig + self.rng.randrange(20, 400)
        for vid in pipe["vids"][:1] + pipe["vids"][-1:]:
            subs = [{"subtaskIndex": i, "ackTimestamp": done - self.rng.randrange(0, 15),
                     "stateSize": self.rng.randrange(0, 64),
                     "subtaskStatus": 1 if savepoint else 0} for i in range(par)]
            stats.append({"key": vid, "value": {
                "jobVertexId": vid, "subtaskStats": subs,
                "subtaskCompleted": [savepoint] * par,
                "numAcknowledgedSubtasks": par}})
        return {"jobId": ctx["id"], "pipelineId": pipe["pid"], "checkpointId": cid,
                "triggerTimestamp": trig, "checkpointType": ctype,
                "completedTimestamp": done, "taskStates": task_states,
                "taskStatistics": stats, "isRestored": False}, done

    def write_real(self, ctx, counts, savepoint_newest=False, sertmp=False,
                   newest_ms=None, restored_sp=False):
        """counts: {pid: number of .ser files}; files end at newest_ms.
        restored_sp: the job was restored from a savepoint, which stays in
        the directory with MAX_RETAINED newer checkpoints after it."""
        jid = ctx["id"]
        jdir = os.path.join(self.ck, str(jid))
        os.makedirs(jdir, exist_ok=True)
        newest_ms = newest_ms or ctx["end"] - self.rng.randrange(100, ctx["interval"])
        big = self.rng.random() < 0.1
        info = {"layout": "real", "pipelines": {}}
        for pipe in ctx["pipes"]:
            pid = pipe["pid"]
            k = counts[pid]
            last_cid = self.rng.randrange(k, k + 400)
            first_cid = last_cid - k + 1
            old_sp = last_cid - MAX_RETAINED if restored_sp and k > MAX_RETAINED + 1 \
                else None
            gap = self.rng2.randrange(600000, 6 * 3600000) if old_sp else 0
            files = []
            for n, cid in enumerate(range(first_cid, last_cid + 1)):
                is_sp = (savepoint_newest and cid == last_cid) or cid == old_sp
                back = (last_cid - cid) * ctx["interval"]
                if old_sp is not None and cid <= old_sp:
                    back += gap  # the job was stopped before its restore
                trig = newest_ms - back - self.rng.randrange(300, 600) + pid * 7
                if is_sp and cid == last_cid:
                    trig = newest_ms - 250 + pid * 7
                cp, done = self.completed_checkpoint(
                    ctx, pipe, cid, trig, 3 if is_sp else 0, big)
                body = pe.encode_pipeline_state({
                    "jobId": str(jid), "pipelineId": pid, "checkpointId": cid,
                    "states": pe.encode_completed_checkpoint(cp)})
                wts = done + self.rng.randrange(1, 30)
                name = "%d-%d-%d-%d.ser" % (wts, self.rng.randrange(1000), pid, cid)
                self.write(os.path.join(jdir, name), body, wts, crc=True)
                files.append(name)
                if self.a.info_out:
                    self.info_recs.append(info_record(str(jid), name, cp))
            pinfo = {"ser": files, "latest": files[-1], "savepoint": savepoint_newest}
            if old_sp is not None:
                pinfo["restored_savepoint"] = files[old_sp - first_cid]
            if sertmp and pid == 1:
                cid = last_cid + 1
                wts = max(self.now - self.rng.randrange(0, 900), newest_ms + 1)
                cp, _ = self.completed_checkpoint(ctx, pipe, cid, wts - 300, 0, False)
                body = pe.encode_pipeline_state({
                    "jobId": str(jid), "pipelineId": pid, "checkpointId": cid,
                    "states": pe.encode_completed_checkpoint(cp)})
                name = "%d-%d-%d-%d.sertmp" % (wts, self.rng.randrange(1000), pid, cid)
                self.write(os.path.join(jdir, name),
                           body[:self.rng.randrange(1, len(body))], wts, crc=True)
                pinfo["sertmp"] = [name]
            info["pipelines"][str(pid)] = pinfo
        return info

    def retained_counts(self, ctx, leftovers=False):
        if self.a.checkpoints:
            return {p["pid"]: self.a.checkpoints for p in ctx["pipes"]}
        lo, hi = (2 * MAX_RETAINED, 3 * MAX_RETAINED) if leftovers \
            else (MAX_RETAINED, 2 * MAX_RETAINED - 1)
        return {p["pid"]: self.rng.randint(lo, hi) for p in ctx["pipes"]}

    # ------------------------------------------------------------ doc layout
    def task_location(self, jid, pid, i, fancy):
        if fancy:
            return ("TaskLocation{taskGroupLocation=TaskGroupLocation{jobId=%d, "
                    "pipelineId=%d, taskGroupId=30000}, taskID=%d, index=%d}"
                    % (jid, pid, 1000 + i, i))
        return "task-%d" % i

    def write_doc(self, ctx, k, with_ckpt, with_sp, fancy):
        jid = ctx["id"]
        info = {"layout": "documented", "checkpoints": {}, "savepoints": []}
        par = ctx["parallelism"]
        if with_ckpt:
            for pipe in ctx["pipes"]:
                pid = pipe["pid"]
                last = self.rng.randrange(3, 60)
                cids = list(range(max(1, last - 2), last + 1))
                for n, cid in enumerate(cids):
                    ts = ctx["end"] - (last - cid) * ctx["interval"] - 500
                    for i in range(par):
                        p = os.path.join(self.ck, str(jid), str(pid), str(cid),
                                         self.task_location(jid, pid, i, fancy),
                                         "state-data")
                        self.write(p, self.state_bytes(False), ts)
                info["checkpoints"][str(pid)] = cids
        if with_sp:
            for s in range(self.rng.randint(1, 2)):
                sp_ts = ctx["end"] - s * 3600000 - 1000
                for pipe in ctx["pipes"]:
                    for i in range(par):
                        p = os.path.join(self.ck, "savepoint", str(jid), str(sp_ts),
                                         str(pipe["pid"]),
                                         self.task_location(jid, pipe["pid"], i, fancy),
                                         "state-data")
                        self.write(p, self.state_bytes(False), sp_ts)
                info["savepoints"].append(str(sp_ts))
        return info

    # ------------------------------------------------------------ main
    def run(self):
        a = self.a
        os.makedirs(self.ck, exist_ok=True)
        states = self.pick_mix(a.jobs) if a.mix else self.pick_states(a.jobs)
        fc_seen = {"FINISHED": 0, "CANCELED": 0}
        fc_total = {s: states.count(s) for s in fc_seen}
        running_seen = 0
        for state in states:
            j, ctx = self.make_job(state)
            jid = j["jobId"]
            st = None
            bench = bool(a.checkpoints)
            if bench:
                st = self.write_real(ctx, self.retained_counts(ctx),
                                     savepoint_newest=(state == "SAVEPOINT_DONE"),
                                     sertmp=(state == "RUNNING" and self.rng.random() < 0.2))
            elif state in ("RUNNING", "FAILING", "DOING_SAVEPOINT", "CANCELING",
                           "FAILED", "UNKNOWABLE"):
                left = state in ("RUNNING", "FAILED") and self.rng.random() < 0.3
                if state == "RUNNING":
                    running_seen += 1
                    left = left or running_seen == 2
                if left:
                    j["isStartWithSavePoint"] = state == "RUNNING"
                tmp = state == "RUNNING" and (running_seen == 1 or
                                              self.rng.random() < 0.4)
                tmp = tmp or (state == "DOING_SAVEPOINT" and self.rng.random() < 0.5)
                st = self.write_real(ctx, self.retained_counts(ctx, left), sertmp=tmp,
                                     restored_sp=left and state == "RUNNING")
                st["leftovers"] = left
            elif state == "SAVEPOINT_DONE":
                st = self.write_real(ctx, self.retained_counts(ctx),
                                     savepoint_newest=True)
            elif state in fc_seen:
                fc_seen[state] += 1
                if fc_seen[state] == 1 and fc_total[state] >= 2:
                    st = self.write_real(ctx, self.retained_counts(ctx))
                    st["anomaly"] = "end-state dir not deleted (pre-2.3.6 engine)"
            else:  # not started yet: only restores keep the old dir
                if self.rng.random() < 0.5:
                    j["isStartWithSavePoint"] = True
                    old = dict(ctx)
                    old["end"] = self.now - self.rng.randrange(600000, 86400000)
                    st = self.write_real(old, self.retained_counts(ctx),
                                         savepoint_newest=self.rng.random() < 0.5)
            self.jobs.append(j)
            if st:
                self.storage[jid] = st
        # documented layout jobs (known to the engine)
        doc_states = ["FAILED", "SAVEPOINT_DONE", "RUNNING", "CANCELED"]
        for i in range(a.doc_jobs):
            state = doc_states[i % len(doc_states)]
            j, ctx = self.make_job(state)
            with_ckpt = i % 3 != 1
            with_sp = i % 3 != 2 or state == "SAVEPOINT_DONE"
            self.storage[j["jobId"]] = self.write_doc(ctx, i, with_ckpt, with_sp,
                                                      fancy=(i % 3 == 0))
            self.jobs.append(j)
        # orphans: unknown to the engine
        norph = max(3, a.jobs // 20)
        for i in range(norph):
            jid = self.new_id()
            _, ctx = self.make_job("RUNNING", jid=jid)
            if i == 0:
                newest = self.now - self.rng.randrange(120000, 300000)
            else:
                newest = self.now - self.rng.randrange(2 * 86400000, 40 * 86400000)
            ctx["end"] = newest
            st = self.write_real(ctx, self.retained_counts(ctx), newest_ms=newest)
            st["orphan"] = True
            self.storage[str(jid)] = st
            self.orphans.append(str(jid))
        if a.imap:
            self.write_imap()
        self.write_scenario()

    # ------------------------------------------------------------ IMap WAL
    def write_imap(self):
        base = os.path.join(self.out, "imap", "seatunnel")
        running = [j for j in self.jobs if j["jobStatus"] not in END_STATES]
        ended = [j for j in self.jobs if j["jobStatus"] in END_STATES]
        t0 = self.now - 7200000
        region_old = str(IMAP_REGION_BASE + self.rng.randrange(10 ** 9))
        region_new = str(int(region_old) + 3600 * 10 ** 9 + self.rng.randrange(10 ** 9))
        # member starts: 5801 ran from old_start, was restarted at new_start;
        # 5802 joined at the restart (its own nanoTime clock, so its region
        # number says nothing about the order)
        t_old = t0 - 3 * 3600000
        old_start = t_old - self.rng2.randrange(60000, 600000)
        new_start = t0 - self.rng2.randrange(60000, 600000)
        b_start = new_start + self.rng2.randrange(1000, 30000)
        region_b = str(int(region_old) + self.rng2.randrange(1, 3600 * 10 ** 9))
        ma, mb = ["%s:%d" % m for m in MEMBERS]
        regions = [(region_old, ma, old_start, False),
                   (region_new, ma, new_start, True),
                   (region_b, mb, b_start, True)]
        data = {}  # (map, region) -> records

        # engine_checkpoint-id-map: old region fully superseded by the new one
        old, new = [], []
        ts = t_old
        for j in (running + ended)[:6]:
            for pid in j["jobDag"]["pipelineEdges"]:
                key = pe.checkpoint_id_map_key(int(j["jobId"]), int(pid))
                ts += 1000
                old.append({"deleted": False, "key": key,
                            "keyClassName": pe.CLS_STRING, "value": 5,
                            "valueClassName": pe.CLS_LONG, "timestamp": ts})
        ts = t0 + 3600000
        for r in old:
            ts += 1000
            nr = dict(r, timestamp=ts, value=r["value"] + 3)
            new.append(nr)
        for r in old[::3]:
            ts += 1000
            new.append({"deleted": True, "key": r["key"],
                        "keyClassName": pe.CLS_STRING, "timestamp": ts})
        m = "engine_checkpoint-id-map"
        if old:
            data[(m, region_old)] = old
            data[(m, region_new)] = new
        # engine_runningJobState: Long -> JobStatus, tombstones for ended jobs
        recs = []
        ts = t0
        for j in running + ended[:5]:
            ts += 500
            recs.append({"deleted": False, "key": int(j["jobId"]),
                         "keyClassName": pe.CLS_LONG, "value": j["jobStatus"],
                         "valueClassName": pe.CLS_JOBSTATUS, "timestamp": ts})
        for j in ended[:5]:
            ts += 500
            recs.append({"deleted": True, "key": int(j["jobId"]),
                         "keyClassName": pe.CLS_LONG, "timestamp": ts})
        if recs:
            data[("engine_runningJobState", region_new)] = recs
        # engine_runningJobInfo: Long -> JobInfo
        recs = []
        ts = t0
        for j in running:
            ts += 700
            recs.append({"deleted": False, "key": int(j["jobId"]),
                         "keyClassName": pe.CLS_LONG,
                         "value": {"initializationTimestamp": ts - 100,
                                   "jobImmutableInformation": {
                                       "payload": self.rng.randbytes(24).hex()}},
                         "valueClassName": pe.CLS_JOBINFO, "timestamp": ts})
        if recs:
            data[("engine_runningJobInfo", region_new)] = recs
        # engine_stateTimestamps: Long -> Long[13], PipelineLocation -> Long[10]
        recs = []
        ts = t0
        for j in running[:8]:
            ts += 300
            arr = [ts - 5000 + 100 * i if i <= 4 else None for i in range(13)]
            recs.append({"deleted": False, "key": int(j["jobId"]),
                         "keyClassName": pe.CLS_LONG, "value": arr,
                         "valueClassName": pe.CLS_LONG_ARRAY, "timestamp": ts})
            recs.append({"deleted": False,
                         "key": {"jobId": int(j["jobId"]), "pipelineId": 1},
                         "keyClassName": pe.CLS_PIPELINE_LOCATION,
                         "value": [ts - 4000, ts - 3900, None, ts - 3800] + [None] * 6,
                         "valueClassName": pe.CLS_LONG_ARRAY, "timestamp": ts + 1})
        if recs:
            data[("engine_stateTimestamps", region_new)] = recs

        extra = {}  # map -> [(region, member, started, live)] of its own
        if self.a.imap_wal_mix:
            extra = self.wal_mix(data, regions, ma, old_start, t_old, t0)

        # every map has a region per member start; the live wal.txt is
        # created empty at start (HDFS/local).  Object stores: no object
        # before the first write, then <n>_wal.txt blocks.
        maps = IMAPS_3 if self.a.version == "3" else IMAPS
        info = {"members": [ma, mb],
                "store": "object" if self.a.imap_object_store else "hdfs",
                "regions": {}}
        for m in maps:
            for region, member, started, live in regions + extra.get(m, []):
                recs = data.get((m, region), [])
                torn = self.torn.get((m, region), b"")
                d = os.path.join(base, m, region)
                if self.a.imap_object_store:
                    if not recs:
                        continue
                    self.write_blocks(d, recs, torn)
                else:
                    self.write(os.path.join(d, "wal.txt"),
                               pe.encode_wal(recs) + torn,
                               max(r["timestamp"] for r in recs) if recs else started)
                info["regions"].setdefault(m, {})[region] = {
                    "member": member, "started_ms": started, "live": live}
        if self.a.imap_wal_mix:
            info["expected"] = {m: self.wal_expected(m, data)
                                for m in sorted({k[0] for k in data})}
        self.imap_info = info

    WAL_MIX_MAP = "engine_runningJobMetrics"

    def wal_mix(self, data, regions, ma, old_start, t_old, t0):
        """--imap-wal-mix: engine_runningJobMetrics as a long-running
        cluster leaves it: its single key 1L rewritten every 10 s over
        several member starts (two older ones of member A besides those of
        every map), a key that a tombstone ends, a same-timestamp conflict
        (a live record and a tombstone of key 3 at one millisecond), a
        truncated tail in one file (on object stores in 2_wal.txt, of a
        region with many <n>_wal.txt blocks), and member B's empty live
        region.  Returns the map's extra regions."""
        m = self.WAL_MIX_MAP
        a0_start = old_start - 2 * 3600000 - self.rng2.randrange(1000, 60000)
        a1_start = old_start - 3600000 - self.rng2.randrange(1000, 60000)
        base = int(regions[0][0])
        r_a0 = str(base - self.rng2.randrange(10 ** 9, 10 ** 12))
        r_a1 = str(base + self.rng2.randrange(10 ** 12, 10 ** 13))
        rec = pe.long_long_record
        a0 = [rec(2, 20, a0_start + 5000)]
        a0 += [rec(1, i, a0_start + 10000 * i) for i in range(1, 9)]
        a1 = [rec(1, 100 + i, a1_start + 10000 * (i + 1)) for i in range(60)]
        old = [rec(1, 200 + i, t_old + 10000 * (i + 1)) for i in range(6)]
        new = [rec(1, 300 + i, t0 + 10000 * (i + 1)) for i in range(6)]
        tie = t0 + 90000
        new += [rec(2, None, t0 + 70000, deleted=True),
                rec(3, 7, tie), rec(3, None, tie, deleted=True)]
        data[(m, r_a0)] = a0
        data[(m, r_a1)] = a1
        data[(m, regions[0][0])] = old
        data[(m, regions[1][0])] = new
        # a record cut short by the end of its file
        self.torn[(m, r_a1)] = pe.encode_wal_record(
            rec(1, 999, a1_start + 10000 * 61))[:17]
        return {m: [(r_a0, ma, a0_start, False), (r_a1, ma, a1_start, False)]}

    def wal_expected(self, m, data):
        """What the engine's reader gets from map m, from the records the
        generator wrote: newest per key wins, at one timestamp the record
        written last (stfs's order; the engine's is undefined there)."""
        recs = [r for (mm, _), rs in sorted(data.items()) if mm == m for r in rs]
        win, ties = {}, 0
        bykey = {}
        for r in recs:
            bykey.setdefault(repr(r["key"]), []).append(r)
        for k, rs in bykey.items():
            top = max(r["timestamp"] for r in rs)
            at = [r for r in rs if r["timestamp"] == top]
            says = {(r["deleted"], repr(r.get("value"))) for r in at}
            ties += len(says) > 1
            win[k] = at[-1]["deleted"]
        return {"records": len(recs),
                "tombstones": sum(r["deleted"] for r in recs),
                "keys": len(bykey),
                "live_keys": sum(not d for d in win.values()),
                "ties": ties,
                "tail_bytes": sum(len(t) for (mm, _), t in self.torn.items()
                                  if mm == m)}

    def write_blocks(self, d, recs, torn=b""):
        """CloudWriter: the block is rewritten on every append and a new
        <n+1>_wal.txt begins once it is past the block size.  `torn` ends
        2_wal.txt (or the only file) as a truncated tail."""
        block, n, cur = self.a.imap_block_size, 1, []
        size = 0
        blocks = []
        for r in recs:
            b = pe.encode_wal_record(r)
            cur.append((b, r["timestamp"]))
            size += len(b)
            if size > block:
                blocks.append(cur)
                n, cur, size = n + 1, [], 0
        if cur:
            blocks.append(cur)
        for i, blk in enumerate(blocks):
            tail = torn if i == min(1, len(blocks) - 1) else b""
            self.write(os.path.join(d, "%d_wal.txt" % (i + 1)),
                       b"".join(x for x, _ in blk) + tail, blk[-1][1])

    # ------------------------------------------------------------ scenario
    def write_scenario(self):
        counts = {}
        for j in self.jobs:
            counts[j["jobStatus"]] = counts.get(j["jobStatus"], 0) + 1
        scen = {
            "format": "stsim-scenario/1",
            "generator": {"seed": self.a.seed, "now_ms": self.now,
                          "jobs": self.a.jobs, "doc_jobs": self.a.doc_jobs,
                          "checkpoints": self.a.checkpoints},
            "timezone": "UTC",
            "version": self.a.version,
            "legacy_paged": False,
            "cluster": {
                "overview": {"projectVersion": PROJECT_VERSION[self.a.version],
                             "gitCommitAbbrev": "bef7607",
                             "totalSlot": "0", "unassignedSlot": "0", "workers": "2"},
                "members": [self.member(i == 0, port)
                            for i, (_, port) in enumerate(MEMBERS)],
            },
            "jobs": self.jobs,
            "orphans": self.orphans,
            "storage": self.storage,
        }
        if self.imap_info is not None:
            scen["imap"] = self.imap_info
        path = self.a.scenario_out or os.path.join(self.out, "scenario.json")
        with open(path, "w") as f:
            json.dump(scen, f, indent=1)
            f.write("\n")
        ns = self.now * 1000000
        os.utime(path, ns=(ns, ns))

    def member(self, master, port):
        r = self.rng
        m = {"isMaster": "true" if master else "false", "host": "127.0.0.1",
             "port": str(port)}
        for k in MON_KEYS:
            if "memory" in k or "space" in k:
                v = "%.2fG" % (r.randrange(100, 1600) / 100) if "/" not in k \
                    else "%.2f%%" % (r.randrange(100, 9000) / 100)
            elif k.startswith("load") or "percentage" in k:
                v = "%.2f%%" % (r.randrange(0, 9000) / 100)
            elif k == "cluster.timeMillis":
                v = str(self.now)
            elif k == "processors":
                v = "2"
            else:
                v = str(r.randrange(0, 100))
            m[k] = v
        return m


def parse_mix(text):
    """--mix STATE=WEIGHT,...: [(state, weight)], weights > 0."""
    out = []
    for part in text.split(","):
        st, sep, w = part.partition("=")
        if not sep or st not in ALL_STATES:
            raise argparse.ArgumentTypeError(
                "%r: want STATE=WEIGHT with STATE one of %s"
                % (part, ", ".join(ALL_STATES)))
        try:
            wv = float(w)
        except ValueError:
            wv = -1
        if wv <= 0:
            raise argparse.ArgumentTypeError("%r: the weight must be > 0" % part)
        out.append((st, wv))
    return out


def main(argv=None):
    ap = argparse.ArgumentParser(
        description="Generate a deterministic sample SeaTunnel cluster state "
                    "(checkpoint storage, optional IMap WAL, stsim scenario).",
        epilog="Bench example (20,000 files): --jobs 2000 --pipelines 2 "
               "--checkpoints 5.  Pass --now-ms for byte-identical output.")
    ap.add_argument("--out", required=True, help="output directory")
    ap.add_argument("--jobs", type=int, default=20,
                    help="engine-known jobs (default 20; >= 13 covers every JobStatus)")
    ap.add_argument("--pipelines", type=int, default=0,
                    help="pipelines per job (default: random 1..3)")
    ap.add_argument("--checkpoints", type=int, default=0,
                    help="bench mode: exactly C .ser files per pipeline for every "
                         "job and orphan (default: realistic retention)")
    ap.add_argument("--seed", type=int, default=1, help="random seed (default 1)")
    ap.add_argument("--now-ms", type=int, default=None,
                    help="'now' in epoch ms (default: current time)")
    ap.add_argument("--scenario-out", default=None,
                    help="scenario JSON path (default DIR/scenario.json)")
    ap.add_argument("--doc-jobs", type=int, default=0,
                    help="extra engine-known jobs in the documented "
                         "<jobId>/<pid>/<cid>/<task-location>/state-data and "
                         "savepoint/<jobId>/<ts>/... layouts (default 0)")
    ap.add_argument("--imap", action="store_true",
                    help="also write imap/seatunnel/<map>/<region>/wal.txt")
    ap.add_argument("--imap-object-store", action="store_true",
                    help="IMap as on S3/OSS: <region>/<n>_wal.txt, no empty objects")
    ap.add_argument("--imap-wal-mix", action="store_true",
                    help="with --imap: engine_runningJobMetrics with two more "
                         "old regions, overwrites, a tombstone, a "
                         "same-timestamp conflict and a truncated tail; "
                         "scenario.json imap.expected holds the reader's counts")
    ap.add_argument("--imap-block-size", type=int, default=1 << 20,
                    help="object-store block size in bytes (engine: 1 MiB or more; "
                         "smaller only to see rotation in tests)")
    ap.add_argument("--crc", action="store_true",
                    help="write Hadoop .<name>.crc sidecars beside .ser/.sertmp")
    ap.add_argument("--version", default="2.3", choices=("2.3", "3"),
                    help="engine line of the scenario (default 2.3)")
    ap.add_argument("--info-out", default=None,
                    help="write what every .ser holds, as its checkpoints/<cid>/info "
                         "shows it, to this JSON-lines file (for tests)")
    ap.add_argument("--mix", default=None, type=parse_mix,
                    help="job states in these shares instead of the default "
                         "spread, e.g. RUNNING=70,FAILED=15,SAVEPOINT_DONE=10,"
                         "FINISHED=5 (bench: most data in running jobs)")
    a = ap.parse_args(argv)
    if a.now_ms is None:
        a.now_ms = int(time.time() * 1000)
    if a.imap_block_size < 1:
        ap.error("--imap-block-size must be > 0")
    if a.jobs < 0 or a.doc_jobs < 0 or a.checkpoints < 0 or a.pipelines < 0:
        ap.error("counts must be >= 0")
    g = Gen(a)
    t = time.time()
    g.run()
    if a.info_out:
        with open(a.info_out, "w") as f:
            for r in g.info_recs:
                f.write(json.dumps(r, sort_keys=True) + "\n")
    print("genstate: %d jobs, %d orphans, %d files in %.1fs -> %s"
          % (len(g.jobs), len(g.orphans), g.nfiles, time.time() - t, a.out))
    return 0


if __name__ == "__main__":
    sys.exit(main())
