"""The daemon links only what it calls: code only the tests use (the
protostuff-to-JSON renderer) is dropped by the linker (Makefile
DAEMON_LDFLAGS), so it cannot be reached after mount."""
import os
import subprocess
import unittest

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
BIN = os.path.join(ROOT, "build", "stfs")
LIB = os.path.join(ROOT, "build", "libstfs.a")
TEST_ONLY = ("pstuff_ckpt_to_json",)


def symbols(path):
    out = subprocess.run(["nm", "--defined-only", path], capture_output=True, text=True, check=True)
    return {line.split()[-1] for line in out.stdout.splitlines() if line.strip() and not line.endswith(":")}


class Binary(unittest.TestCase):
    def test_test_only_code_not_in_daemon(self):
        self.assertTrue(os.path.exists(BIN), "build/stfs missing: run make")
        lib = symbols(LIB)
        daemon = symbols(BIN)
        for name in TEST_ONLY:
            # the library the tests link has it, the daemon does not
            self.assertIn(name, lib)
            self.assertNotIn(name, daemon)


if __name__ == "__main__":
    unittest.main()
