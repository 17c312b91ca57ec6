"""make soak's checks can fail: scripts/soak.sh in a short bounded run (a few
seconds, six jobs, no fault windows) passes as it is, and FAILs with a
non-zero exit when SOAK_INJECT adds one lost call (a walk into a job that is
not there, outside any fault window) or one mismatched read (a comparison
with the raw bytes' first byte flipped), each caught by its own check.

Its rule that a call failing inside a fault window (or within the grace
after it) is excused is proven the same way: SOAK_INJECT=window makes one
real window in the short run (the simulator frozen for a second, as the
schedule freezes it) with that failing call inside it, SOAK_INJECT=grace
makes the call right after the window, and SOAK_INJECT=after-window makes
it just past the window's grace: the first two pass, counted as excused,
the last FAILs as a lost call.

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
        return out

    def test_a_lost_call_fails_the_soak(self):
        self.fails_on("lost", (1, 0), r"LOST \d+ \d+ loc inject-lost [1-9]")

    def test_a_mismatched_read_fails_the_soak(self):
        # the read itself worked: a mismatch, not a lost call
        self.fails_on("mismatch", (0, 1),
                      r"MISMATCH \S+/mloc \S+/inject/\d+/\S+\.ser")

    def excused(self, inject, name, where):
        """SOAK_INJECT=inject: the soak passes, its one failing call (name)
        is listed as excused (where: inside the window or in its grace),
        none is lost, one fault window was made."""
        rc, out = soak(inject)
        self.assertEqual(rc, 0, out)
        self.assertEqual(counts(out), (0, 0), out)
        self.assertRegex(out, r"EXCUSED \d+ \d+ loc %s [1-9]\d* \(%s"
                         % (name, where), out)
        self.assertRegex(out, r"fault windows 1\b", out)
        self.assertRegex(out, r"soak: [1-9][0-9]* passed, 0 failed", out)

    def test_a_failure_inside_a_fault_window_is_excused(self):
        self.excused("window", "inject-window", "inside a fault window")

    def test_a_failure_within_the_grace_after_a_window_is_excused(self):
        self.excused("grace", "inject-grace",
                     r"\d+ ms after a fault window, within its grace")

    def test_a_failure_just_past_the_grace_is_lost(self):
        out = self.fails_on("after-window", (1, 0),
                            r"LOST \d+ \d+ loc inject-after-window [1-9]")
        self.assertRegex(out, r"fault windows 1\b", out)
        # just past: made a few hundred ms after the grace ended
        m = re.search(r"inject-after-window \d+ \((\d+) ms past the grace "
                      r"of the window before it\)", out)
        self.assertTrue(m, out)
        self.assertLess(int(m.group(1)), 5000, out)

    def test_an_unknown_injection_is_refused(self):
        rc, out = soak("typo")
        self.assertNotEqual(rc, 0, out)
        self.assertIn("SOAK_INJECT is lost, mismatch, window, grace or "
                      "after-window, not [typo]", out)


if __name__ == "__main__":
    unittest.main()
