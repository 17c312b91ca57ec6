#!/usr/bin/env python3
"""walref.py — an independent reader of IMap WAL directories, written from
the README ("Reclaiming IMap WAL space") and not from stfs's C code, to
check stfs's summaries and Prometheus series against.

  walref.py summary MAPDIR            the summary's counts, "key value" lines
  walref.py regions MAPDIR GRACE_S ENGINE
                                      "region bytes verdict" lines
  walref.py docsummary WALDIR NAME    the same for the documented layout
  walref.py docregions WALDIR NAME GRACE_S ENGINE
  walref.py figures ROOT GRACE_S ENGINE
                                      per map under ROOT/<cluster>/<map>:
                                      "cluster map wal_bytes reclaimable
                                      superseded_bytes"
ENGINE is up, stopped or unknown (what the engine answered).

Reader (imap-storage-file 2.3.12): every file whose name ends in wal.txt
is parsed on its own: while more than 12 bytes remain, a little-endian
int32 payload length (header bytes 4..11 ignored); negative: the whole load
fails; longer than what is left: a truncated tail ends the file.  The
payload is protostuff IMapFileData (1 deleted, 2 key, 4 value, 6
timestamp).  Newest record per key wins; a tombstone hides the key.
A region (first directory below the map) is superseded when every record
in it has a strictly newer record of the same key in another region.
"""
import os
import sys


class LoadFails(Exception):
    pass


def _varint(b, i, end):
    v = s = 0
    while True:
        if i >= end or s > 63:
            raise LoadFails("undecodable record payload")
        c = b[i]
        i += 1
        v |= (c & 0x7F) << s
        s += 7
        if c < 0x80:
            return v, i


def parse_payload(b, q, e):
    rec = {"deleted": False, "key": None, "value": None, "ts": 0}
    while q < e:
        t, q = _varint(b, q, e)
        fn, wt = t >> 3, t & 7
        if wt == 0:
            v, q = _varint(b, q, e)
            if fn == 1:
                rec["deleted"] = bool(v)
            elif fn == 6:
                rec["ts"] = v - (1 << 64) if v >= 1 << 63 else v
        elif wt == 2:
            n, q = _varint(b, q, e)
            if q + n > e:
                raise LoadFails("undecodable record payload")
            if fn == 2:
                rec["key"] = bytes(b[q:q + n])
            elif fn == 4:
                rec["value"] = bytes(b[q:q + n])
            q += n
        else:
            raise LoadFails("undecodable record payload")
    if rec["key"] is None:
        raise LoadFails("undecodable record payload")
    return rec


def parse_file(b):
    """(records, tail_bytes) of one WAL file."""
    recs, p = [], 0
    while p + 12 < len(b):
        n = int.from_bytes(b[p:p + 4], "little", signed=True)
        if n < 0:
            raise LoadFails("negative record length")
        if p + 12 + n > len(b):
            break
        r = parse_payload(b, p + 12, p + 12 + n)
        r["bytes"] = 12 + n
        recs.append(r)
        p += 12 + n
    return recs, len(b) - p


def read_map(mapdir, doc=None):
    """doc: the documented layout, files <doc>-<partition>.wal directly in
    mapdir, each its own region."""
    import re
    regions, recs = {}, []
    out = {"records": 0, "tombstones": 0, "tail_bytes": 0, "bytes": 0,
           "failed": None}
    walk = os.walk(mapdir) if doc is None else \
        [(mapdir, [], sorted(os.listdir(mapdir)))]
    for root, _, files in walk:
        for f in files:
            if doc is not None:
                if not re.fullmatch(re.escape(doc) + r"-\d+\.wal", f):
                    continue
            elif not f.endswith("wal.txt"):
                continue
            path = os.path.join(root, f)
            rel = os.path.relpath(path, mapdir)
            reg = f if doc is not None else \
                rel.split(os.sep)[0] if os.sep in rel else ""
            st = os.stat(path)
            g = regions.setdefault(reg, {"bytes": 0, "files": 0, "mtime": None})
            g["bytes"] += st.st_size
            g["files"] += 1
            g["mtime"] = max(g["mtime"] or st.st_mtime_ns, st.st_mtime_ns)
            out["bytes"] += st.st_size
            with open(path, "rb") as fh:
                data = fh.read()
            try:
                fr, tail = parse_file(data)
            except LoadFails as e:
                out["failed"] = str(e)
                continue
            out["tail_bytes"] += tail
            for r in fr:
                r["region"] = reg
                recs.append(r)
    out["records"] = len(recs)
    out["tombstones"] = sum(r["deleted"] for r in recs)
    bykey = {}
    for r in recs:
        bykey.setdefault(r["key"], []).append(r)
    out["keys"] = len(bykey)
    live = ties = 0
    live_bytes = 0
    for k, rs in bykey.items():
        top = max(r["ts"] for r in rs)
        newest = [r for r in rs if r["ts"] == top]
        says = {(True, None) if r["deleted"] else (False, r["value"])
                for r in newest}
        ties += len(says) > 1
        # on a tie the engine's order is undefined; count live when the
        # last-written record at the top timestamp is live (stfs's choice)
        w = newest[-1]
        if not w["deleted"]:
            live += 1
            live_bytes += w["bytes"]
    out["live_keys"] = live
    out["ties"] = ties
    out["live_bytes"] = live_bytes
    for name, g in regions.items():
        mine = [r for r in recs if r["region"] == name]
        g["sup"] = out["failed"] is None and all(
            any(o["ts"] > r["ts"] and o["region"] != name
                for o in bykey[r["key"]]) for r in mine)
    out["regions"] = regions
    return out


def verdicts(m, grace_s, engine, now_ns=None):
    """{region: verdict} as README "Reclaiming IMap WAL space" says."""
    import time
    now_ns = now_ns or time.time_ns()
    regs = m["regions"]
    newest = max((g["mtime"] for g in regs.values()), default=0)
    out = {}
    for name, g in regs.items():
        if m["failed"] is not None or not g["sup"]:
            v = "EPERM"
        elif g["bytes"] == 0 or g["mtime"] >= newest or \
                g["mtime"] > now_ns - grace_s * 10 ** 9:
            v = "EBUSY"
        elif engine == "up":
            v = "EBUSY"
        elif engine != "stopped":
            v = "EAGAIN"
        else:
            v = "removable"
        out[name] = v
    return out


def superseded_bytes(m, grace_s, now_ns=None):
    v = verdicts(m, grace_s, "stopped", now_ns)
    return sum(m["regions"][r]["bytes"] for r, x in v.items()
               if x == "removable")


def main(argv):
    cmd = argv[1]
    if cmd in ("summary", "docsummary"):
        m = read_map(argv[2], argv[3] if cmd == "docsummary" else None)
        for k in ("records", "keys", "live_keys", "tombstones", "ties",
                  "tail_bytes", "bytes"):
            print(k, m[k])
        print("regions", len(m["regions"]))
        if m["failed"]:
            print("failed", m["failed"])
    elif cmd in ("regions", "docregions"):
        doc = argv.pop(3) if cmd == "docregions" else None
        m = read_map(argv[2], doc)
        for r, v in sorted(verdicts(m, int(argv[3]), argv[4]).items()):
            print(r, m["regions"][r]["bytes"], v)
    elif cmd == "figures":
        root, grace, engine = argv[2], int(argv[3]), argv[4]
        for c in sorted(os.listdir(root)):
            if not os.path.isdir(os.path.join(root, c)):
                continue
            for mp in sorted(os.listdir(os.path.join(root, c))):
                d = os.path.join(root, c, mp)
                if not os.path.isdir(d):
                    continue
                m = read_map(d)
                v = verdicts(m, grace, engine)
                rec = sum(m["regions"][r]["bytes"] for r, x in v.items()
                          if x == "removable")
                print(c, mp, m["bytes"], rec, superseded_bytes(m, grace))
    else:
        sys.exit("usage: walref.py summary|regions|figures ...")


if __name__ == "__main__":
    main(sys.argv)
