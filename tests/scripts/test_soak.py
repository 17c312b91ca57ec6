"""make soak's checks can fail: scripts/soak.sh in a short bounded run (a few
seconds, six jobs, no fault windows) passes as it is, and FAILs with a
non-zero exit when SOAK_INJECT adds one lost call (a walk into a job that is
not there, outside any fault window) or one mismatched read (a comparison
with the raw bytes' first byte flipped), each caught by its own check.

Real mounts (root, /dev/fuse), s3rver (node) and the simulator, as the soak
itself: a machine without them fails here, it does not skip.
"""
import os
import re
import subprocess
import unittest

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
SOAK = os.path.join(ROOT, "scripts", "soak.sh")


def soak(inject=None, seconds=4):
    env = dict(os.environ, SOAK_SECONDS=str(seconds), SOAK_JOBS="6",
               SOAK_S3_JOBS="2")
    env.pop("SOAK_OUT", None)
    env.pop("SOAK_INJECT", None)
    if inject is not None:
        env["SOAK_INJECT"] = inject
    p = subprocess.run(["bash", SOAK], capture_output=True, text=True,
                       env=env, timeout=180)
    return p.returncode, p.stdout + p.stderr


def counts(out):
    """(lost, mismatched reads) from the verdict's summary line."""
    m = re.search(r"lost (\d+), mismatched reads (\d+)", out)
    assert m, out
    return int(m.group(1)), int(m.group(2))


class SoakProof(unittest.TestCase):
    def test_short_run_passes_without_injection(self):
        rc, out = soak()
        self.assertEqual(rc, 0, out)
        self.assertEqual(counts(out), (0, 0), out)
        self.assertRegex(out, r"ok   no call lost, no read differs", out)
        self.assertRegex(out, r"soak: [1-9][0-9]* passed, 0 failed", out)

    def fails_on(self, inject, want, line):
        """SOAK_INJECT=inject: a non-zero exit, (lost, mismatched) == want,
        the verdict names the injected call, and only its check fails."""
        rc, out = soak(inject)
        self.assertNotEqual(rc, 0, out)
        self.assertEqual(counts(out), want, out)
        self.assertRegex(out, line, out)
        self.assertIn("FAIL no call lost, no read differs", out)
        self.assertRegex(out, r"soak: \d+ passed, 1 failed", out)

    def test_a_lost_call_fails_the_soak(self):
        self.fails_on("lost", (1, 0), r"LOST \d+ \d+ loc inject-lost [1-9]")

    def test_a_mismatched_read_fails_the_soak(self):
        # the read itself worked: a mismatch, not a lost call
        self.fails_on("mismatch", (0, 1),
                      r"MISMATCH \S+/mloc \S+/inject/\d+/\S+\.ser")

    def test_an_unknown_injection_is_refused(self):
        rc, out = soak("typo")
        self.assertNotEqual(rc, 0, out)
        self.assertIn("SOAK_INJECT is lost or mismatch, not [typo]", out)


if __name__ == "__main__":
    unittest.main()
