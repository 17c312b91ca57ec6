"""Tests for scripts/pstuff_enc.py (byte-exact against the protostuff 1.8.0
fixtures in tests/fixtures/protostuff/) and scripts/genstate.py (layout,
determinism, validity of the written files).

Run: python3 -m unittest discover -s tests/scripts -p 'test_*.py'
"""

import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import unittest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SCRIPTS = os.path.join(ROOT, "scripts")
FIX = os.path.join(ROOT, "tests", "fixtures", "protostuff")
sys.path.insert(0, SCRIPTS)

import pstuff_enc as pe  # noqa: E402

with open(os.path.join(FIX, "expected.json")) as _f:
    EXPECTED = json.load(_f)


def fixture(name):
    with open(os.path.join(FIX, name), "rb") as f:
        return f.read()


# --------------------------------------------------------------- decoder
# A minimal independent protostuff walker used to check genstate output.

def _varint(b, i):
    shift = n = 0
    while True:
        c = b[i]
        i += 1
        n |= (c & 0x7F) << shift
        shift += 7
        if not c & 0x80:
            return n, i


def parse_fields(b):
    """Top-level fields of a message: list of (field, wt, value|bytes)."""
    out, i = [], 0
    while i < len(b):
        t, i = _varint(b, i)
        f, wt = t >> 3, t & 7
        if wt == 0:
            v, i = _varint(b, i)
            out.append((f, wt, v))
        elif wt == 2:
            n, i = _varint(b, i)
            out.append((f, wt, b[i:i + n]))
            i += n
        elif wt == 3:
            # skip group with nesting
            d, s = 1, i
            while d:
                t2, i = _varint(b, i)
                w2 = t2 & 7
                if w2 == 0:
                    _, i = _varint(b, i)
                elif w2 == 2:
                    n, i = _varint(b, i)
                    i += n
                elif w2 == 3:
                    d += 1
                elif w2 == 4:
                    d -= 1
                else:
                    raise ValueError("wire type %d" % w2)
            out.append((f, wt, b[s:i]))
        else:
            raise ValueError("unexpected wire type %d at top" % wt)
    return out


class TestPrimitives(unittest.TestCase):
    def test_varint_negative_int32_is_10_bytes(self):
        self.assertEqual(pe.varint(-1), bytes.fromhex("ffffffffffffffffff01"))
        self.assertEqual(pe.varint(300), bytes.fromhex("ac02"))
        self.assertEqual(pe.varint(0), b"\0")

    def test_java_string_hash(self):
        self.assertEqual(pe.java_string_hash(""), 0)
        self.assertEqual(pe.java_string_hash("hello"), 99162322)
        # overflow and a supplementary char (two UTF-16 units)
        self.assertEqual(pe.java_string_hash("polygenelubricants"), -2147483648)
        # U+1F600 = D83D DE00: 0xD83D*31 + 0xDE00
        self.assertEqual(pe.java_string_hash("\U0001F600"), 1772899)

    def test_long_hash_and_buckets(self):
        self.assertEqual(pe.java_long_hash(1), 1)
        self.assertEqual(pe.java_long_hash(-1), 0)
        # README fact 6: keys 1 and 300 land in buckets 1 and 12
        self.assertEqual(pe.hashmap_spread(pe.java_long_hash(300)) & 15, 12)
        self.assertEqual(pe.hashmap_capacity(12), 16)
        self.assertEqual(pe.hashmap_capacity(13), 32)

    def test_action_state_key_buckets_match_readme(self):
        src = "ActionStateKey - pipeline-2 [Source[0]-FakeSource]"
        snk = "ActionStateKey - pipeline-2 [Sink[0]-console-MultiTableSink]"
        self.assertEqual(pe.hashmap_spread(pe.action_state_key_hash(src)) & 15, 3)
        self.assertEqual(pe.hashmap_spread(pe.action_state_key_hash(snk)) & 15, 14)

    def test_hashmap_order_insertion_within_bucket(self):
        # hashes 17 and 1 share bucket 1 in a 16-slot table: insertion order
        self.assertEqual(pe.java_hashmap_order([17, 5, 1]), [0, 2, 1])
        self.assertEqual(pe.java_hashmap_order([1, 17]), [0, 1])


class TestJavaDouble(unittest.TestCase):
    def test_double_to_string(self):
        import genstate
        jd = genstate.java_double
        self.assertEqual(jd(0), "0.0")
        self.assertEqual(jd(20), "20.0")
        self.assertEqual(jd(0.001), "0.001")
        self.assertEqual(jd(1e-4), "1.0E-4")
        self.assertEqual(jd(0.00012345), "1.2345E-4")
        self.assertEqual(jd(12345678.0), "1.2345678E7")
        self.assertEqual(jd(1e7), "1.0E7")
        self.assertEqual(jd(9999999.0), "9999999.0")


class TestFixturesByteExact(unittest.TestCase):
    def check_pipeline(self, name, preserve=True, reverse_maps=False):
        content = json.loads(json.dumps(EXPECTED[name]["content"]))
        if reverse_maps:  # encoder must restore HashMap order by itself
            for k in ("taskStates", "taskStatistics"):
                content["states"][k] = content["states"][k][::-1]
        got = pe.encode_pipeline_state(content, preserve_nulls=preserve)
        want = fixture(name)
        self.assertEqual(len(got), EXPECTED[name]["size"])
        self.assertEqual(got.hex(), want.hex())

    def test_pipeline_state_checkpoint(self):
        self.check_pipeline("pipeline_state_checkpoint.ser")

    def test_pipeline_state_savepoint(self):
        self.check_pipeline("pipeline_state_savepoint.ser")

    def test_pipeline_state_empty_tasks(self):
        self.check_pipeline("pipeline_state_empty_tasks.ser")

    def test_pipeline_state_multi_action_nulls(self):
        self.check_pipeline("pipeline_state_multi_action_nulls.ser")

    def test_pipeline_state_multi_action_nulls_reordered_input(self):
        self.check_pipeline("pipeline_state_multi_action_nulls.ser",
                            reverse_maps=True)

    def test_variant_nopreserve(self):
        self.check_pipeline("variant_nopreserve_pipeline_state_checkpoint.ser",
                            preserve=False)

    def check_wal(self, name):
        got = pe.encode_wal(EXPECTED[name]["records"])
        self.assertEqual(got.hex(), fixture(name).hex())

    def test_wal_checkpoint_id_map(self):
        self.check_wal("wal_checkpoint_id_map.wal")

    def test_wal_live_and_tombstone(self):
        self.check_wal("wal_live_and_tombstone.wal")

    def test_wal_state_timestamps(self):
        self.check_wal("wal_state_timestamps.wal")

    def test_wal_running_job_state(self):
        self.check_wal("wal_running_job_state.wal")

    def test_wal_truncated_tail(self):
        e = EXPECTED["wal_truncated_tail.wal"]
        body = pe.encode_wal(e["records"])
        self.assertEqual(len(body), e["truncated_tail"]["truncated_at"])
        # the cut record is a live Long -> Long record of the same key
        rec = pe.encode_wal_record(pe.long_long_record(
            912345678901234567, 5, 1730001300000))
        self.assertEqual(len(rec) - 12, e["truncated_tail"]["declared_len"])
        got = body + rec[:12 + e["truncated_tail"]["present"]]
        self.assertEqual(got.hex(), fixture("wal_truncated_tail.wal").hex())

    def test_wal_long_long_roundtrip_shape(self):
        rec = pe.encode_wal_record(pe.long_long_record(8, 9, 1))
        self.assertEqual(rec[:4], (len(rec) - 12).to_bytes(4, "little"))
        f = parse_fields(rec[12:])
        self.assertEqual([x[0] for x in f], [1, 2, 3, 4, 5, 6])
        self.assertEqual(f[1][2], bytes.fromhex("0b30080c"))
        self.assertEqual(f[3][2], bytes.fromhex("0b30090c"))
        tomb = pe.encode_wal_record(pe.long_long_record(8, None, 2, True))
        f = parse_fields(tomb[12:])
        self.assertEqual([(x[0], x[2]) for x in f if x[1] == 0], [(1, 1), (6, 2)])
        self.assertEqual([x[0] for x in f], [1, 2, 3, 6])


GEN = os.path.join(SCRIPTS, "genstate.py")
NAME_RE = re.compile(r"^(\d+)-(\d{1,3})-(\d+)-(\d+)\.ser(tmp)?$")


def run_gen(out, *args):
    cmd = [sys.executable, GEN, "--out", out] + list(args)
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    if r.returncode != 0:
        raise AssertionError("genstate failed: %s %s" % (r.stdout, r.stderr))
    return r


def tree_digest(root):
    import hashlib
    h = hashlib.sha256()
    for d, dirs, files in sorted(os.walk(root)):
        dirs.sort()
        for fn in sorted(files):
            p = os.path.join(d, fn)
            h.update(os.path.relpath(p, root).encode())
            with open(p, "rb") as f:
                h.update(f.read())
            h.update(str(int(os.stat(p).st_mtime)).encode())
    return h.hexdigest()


def decode_pipeline_state(b):
    f = {n: v for n, _, v in parse_fields(b)}
    states = {n: v for n, _, v in parse_fields(f[4])}
    return f, states


class TestGenstate(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.mkdtemp(prefix="genstate-test-")
        cls.out = os.path.join(cls.tmp, "a")
        cls.now = 1764500000000
        run_gen(cls.out, "--seed", "7", "--now-ms", str(cls.now),
                "--doc-jobs", "3", "--imap")
        with open(os.path.join(cls.out, "scenario.json")) as f:
            cls.scen = json.load(f)
        cls.jobs = {j["jobId"]: j for j in cls.scen["jobs"]}

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.tmp, ignore_errors=True)

    def test_deterministic(self):
        out2 = os.path.join(self.tmp, "b")
        run_gen(out2, "--seed", "7", "--now-ms", str(self.now),
                "--doc-jobs", "3", "--imap")
        self.assertEqual(tree_digest(self.out), tree_digest(out2))
        out3 = os.path.join(self.tmp, "c")
        run_gen(out3, "--seed", "8", "--now-ms", str(self.now))
        self.assertNotEqual(tree_digest(self.out), tree_digest(out3))

    def test_all_states_present(self):
        states = {j["jobStatus"] for j in self.scen["jobs"]}
        self.assertEqual(states, set(pe.JOB_STATUSES))

    def test_job_ids_18_digits(self):
        for jid in self.jobs:
            self.assertRegex(jid, r"^[1-9]\d{17}$")

    def test_checkpoint_files_valid(self):
        ck = os.path.join(self.out, "checkpoint")
        nser = 0
        for jid in os.listdir(ck):
            if jid == "savepoint":
                continue
            jd = os.path.join(ck, jid)
            for fn in os.listdir(jd):
                p = os.path.join(jd, fn)
                if os.path.isdir(p):
                    continue  # documented layout
                m = NAME_RE.match(fn)
                self.assertIsNotNone(m, fn)
                st = os.stat(p)
                self.assertEqual(int(st.st_mtime * 1000) // 1000,
                                 int(m.group(1)) // 1000)
                if m.group(5):
                    continue
                with open(p, "rb") as f:
                    top, cp = decode_pipeline_state(f.read())
                self.assertEqual(top[1].decode(), jid)
                self.assertEqual(top[2], int(m.group(3)))
                self.assertEqual(top[3], int(m.group(4)))
                self.assertEqual(cp[1], int(jid))
                self.assertEqual(cp[3], int(m.group(4)))
                self.assertIn(cp[5], (0, 3))
                self.assertIn(9, cp)
                nser += 1
        self.assertGreater(nser, 50)

    def test_retention_and_leftovers(self):
        ck = os.path.join(self.out, "checkpoint")
        per = {}
        for jid in os.listdir(ck):
            jd = os.path.join(ck, jid)
            for fn in os.listdir(jd):
                m = NAME_RE.match(fn)
                if m and not m.group(5):
                    per.setdefault((jid, m.group(3)), []).append(fn)
        counts = [len(v) for v in per.values()]
        self.assertTrue(any(c > 5 for c in counts), "no leftover job")
        self.assertTrue(all(c >= 1 for c in counts))
        # at least one pipeline strictly inside [N, 2N-1]
        self.assertTrue(any(3 <= c <= 5 for c in counts))

    def test_running_has_sertmp_and_savepoint_newest(self):
        ck = os.path.join(self.out, "checkpoint")
        tmp_jobs = set()
        for jid in os.listdir(ck):
            if any(fn.endswith(".sertmp") for fn in os.listdir(os.path.join(ck, jid))):
                tmp_jobs.add(jid)
        self.assertTrue(tmp_jobs)
        for jid in tmp_jobs:
            self.assertIn(jid, self.jobs, "sertmp beside an orphan")
            self.assertNotIn(self.jobs[jid]["jobStatus"], pe.END_STATES)
        sp = [j for j in self.scen["jobs"] if j["jobStatus"] == "SAVEPOINT_DONE"
              and self.scen["storage"].get(j["jobId"], {}).get("layout") == "real"]
        self.assertTrue(sp)
        for j in sp:
            jd = os.path.join(ck, j["jobId"])
            newest = {}
            for fn in os.listdir(jd):
                m = NAME_RE.match(fn)
                if m and not m.group(5):
                    pid = m.group(3)
                    if pid not in newest or int(m.group(1)) > int(newest[pid][0]):
                        newest[pid] = (m.group(1), fn)
            for pid, (_, fn) in newest.items():
                with open(os.path.join(jd, fn), "rb") as f:
                    _, cp = decode_pipeline_state(f.read())
                self.assertEqual(cp[5], 3, fn)

    def test_finished_canceled_mostly_without_dir_and_orphans(self):
        ck = os.path.join(self.out, "checkpoint")
        dirs = set(os.listdir(ck)) - {"savepoint"}
        fc = [j for j in self.scen["jobs"]
              if j["jobStatus"] in ("FINISHED", "CANCELED")]
        with_dir = [j for j in fc if j["jobId"] in dirs]
        self.assertLessEqual(len(with_dir), 2)
        self.assertLess(len(with_dir), len(fc))
        orphans = dirs - set(self.jobs)
        self.assertGreaterEqual(len(orphans), 2)
        ages = []
        for o in orphans:
            od = os.path.join(ck, o)
            newest = 0
            for d, _, files in os.walk(od):
                for fn in files:
                    newest = max(newest, os.stat(os.path.join(d, fn)).st_mtime)
            ages.append(self.now / 1000 - newest)
        self.assertTrue(any(a < 600 for a in ages), ages)
        self.assertTrue(any(a > 3600 for a in ages), ages)
        self.assertEqual(sorted(self.scen["orphans"]), sorted(orphans))

    def test_documented_layout(self):
        ck = os.path.join(self.out, "checkpoint")
        found = 0
        for d, _, files in os.walk(ck):
            if "state-data" in files:
                found += 1
        self.assertGreater(found, 3)
        sp = os.path.join(ck, "savepoint")
        self.assertTrue(os.path.isdir(sp))
        tl = [p for p, _, f in os.walk(ck) if "TaskLocation{" in p]
        self.assertTrue(tl)

    def test_scenario_shapes(self):
        keys16 = ["SourceReceivedCount", "SinkWriteCount", "SourceReceivedBytes",
                  "SinkWriteBytes", "SourceReceivedQPS", "SinkWriteQPS",
                  "SourceReceivedBytesPerSeconds", "SinkWriteBytesPerSeconds",
                  "TableSourceReceivedCount", "TableSinkWriteCount",
                  "TableSourceReceivedBytes", "TableSinkWriteBytes",
                  "TableSourceReceivedQPS", "TableSinkWriteQPS",
                  "TableSourceReceivedBytesPerSeconds",
                  "TableSinkWriteBytesPerSeconds"]
        sci = False
        names = {}
        for j in self.scen["jobs"]:
            self.assertEqual(sorted(j["metrics"]), sorted(keys16))
            for k, v in j["metrics"].items():
                if isinstance(v, dict):
                    self.assertTrue(all(isinstance(x, str) for x in v.values()))
                else:
                    self.assertIsInstance(v, str)
                    sci = sci or "E" in v
            self.assertRegex(j["createTime"], r"^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d$")
            if j["jobStatus"] in pe.END_STATES:
                self.assertRegex(j["finishTime"], r"^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d$")
            if j["jobStatus"] == "FAILED":
                self.assertTrue(j["errorMsg"])
            self.assertEqual(j["jobDag"]["jobId"], j["jobId"])
            self.assertTrue(j["jobDag"]["pipelineEdges"])
            names[j["jobName"]] = names.get(j["jobName"], 0) + 1
        self.assertTrue(sci, "no scientific-notation rate")
        self.assertTrue(any(c > 1 for c in names.values()))
        self.assertTrue(any("/" in n and " " in n for n in names))
        self.assertIn("overview", self.scen["cluster"])

    def test_imap_wal(self):
        base = os.path.join(self.out, "imap", "seatunnel")
        maps = os.listdir(base)
        self.assertIn("engine_checkpoint-id-map", maps)
        two = [m for m in maps if len(os.listdir(os.path.join(base, m))) >= 2]
        self.assertTrue(two)
        for m in maps:
            for region in os.listdir(os.path.join(base, m)):
                self.assertRegex(region, r"^\d+$")
                with open(os.path.join(base, m, region, "wal.txt"), "rb") as f:
                    b = f.read()
                i = 0
                while i + 12 < len(b):
                    n = int.from_bytes(b[i:i + 4], "little")
                    self.assertEqual(b[i + 4:i + 12], b"\0" * 8)
                    self.assertLessEqual(i + 12 + n, len(b))
                    self.assertIn(b[i + 12:i + 14], (b"\x08\x00", b"\x08\x01"))
                    parse_fields(b[i + 12:i + 12 + n])
                    i += 12 + n
                self.assertEqual(i, len(b))

    def test_start_time(self):
        # startTime (2.3.12 PR #9400): "" until SCHEDULED, else the SCHEDULED
        # timestamp, between createTime and finishTime
        for j in self.scen["jobs"]:
            self.assertIn("startTime", j)
            if j["jobStatus"] in ("INITIALIZING", "CREATED", "PENDING"):
                self.assertEqual(j["startTime"], "")
                continue
            self.assertRegex(j["startTime"], r"^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d$")
            self.assertGreaterEqual(j["startTime"], j["createTime"])
            if j["finishTime"]:
                self.assertLessEqual(j["startTime"], j["finishTime"])

    def test_version_default_and_overview(self):
        self.assertEqual(self.scen["version"], "2.3")
        self.assertEqual(self.scen["cluster"]["overview"]["projectVersion"], "2.3.12")
        out = os.path.join(self.tmp, "v3")
        run_gen(out, "--seed", "7", "--now-ms", str(self.now), "--version", "3",
                "--jobs", "13")
        with open(os.path.join(out, "scenario.json")) as f:
            s3 = json.load(f)
        self.assertEqual(s3["version"], "3")
        self.assertEqual(s3["cluster"]["overview"]["projectVersion"], "3.1.0")

    IMAPS = ["engine_runningJobInfo", "engine_runningJobState",
             "engine_stateTimestamps", "engine_finishedJobState",
             "engine_finishedJobMetrics", "engine_finishedJobVertexInfo",
             "engine_ownedSlotProfilesIMap", "engine_checkpoint-id-map",
             "engine_runningJobMetrics", "engine_connectorJarRefCounters"]

    def test_imap_live_regions_per_member(self):
        # every member start creates a region per map with an EMPTY wal.txt
        # at once (HDFS/local) and keeps appending to it
        base = os.path.join(self.out, "imap", "seatunnel")
        self.assertEqual(sorted(os.listdir(base)), sorted(self.IMAPS))
        info = self.scen["imap"]
        members = [m["host"] + ":" + m["port"] for m in self.scen["cluster"]["members"]]
        self.assertEqual(sorted(info["members"]), sorted(members))
        empty_live = 0
        for m in self.IMAPS:
            regions = sorted(os.listdir(os.path.join(base, m)))
            self.assertEqual(sorted(info["regions"][m]), regions)
            live = [r for r in regions if info["regions"][m][r]["live"]]
            # one live region per member, the member's newest
            self.assertEqual(sorted(info["regions"][m][r]["member"] for r in live),
                             sorted(members))
            for r in regions:
                ri = info["regions"][m][r]
                same = [x for x in regions if info["regions"][m][x]["member"] == ri["member"]]
                newest = max(same, key=lambda x: info["regions"][m][x]["started_ms"])
                self.assertEqual(ri["live"], r == newest, (m, r))
                p = os.path.join(base, m, r, "wal.txt")
                self.assertTrue(os.path.isfile(p), p)
                if os.path.getsize(p) == 0:
                    # created at the member's start, never written since
                    self.assertEqual(int(os.stat(p).st_mtime * 1000) // 1000,
                                     ri["started_ms"] // 1000)
                    empty_live += ri["live"]
        self.assertGreater(empty_live, 3)

    def test_imap_object_store_layout(self):
        # S3/OSS CloudWriter: <region>/1_wal.txt, 2_wal.txt, ... rewritten as a
        # whole, rotated once past the block size; nothing before the first write
        out = os.path.join(self.tmp, "s3imap")
        run_gen(out, "--seed", "7", "--now-ms", str(self.now), "--imap",
                "--imap-object-store", "--imap-block-size", "300")
        base = os.path.join(out, "imap", "seatunnel")
        rotated = 0
        for m in os.listdir(base):
            for r in os.listdir(os.path.join(base, m)):
                files = sorted(os.listdir(os.path.join(base, m, r)),
                               key=lambda f: int(f.split("_")[0]))
                self.assertTrue(files)
                self.assertEqual(files, ["%d_wal.txt" % (i + 1)
                                         for i in range(len(files))])
                for i, fn in enumerate(files):
                    with open(os.path.join(base, m, r, fn), "rb") as f:
                        b = f.read()
                    self.assertGreater(len(b), 0)
                    if i < len(files) - 1:
                        self.assertGreater(len(b), 300)
                        rotated += 1
                    j = 0
                    while j < len(b):
                        n = int.from_bytes(b[j:j + 4], "little")
                        parse_fields(b[j + 12:j + 12 + n])
                        j += 12 + n
                    self.assertEqual(j, len(b))
        self.assertGreater(rotated, 0)

    def test_crc_sidecars(self):
        import zlib
        ck = os.path.join(self.out, "checkpoint")
        self.assertFalse([f for _, _, fs in os.walk(ck) for f in fs
                          if f.endswith(".crc")], "--crc is off by default")
        out = os.path.join(self.tmp, "crc")
        run_gen(out, "--seed", "7", "--now-ms", str(self.now), "--crc")
        ck = os.path.join(out, "checkpoint")
        n = 0
        for d, _, fs in os.walk(ck):
            for fn in fs:
                if fn.endswith(".crc"):
                    self.assertTrue(fn.startswith("."))
                    self.assertIn(fn[1:-4], fs)
                    continue
                m = NAME_RE.match(fn)
                if not m:
                    continue
                with open(os.path.join(d, fn), "rb") as f:
                    data = f.read()
                with open(os.path.join(d, "." + fn + ".crc"), "rb") as f:
                    crc = f.read()
                want = b"crc\0" + (512).to_bytes(4, "big") + b"".join(
                    zlib.crc32(data[i:i + 512]).to_bytes(4, "big")
                    for i in range(0, len(data), 512))
                self.assertEqual(crc, want, fn)
                self.assertEqual(int(os.stat(os.path.join(d, "." + fn + ".crc")).st_mtime),
                                 int(os.stat(os.path.join(d, fn)).st_mtime))
                n += 1
        self.assertGreater(n, 50)

    def test_restored_job_keeps_old_savepoint(self):
        # a job restored from a savepoint keeps that savepoint, with the new
        # run's checkpoints after it (ids continue, written later)
        ck = os.path.join(self.out, "checkpoint")
        found = 0
        for j in self.scen["jobs"]:
            st = self.scen["storage"].get(j["jobId"])
            if not (j["isStartWithSavePoint"] and j["jobStatus"] == "RUNNING"
                    and st and st.get("leftovers")):
                continue
            jd = os.path.join(ck, j["jobId"])
            per = {}
            for fn in os.listdir(jd):
                m = NAME_RE.match(fn)
                if m and not m.group(5):
                    with open(os.path.join(jd, fn), "rb") as f:
                        _, cp = decode_pipeline_state(f.read())
                    per.setdefault(m.group(3), []).append(
                        (int(m.group(1)), int(m.group(4)), cp[5]))
            for files in per.values():
                files.sort()
                types = [t for _, _, t in files]
                self.assertIn(3, types)
                k = types.index(3)
                self.assertLess(k, len(files) - 1, "savepoint is not the newest")
                self.assertTrue(all(t == 0 for t in types[k + 1:]))
                cids = [c for _, c, _ in files]
                self.assertEqual(cids, sorted(cids))
            found += 1
        self.assertGreater(found, 0)

    def test_bench_mode_speed(self):
        import time
        out = os.path.join(self.tmp, "bench")
        t = time.time()
        run_gen(out, "--jobs", "300", "--pipelines", "2", "--checkpoints", "5",
                "--seed", "1")
        dt = time.time() - t
        n = sum(len(f) for _, _, f in os.walk(os.path.join(out, "checkpoint")))
        self.assertGreaterEqual(n, 300 * 2 * 5 * 0.8)
        self.assertLess(dt, 10)


if __name__ == "__main__":
    unittest.main()
