"""Tests of the IMap WAL the generator writes with --imap-wal-mix, read by
tests/integration/walref.py (the independent reader the integration
suites check stfs against): the reader's counts equal what the generator
says it wrote (scenario.json imap.expected), on local/HDFS and object-store
layouts, and the layout has what issue 12 item 5 lists.

Run: python3 -m unittest discover -s tests/scripts -p 'test_*.py'
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile
import unittest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
GEN = os.path.join(ROOT, "scripts", "genstate.py")
sys.path.insert(0, os.path.join(ROOT, "tests", "integration"))

import walref  # noqa: E402

MIX = "engine_runningJobMetrics"
NOW = 1800000000000


def gen(out, *args):
    r = subprocess.run([sys.executable, GEN, "--out", out, "--jobs", "8",
                        "--seed", "5", "--now-ms", str(NOW), "--imap",
                        "--imap-wal-mix"] + list(args),
                       capture_output=True, text=True, timeout=120)
    if r.returncode:
        raise AssertionError(r.stdout + r.stderr)
    with open(os.path.join(out, "scenario.json")) as f:
        return json.load(f)["imap"]


class TestWalMix(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.mkdtemp()
        cls.hdfs = os.path.join(cls.tmp, "hdfs")
        cls.obj = os.path.join(cls.tmp, "obj")
        cls.info_h = gen(cls.hdfs)
        cls.info_o = gen(cls.obj, "--imap-object-store",
                         "--imap-block-size", "256")

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.tmp)

    def check_counts(self, out, info):
        base = os.path.join(out, "imap", "seatunnel")
        self.assertIn(MIX, info["expected"])
        for m, exp in info["expected"].items():
            got = walref.read_map(os.path.join(base, m))
            self.assertIsNone(got["failed"], m)
            for k, v in exp.items():
                self.assertEqual(got[k], v, (m, k))

    def test_reader_counts_hdfs(self):
        self.check_counts(self.hdfs, self.info_h)

    def test_reader_counts_object_store(self):
        self.check_counts(self.obj, self.info_o)

    def test_mix_has_what_the_issue_lists(self):
        e = self.info_h["expected"][MIX]
        self.assertGreater(e["records"], 2 * e["keys"])  # overwrites
        self.assertGreater(e["tombstones"], 0)
        self.assertEqual(e["ties"], 1)
        self.assertGreater(e["tail_bytes"], 0)
        d = os.path.join(self.hdfs, "imap", "seatunnel", MIX)
        regs = os.listdir(d)
        self.assertGreaterEqual(len(regs), 5)
        sizes = [os.path.getsize(os.path.join(d, r, "wal.txt")) for r in regs]
        self.assertIn(0, sizes)  # an empty live region
        live = [r for r, ri in self.info_h["regions"][MIX].items() if ri["live"]]
        self.assertTrue(any(os.path.getsize(os.path.join(d, r, "wal.txt")) == 0
                            for r in live))
        # several regions superseded (removable once the members stop)
        m = walref.read_map(d)
        v = walref.verdicts(m, 3600, "stopped", NOW * 10 ** 6)
        self.assertGreaterEqual(list(v.values()).count("removable"), 3)

    def test_object_store_series_and_torn_block(self):
        d = os.path.join(self.obj, "imap", "seatunnel", MIX)
        torn_files = []
        many = None
        for r in os.listdir(d):
            files = os.listdir(os.path.join(d, r))
            if "10_wal.txt" in files and "2_wal.txt" in files:
                many = r
            for f in files:
                with open(os.path.join(d, r, f), "rb") as fh:
                    _, tail = walref.parse_file(fh.read())
                if tail:
                    torn_files.append((r, f))
        self.assertIsNotNone(many, "a region with 2_wal.txt and 10_wal.txt")
        # the truncated tail is in 2_wal.txt, and blocks follow it
        self.assertEqual(torn_files, [(many, "2_wal.txt")])
        # no object before a region's first write: no empty object
        for r in os.listdir(d):
            for f in os.listdir(os.path.join(d, r)):
                self.assertGreater(os.path.getsize(os.path.join(d, r, f)), 0)

    def test_without_mix_unchanged(self):
        # the flag adds to the map; without it nothing of it is written
        out = os.path.join(self.tmp, "plain")
        r = subprocess.run([sys.executable, GEN, "--out", out, "--jobs", "8",
                            "--seed", "5", "--now-ms", str(NOW), "--imap"],
                           capture_output=True, text=True, timeout=120)
        self.assertEqual(r.returncode, 0, r.stderr)
        with open(os.path.join(out, "scenario.json")) as f:
            info = json.load(f)["imap"]
        self.assertNotIn("expected", info)
        d = os.path.join(out, "imap", "seatunnel", MIX)
        self.assertTrue(all(os.path.getsize(os.path.join(d, r, "wal.txt")) == 0
                            for r in os.listdir(d)))


if __name__ == "__main__":
    unittest.main()
