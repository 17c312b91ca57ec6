"""stfs --help and stfs.1 list exactly the keys of conf's key table, and a
secret key on the command line is refused (argv is readable by everyone).

The key table is conf/conf.c's conf_keys[] (K("name", CT_TYPE, ...)); it is
read from the source so that a key added there and not documented fails here.
"""
import os
import re
import subprocess
import unittest

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
STFS = os.environ.get("STFS_BIN", os.path.join(ROOT, "build", "stfs"))
# not a key of the table: handled by main.c itself
EXTRA = {"config"}


def table():
    """{key: is_secret} from conf_keys[]."""
    with open(os.path.join(ROOT, "conf", "conf.c")) as f:
        text = f.read()
    body = text[text.index("conf_keys[] = {"):]
    body = body[: body.index("};")]
    keys = {m.group(1): m.group(2) == "CT_SECRET"
            for m in re.finditer(r'K\("([a-z_0-9]+)",\s*(CT_[A-Z]+)', body)}
    assert len(keys) > 30, keys
    return keys


def help_keys():
    out = subprocess.run([STFS, "--help"], capture_output=True, text=True,
                         timeout=20).stdout
    out = out[: out.index("FUSE options")]
    keys = set()
    for line in out.splitlines():
        m = re.match(r"^    (?:-o )?([a-z_0-9]+)(?:=| = |\s|$)", line)
        if m:
            keys.add(m.group(1))
    return keys


def man_keys():
    """Keys that start a .TP item of the OPTIONS section of stfs.1."""
    with open(os.path.join(ROOT, "stfs.1")) as f:
        text = f.read()
    sec = text[text.index(".SH OPTIONS"):]
    sec = sec[: sec.index("\n.SH ", 1)]
    keys = set()
    lines = sec.splitlines()
    for i, line in enumerate(lines):
        if i == 0 or lines[i - 1] != ".TP" or not re.match(r"^\.BI? ", line):
            continue
        # .BI a= X ", b=" Y ", flag, c=" Z
        for m in re.finditer(r'(?:^\.BI? |", |, )([a-z_0-9]+)(?==|,|"|\s|$)',
                             line):
            keys.add(m.group(1))
    return keys


@unittest.skipUnless(os.access(STFS, os.X_OK), "build/stfs is not built")
class Options(unittest.TestCase):
    def test_help_lists_every_key(self):
        want = set(table()) | EXTRA
        got = help_keys()
        self.assertEqual(sorted(want - got), [], "keys missing from --help")
        self.assertEqual(sorted(got - want), [], "--help keys not in the table")

    def test_help_shows_defaults(self):
        out = subprocess.run([STFS, "--help"], capture_output=True, text=True,
                             timeout=20).stdout
        self.assertRegex(out, r"-o timeout=MS .*\(5000\)")
        self.assertRegex(out, r"-o orphan_grace=S .*\(600\)")

    def test_secret_keys_shown_as_config_lines(self):
        out = subprocess.run([STFS, "--help"], capture_output=True, text=True,
                             timeout=20).stdout
        for k, secret in table().items():
            if secret:
                self.assertNotRegex(out, r"-o %s[= ]" % k)
                self.assertRegex(out, r"\n    %s = " % k)

    def test_man_page_lists_every_key(self):
        want = set(table())
        got = man_keys() - {"config"}
        self.assertEqual(sorted(want - got), [], "keys missing from stfs.1")
        self.assertEqual(sorted(got - want), [], "stfs.1 keys not in the table")

    def test_secret_keys_refused_on_argv(self):
        secrets = [k for k, s in table().items() if s]
        self.assertGreaterEqual(len(secrets), 3)
        for k in secrets:
            value = "s3cr3t-VALUE-%s" % k
            r = subprocess.run([STFS, "-f", "-o", "%s=%s" % (k, value),
                                "/nonexistent-stfs-mnt"],
                               capture_output=True, text=True, timeout=20)
            self.assertEqual(r.returncode, 1, (k, r.stderr))
            self.assertIn("secrets are not accepted on the command line",
                          r.stderr, k)
            self.assertNotIn(value, r.stderr + r.stdout, k)

    def test_plain_key_not_refused_as_secret(self):
        r = subprocess.run([STFS, "-f", "-o", "engine_user=u", "-o",
                            "checkpoint=ftp://x/y/", "/nonexistent-stfs-mnt"],
                           capture_output=True, text=True, timeout=20)
        self.assertEqual(r.returncode, 1)
        self.assertNotIn("secrets are not accepted", r.stderr)
        self.assertIn("unknown scheme", r.stderr)


class Environment(unittest.TestCase):
    """conf_import_env() is the one place that reads the environment."""

    ALLOWED = {"conf/conf.c",        # conf_env_capture()
               "fusefs/notify.c"}    # systemd's NOTIFY_SOCKET

    def test_only_conf_reads_the_environment(self):
        pat = re.compile(r"\b(secure_)?getenv\s*\(")
        found = []
        for top in ("backends", "conf", "fusefs"):
            for dirpath, _, names in os.walk(os.path.join(ROOT, top)):
                for name in names:
                    if not name.endswith((".c", ".h")):
                        continue
                    full = os.path.join(dirpath, name)
                    rel = os.path.relpath(full, ROOT)
                    with open(full, encoding="utf-8", errors="replace") as f:
                        for no, line in enumerate(f, 1):
                            code = line.split("//")[0].strip()
                            if code.startswith(("*", "/*")):
                                continue  # a comment
                            if pat.search(code) and rel not in self.ALLOWED:
                                found.append("%s:%d" % (rel, no))
        self.assertEqual(found, [], "getenv outside conf_import_env")


if __name__ == "__main__":
    unittest.main()
