#!/usr/bin/env python3
"""Run tests/scripts/test_*.py and print 'scripts: N passed, N failed'."""
import os
import sys
import unittest

root = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
os.chdir(root)
suite = unittest.defaultTestLoader.discover("tests/scripts", pattern="test_*.py")
res = unittest.TextTestRunner(verbosity=1).run(suite)
bad = len(res.failures) + len(res.errors)
print("scripts: %d passed, %d failed" % (res.testsRun - bad, bad))
sys.exit(0 if bad == 0 and res.testsRun > 0 else 1)
