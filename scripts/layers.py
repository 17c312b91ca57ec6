#!/usr/bin/env python3
"""make lint: the include rule of README "Layout of the source".

Every source belongs to one layer, by its folder; it may include its own
layer and the layers below it, never one above:

    util < conf < backends < model < mount < policy < view < fusefs

and only the top (fusefs/*.c: main, ops, notify, signals) includes <fuse.h>.
Includes are path-qualified ("util/buf.h", "model/catalog.h", ...), so each
#include line names its layer.  Usage: layers.py [ROOT]; prints each
violation as FILE:LINE: message and exits 1 when there is one.
"""
import os
import re
import sys

ORDER = ["util", "conf", "backends", "model", "mount", "policy", "view", "fusefs"]
# folder of a source -> layer
FOLDERS = [
    ("backends/util/", "util"),
    ("conf/", "conf"),
    ("backends/", "backends"),
    ("fusefs/model/", "model"),
    ("fusefs/mount/", "mount"),
    ("fusefs/policy/", "policy"),
    ("fusefs/view/", "view"),
    ("fusefs/", "fusefs"),
]
# include path prefix -> layer (the -I roots are ., backends and fusefs)
PREFIXES = [
    ("util/", "util"),
    ("conf/", "conf"),
    ("backends/", "backends"),
    ("model/", "model"),
    ("mount/", "mount"),
    ("policy/", "policy"),
    ("view/", "view"),
    ("fusefs/", "fusefs"),
]
# Known upward includes: none.  Should one ever have to be let through,
# it is listed here; an entry that no longer occurs is reported too, so this
# list only shrinks.
ALLOWED = set()

INC = re.compile(r'^\s*#\s*include\s+([<"])([^">]+)[">]')


def layer_of(path):
    for prefix, layer in FOLDERS:
        if path.startswith(prefix):
            return layer
    return None


def check(root):
    errors = []
    seen = set()
    for top in ("backends", "conf", "fusefs"):
        for dirpath, _, names in os.walk(os.path.join(root, top)):
            for name in sorted(names):
                if not name.endswith((".c", ".h")):
                    continue
                full = os.path.join(dirpath, name)
                rel = os.path.relpath(full, root)
                mine = layer_of(rel)
                if mine is None:
                    continue
                with open(full, encoding="utf-8", errors="replace") as f:
                    lines = f.readlines()
                for no, line in enumerate(lines, 1):
                    m = INC.match(line)
                    if not m:
                        continue
                    kind, inc = m.groups()
                    if kind == "<":
                        key = "%s -> <%s>" % (rel, inc)
                        if inc.startswith("fuse") and mine != "fusefs":
                            seen.add(key)
                            if key in ALLOWED:
                                continue
                            errors.append("%s:%d: <%s> below the FUSE layer (only fusefs/*.c)" % (rel, no, inc))
                        continue
                    theirs = None
                    for prefix, layer in PREFIXES:
                        if inc.startswith(prefix):
                            theirs = layer
                            break
                    if theirs is None:
                        errors.append('%s:%d: "%s" is not path-qualified (util/, conf/, backends/, model/, mount/, policy/, view/, fusefs/)' % (rel, no, inc))
                        continue
                    if not os.path.exists(os.path.join(root, _resolve(inc))):
                        errors.append('%s:%d: "%s" names no file of the project' % (rel, no, inc))
                        continue
                    if ORDER.index(theirs) > ORDER.index(mine):
                        key = "%s -> %s" % (rel, inc)
                        seen.add(key)
                        if key in ALLOWED:
                            continue
                        errors.append('%s:%d: upward include: %s (%s) includes "%s" (%s)' % (rel, no, rel, mine, inc, theirs))
    for key in sorted(ALLOWED - seen):
        errors.append("scripts/layers.py: allowed include %s no longer occurs: drop it from ALLOWED" % key)
    return errors


def _resolve(inc):
    for prefix, base in (("util/", "backends/"), ("model/", "fusefs/"), ("mount/", "fusefs/"),
                         ("policy/", "fusefs/"), ("view/", "fusefs/")):
        if inc.startswith(prefix):
            return base + inc
    return inc


def main():
    root = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
    errors = check(root)
    for e in errors:
        print(e)
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
