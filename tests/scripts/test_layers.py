"""scripts/layers.py: the include rule catches what it must (make lint runs it)."""
import os
import shutil
import subprocess
import tempfile
import unittest

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
TOOL = os.path.join(ROOT, "scripts", "layers.py")


class Layers(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.mkdtemp()
        for top in ("backends", "conf", "fusefs"):
            shutil.copytree(os.path.join(ROOT, top), os.path.join(self.dir, top))

    def tearDown(self):
        shutil.rmtree(self.dir)

    def run_tool(self):
        return subprocess.run(["python3", TOOL, self.dir], capture_output=True, text=True)

    def plant(self, rel, text):
        with open(os.path.join(self.dir, rel), "a") as f:
            f.write(text)

    def test_tree_is_clean(self):
        r = self.run_tool()
        self.assertEqual(r.returncode, 0, r.stdout)

    def test_upward_include_fails(self):
        self.plant("backends/util/buf.c", '#include "policy/rules.h"\n')
        r = self.run_tool()
        self.assertEqual(r.returncode, 1)
        self.assertIn("backends/util/buf.c", r.stdout)
        self.assertIn("upward include", r.stdout)

    def test_backend_including_model_fails(self):
        self.plant("backends/s3.c", '#include "model/catalog.h"\n')
        r = self.run_tool()
        self.assertEqual(r.returncode, 1)
        self.assertIn("upward include", r.stdout)

    def test_fuse_below_top_fails(self):
        self.plant("fusefs/view/render.c", "#include <fuse.h>\n")
        r = self.run_tool()
        self.assertEqual(r.returncode, 1)
        self.assertIn("below the FUSE layer", r.stdout)

    def test_unqualified_include_fails(self):
        self.plant("conf/conf.c", '#include "buf.h"\n')
        r = self.run_tool()
        self.assertEqual(r.returncode, 1)
        self.assertIn("not path-qualified", r.stdout)

    def test_downward_include_passes(self):
        self.plant("fusefs/view/render.c", '#include "util/buf.h"\n#include "model/catalog.h"\n')
        r = self.run_tool()
        self.assertEqual(r.returncode, 0, r.stdout)

    def test_stale_allowance_fails(self):
        # an allowance whose include is gone must be dropped: the list only shrinks
        import importlib.util

        spec = importlib.util.spec_from_file_location("layers", TOOL)
        mod = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(mod)
        mod.ALLOWED = set(mod.ALLOWED) | {"fusefs/view/render.c -> mount/nothing.h"}
        errors = mod.check(self.dir)
        self.assertTrue(any("no longer occurs" in e for e in errors), errors)


if __name__ == "__main__":
    unittest.main()
