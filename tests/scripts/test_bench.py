"""Tests for the bench's report scripts: scripts/bench-local-report.py (the
local section's table: cold, warm and steady walks, FUSE calls by kind) and
scripts/bench-report.py (the S3 table, whose stfs counters now include the
FUSE request kinds .stfs/stats gained).

Run: python3 -m unittest discover -s tests/scripts -p 'test_*.py'
"""

import importlib.util
import os
import re
import subprocess
import sys
import tempfile
import unittest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SCRIPTS = os.path.join(ROOT, "scripts")


def load(name, fname):
    spec = importlib.util.spec_from_file_location(name, os.path.join(SCRIPTS, fname))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


blr = load("bench_local_report", "bench-local-report.py")


def row(op, run, *v):
    return f"{op} {run} " + " ".join(str(x) for x in v) + "\n"


class BenchLocalReport(unittest.TestCase):
    def setUp(self):
        self.d = tempfile.TemporaryDirectory()
        self.rows = os.path.join(self.d.name, "rows")
        self.kinds = os.path.join(self.d.name, "kinds")
        with open(self.rows, "w") as f:
            # raw cold/warm, stfs cold/warm/steady (us), cpu x3 (ticks), calls x3
            for run, k in ((1, 1), (2, 3), (3, 2)):  # medians: k = 2
                f.write(row("du", run, 400000 * k, 50000 * k, 8000000 * k, 3000000 * k,
                            1000000 * k, 500 * k, 150 * k, 40 * k, 70000 * k, 36000 * k,
                            3800 * k))
                f.write(row("find", run, 200000, 30000, 8000000, 3000000, 900000, 500, 150,
                            40, 70000, 36000, 3800))
        with open(self.kinds, "w") as f:
            for run, n in ((1, 10), (2, 30), (3, 20)):
                f.write(f"du {run} steady opendir {n}\n")
                f.write(f"du {run} steady releasedir {n}\n")
                f.write(f"du {run} warm getattr {n * 100}\n")
                f.write(f"du {run} cold lookup {n + 1}\n")

    def tearDown(self):
        self.d.cleanup()

    def text(self, rss=""):
        return blr.report(blr.load_rows(self.rows), blr.load_kinds(self.kinds), 20000,
                          100000, "3", "2000", rss)

    def line(self, txt, start, ncols=None):
        m = [[c.strip() for c in ln.strip("|").split("|")]
             for ln in txt.splitlines() if ln.startswith(start)]
        m = [c for c in m if ncols is None or len(c) == ncols]
        self.assertEqual(len(m), 1, txt)
        return m[0]

    def test_steady_columns_are_medians(self):
        c = self.line(self.text(), "| `du -s` |", 14)
        self.assertEqual(len(c), 14)
        self.assertEqual(c[1:6], ["0.800 s", "0.100 s", "16.000 s", "6.000 s", "2.000 s"])
        # cold/raw cold, warm/raw warm, steady/raw warm
        self.assertEqual(c[6:9], ["20.0x", "60.0x", "20.0x"])
        # us per entry: mount 100000 entries, raw 20000
        self.assertEqual(c[9:12], ["160.0 (40.0)", "60.0 (5.0)", "20.0"])
        self.assertEqual(c[12], "10.00 / 3.00 / 0.80 s")
        self.assertEqual(c[13], "140000 / 72000 / 7600")

    def test_header_matches_rows(self):
        txt = self.text()
        hdr = self.line(txt, "| op | raw cold")
        self.assertEqual(len(hdr), 14)
        self.line(txt, "| `find` |", 14)
        self.assertIn("stfs steady", hdr)
        self.assertIn("steady ratio", hdr)
        self.assertNotIn("| `ls -lR` |", txt)  # no rows: no line

    def test_kinds_table(self):
        txt = self.text()
        hdr = self.line(txt, "| op | walk |")
        self.assertEqual(hdr[2:], ["getattr", "lookup", "opendir", "releasedir"])
        self.assertEqual(self.line(txt, "| `du -s` | steady |")[2:], ["-", "-", "20", "20"])
        self.assertEqual(self.line(txt, "| `du -s` | warm |")[2:], ["2000", "-", "-", "-"])
        self.assertEqual(self.line(txt, "| `du -s` | cold |")[2:], ["-", "21", "-", "-"])

    def test_rss(self):
        self.assertIn("over 105647 objects: 221.7 MiB", self.text("105647 227021"))
        self.assertNotIn("peak RSS", self.text())

    def test_bad_row_is_refused(self):
        with open(self.rows, "a") as f:
            f.write("du 4 1 2 3 4 5 6 7 8 9 10\n")  # the old 10-field row
        with self.assertRaises(ValueError):
            blr.load_rows(self.rows)

    def test_cli(self):
        out = subprocess.run([sys.executable, os.path.join(SCRIPTS, "bench-local-report.py"),
                              self.rows, self.kinds, "20000", "100000", "3", "2000"],
                             capture_output=True, text=True, check=True).stdout
        self.assertIn("| `du -s` | 0.800 s |", out)


STATS = """# HELP stfs_fuse_getattr_total getattr calls.
# TYPE stfs_fuse_getattr_total counter
stfs_fuse_getattr_total 120
stfs_fuse_readdir_total 40
stfs_fuse_read_total 3
stfs_fuse_read_bytes_total 999
stfs_fuse_lookup_total 7
stfs_fuse_opendir_total 41
stfs_backend_read_requests_total 5
stfs_backend_read_bytes_total 1234
stfs_http_requests_total 9
stfs_fresh_ticks_total 2
"""


class BenchReport(unittest.TestCase):
    def test_stfs_counters_grep_keeps_lookup(self):
        # the pattern scripts/bench.sh greps .stfs/stats with
        with open(os.path.join(SCRIPTS, "bench.sh")) as f:
            sh = f.read()
        m = re.search(r"grep -E '(\^stfs_[^']*)'", sh)
        self.assertIsNotNone(m, "stfs_counters' pattern not found in bench.sh")
        got = subprocess.run(["grep", "-E", m.group(1)], input=STATS, capture_output=True,
                             text=True).stdout.split()
        self.assertIn("stfs_fuse_lookup_total", got)
        self.assertIn("stfs_fuse_getattr_total", got)
        self.assertNotIn("stfs_fresh_ticks_total", got)

    def test_report_prints_counters(self):
        with tempfile.TemporaryDirectory() as d:
            with open(os.path.join(d, "results.tsv"), "w") as f:
                for run in (1, 2, 3):
                    f.write(f"s\tdu_cold\traw\t{run}\t0.3\n")
                    f.write(f"s\tdu_cold\tstfs\t{run}\t{run}.0\n")
                    f.write(f"s\tls_lR\tstfs\t{run}\t0.5\n")
            with open(os.path.join(d, "outputs.tsv"), "w") as f:
                f.write("s\tdu_cold\tstfs\t1\t2006\n")
            counters = ";".join(ln for ln in STATS.splitlines()
                                if ln.startswith("stfs_fuse_") or "requests" in ln)
            with open(os.path.join(d, "counters.tsv"), "w") as f:
                f.write(f"s\t1\t{counters};\n")
            with open(os.path.join(d, "counters-meta.tsv"), "w") as f:
                f.write(f"s\t1\t{counters};\n")
            out = subprocess.run(
                [sys.executable, os.path.join(SCRIPTS, "bench-report.py"), d, "s", "2006",
                 "40", "123", "3", str(256 << 20)],
                capture_output=True, text=True, check=True).stdout
        self.assertRegex(out, r"du -s \(cold, fresh mount\)\s+0\.300\s+2\.000")
        self.assertIn("  stfs_fuse_lookup_total 7", out)
        self.assertIn("  stfs_fuse_opendir_total 41", out)
        self.assertIn("backend_read_requests=5", out)


if __name__ == "__main__":
    unittest.main()
