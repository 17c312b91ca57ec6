#!/usr/bin/env python3
"""api_shape.py BASE ROLES REQUESTS: the shape of each answer of a SeaTunnel
REST API, one line per request, for test_sim_agrees.sh to compare a real node
with the simulator.

BASE      the API base (http://H:P/hazelcast/rest/maps); a path starting
          with "^" is sent to BASE's parent (…/hazelcast/rest) instead.
ROLES     role=jobId,... ({S} in a request path is replaced by S's id).
REQUESTS  file: "METHOD PATH [BODY]" per line, # comments.
A line is: METHOD PATH -> STATUS content-type=.. length=yes|no BODY-SHAPE,
where the shape keeps the status code, content type, every object's key set
and nesting, and each value's JSON type (a string holding JSON is shown as
json(<its shape>)), but no value: not ids, times or metric numbers.  A list
is the set of its elements' shapes, and so is an object keyed by numbers
(ids: pipelineEdges, vertexInfoMap)."""
import http.client
import json
import sys
import urllib.error
import urllib.request


def shape(v):
    if isinstance(v, dict) and v and all(k.isdigit() for k in v):
        # keyed by ids (pipelineEdges, vertexInfoMap): the set of value shapes
        return "{#:" + "|".join(sorted({shape(x) for x in v.values()})) + "}"
    if isinstance(v, dict):
        return "{" + ",".join("%s:%s" % (k, shape(v[k])) for k in sorted(v)) + "}"
    if isinstance(v, list):
        return "[" + "|".join(sorted({shape(e) for e in v})) + "]"
    if isinstance(v, bool):
        return "bool"
    if isinstance(v, int):
        return "int"
    if isinstance(v, float):
        return "num"
    if v is None:
        return "null"
    if isinstance(v, str) and v[:1] in "{[":
        try:
            return "json(" + shape(json.loads(v)) + ")"
        except ValueError:
            pass
    return "str"


def body_shape(raw):
    if not raw:
        return "empty"
    try:
        return shape(json.loads(raw.decode("utf-8")))
    except (ValueError, UnicodeDecodeError):
        return "text(%s)" % "".join(c if c.isalnum() else "_" for c in
                                    raw[:7].decode("utf-8", "replace"))


def one(base, method, path, body):
    if path.startswith("^"):  # beside BASE: …/rest/maps -> …/rest
        b = base.rsplit("/", 1)[0] if base.count("/") > 2 else base
        url = b + path[1:]
    else:
        url = base + path
    data = body.encode() if body is not None else None
    req = urllib.request.Request(url, data=data, method=method)
    if data is not None:
        req.add_header("Content-Type", "application/json")
    try:
        with urllib.request.urlopen(req, timeout=10) as r:
            code, hdr, raw = r.status, r.headers, r.read()
    except urllib.error.HTTPError as e:
        code, hdr, raw = e.code, e.headers, e.read()
    except (http.client.RemoteDisconnected, ConnectionError, urllib.error.URLError):
        return "no answer"
    ct = hdr.get("Content-Type") or "-"
    cl = "yes" if hdr.get("Content-Length") is not None else "no"
    return "%d content-type=%s length=%s %s" % (code, ct, cl, body_shape(raw))


def main():
    base, roles, reqf = sys.argv[1:4]
    ids = dict(r.split("=", 1) for r in roles.split(",") if r)
    for line in open(reqf):
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        parts = line.split(" ", 2)
        method, path = parts[0], parts[1]
        body = parts[2] if len(parts) > 2 else None
        if body == "''":
            body = ""
        real = path
        for k, v in ids.items():
            real = real.replace("{%s}" % k, v)
        print("%s %s%s -> %s" % (method, path, "" if body is None else " " + (body or "''"),
                                 one(base, method, real, body)))


if __name__ == "__main__":
    main()
