#!/usr/bin/env python3
"""A tiny WebHDFS client for the tests (stdlib only), talking to a real
namenode the way Hadoop's own clients do over REST.

  webhdfs.py upload URL USER LOCALDIR REMOTEDIR   every file, two-step CREATE
  webhdfs.py put URL USER LOCALFILE REMOTEPATH
  webhdfs.py files URL USER REMOTEDIR             "relpath size" of every file below
  webhdfs.py exists URL USER REMOTEPATH           exit 0 when it exists
  webhdfs.py get URL USER REMOTEPATH              the file's bytes to stdout

URL is the namenode's http://host:port.  Names are percent-encoded; every
request has a 30 s deadline.
"""
import concurrent.futures
import http.client
import json
import os
import sys
import urllib.parse


def call(base, method, path, op, user, body=None, **params):
    u = urllib.parse.urlsplit(base)
    q = {"op": op, "user.name": user}
    q.update(params)
    target = "/webhdfs/v1" + urllib.parse.quote(path) + "?" + urllib.parse.urlencode(q)
    for _ in range(3):  # the namenode, then the datanode it redirects to
        c = http.client.HTTPConnection(u.hostname, u.port, timeout=30)
        c.request(method, target, body=body if body is not None and _ else None)
        r = c.getresponse()
        data = r.read()
        c.close()
        if r.status == 307:
            loc = urllib.parse.urlsplit(r.getheader("Location"))
            u, target = loc, loc.path + "?" + loc.query
            continue
        return r.status, data
    raise RuntimeError("too many redirects")


def put(base, user, local, remote):
    with open(local, "rb") as f:
        data = f.read()
    st, body = call(base, "PUT", remote, "CREATE", user, body=data, overwrite="true")
    if st != 201:
        raise RuntimeError("CREATE %s: %s %s" % (remote, st, body[:200]))


def upload(base, user, ldir, rdir):
    jobs = []
    for d, _, files in os.walk(ldir):
        rel = os.path.relpath(d, ldir)
        rd = rdir if rel == "." else rdir.rstrip("/") + "/" + rel
        st, body = call(base, "PUT", rd, "MKDIRS", user)
        if st != 200:
            raise RuntimeError("MKDIRS %s: %s %s" % (rd, st, body[:200]))
        for f in files:
            jobs.append((os.path.join(d, f), rd + "/" + f))
    with concurrent.futures.ThreadPoolExecutor(8) as ex:
        list(ex.map(lambda j: put(base, user, *j), jobs))
    print(len(jobs))


def files(base, user, rdir, rel=""):
    st, body = call(base, "GET", rdir, "LISTSTATUS", user)
    if st == 404:
        return
    if st != 200:
        raise RuntimeError("LISTSTATUS %s: %s %s" % (rdir, st, body[:200]))
    for e in json.loads(body)["FileStatuses"]["FileStatus"]:
        name = e["pathSuffix"]
        if e["type"] == "DIRECTORY":
            yield from files(base, user, rdir.rstrip("/") + "/" + name, rel + name + "/")
        else:
            yield rel + name, e["length"]


def main():
    cmd, base, user = sys.argv[1:4]
    if cmd == "upload":
        upload(base, user, sys.argv[4], sys.argv[5])
    elif cmd == "put":
        put(base, user, sys.argv[4], sys.argv[5])
    elif cmd == "files":
        for p, n in sorted(files(base, user, sys.argv[4])):
            print(p, n)
    elif cmd == "get":
        st, body = call(base, "GET", sys.argv[4], "OPEN", user)
        if st != 200:
            sys.exit("OPEN %s: %s" % (sys.argv[4], st))
        sys.stdout.buffer.write(body)
    elif cmd == "exists":
        st, _ = call(base, "GET", sys.argv[4], "GETFILESTATUS", user)
        sys.exit(0 if st == 200 else 1)
    else:
        sys.exit("unknown command " + cmd)


if __name__ == "__main__":
    main()
