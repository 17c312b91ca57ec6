#!/usr/bin/env python3
"""alert_tests.py SCRAPE RULES OUT: promtool unit tests for the shipped
alerting rules, on series cut from a real scrape of stfs.prom (names and
label sets exactly as stfs exports them; the values are the test's).

Exits 1 when a metric a rule uses is missing from the scrape (the rules
would watch nothing)."""
import re
import sys

scrape, rules, out = sys.argv[1:4]
series = {}  # name -> [label text]
for line in open(scrape):
    m = re.match(r'^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{[^}]*\})? ', line)
    if m:
        series.setdefault(m.group(1), []).append(m.group(2) or "")

used = set()
for line in open(rules):
    line = line.split("#", 1)[0]
    for name in re.findall(r'\b((?:stfs|seatunnel)_[a-z0-9_]+)\b', line):
        used.add(name)
missing = sorted(n for n in used if n not in series)
if missing:
    print("rules use series the scrape lacks: " + ", ".join(missing))
    sys.exit(1)


def labels(text):
    return dict(re.findall(r'(\w+)="((?:[^"\\]|\\.)*)"', text))


def lab(text):
    return text if text else ""


# a RUNNING job with a checkpoint interval, and the labels stfs gives it
running = None
for st in series["seatunnel_job_state"]:
    d = labels(st)
    if d.get("state") != "RUNNING":
        continue
    jl = '{job_id="%s"' % d["job_id"]
    cands = [l for l in series["stfs_job_checkpoint_interval_seconds"]
             if l.startswith(jl + ",") or l.startswith(jl + "}")]
    newest = [l for l in series["stfs_job_newest_checkpoint_timestamp_seconds"]
              if l in cands]
    if cands and newest:
        running = (cands[0], st)
        break
if not running:
    print("no RUNNING job with a checkpoint interval and a checkpoint in the scrape")
    sys.exit(1)
jl, stl = running
jd = labels(jl)
dead_job = None
for st in series["seatunnel_job_state"]:
    d = labels(st)
    if d.get("state") == "FAILED":
        jf = '{job_id="%s"' % d["job_id"]
        old = [l for l in series.get(
            "stfs_job_oldest_restore_point_timestamp_seconds", [])
            if l.startswith(jf + ",") or l.startswith(jf + "}")]
        if old:
            dead_job = (old[0], st)
            break
if not dead_job:
    print("no FAILED job with a restore point in the scrape")
    sys.exit(1)
dl, dstl = dead_job
dd = labels(dl)


def explabels(d, **extra):
    e = dict(d)
    e.update(extra)
    return "\n".join("              %s: '%s'" % (k, v.replace("'", "''"))
                     for k, v in sorted(e.items()))


GiB = 1024 ** 3
t = []
w = t.append
w("rule_files:\n  - %s\nevaluation_interval: 1m\ntests:\n" % rules)
# 1. a stale checkpoint fires; a fresh one does not
w("""  - interval: 1m
    input_series:
      - series: 'stfs_job_newest_checkpoint_timestamp_seconds%(jl)s'
        values: '0x30'
      - series: 'stfs_job_checkpoint_interval_seconds%(jl)s'
        values: '2x30'
      - series: 'seatunnel_job_state%(stl)s'
        values: '1x30'
    alert_rule_test:
      - eval_time: 10m
        alertname: SeaTunnelCheckpointStale
        exp_alerts:
          - exp_labels:
%(labs)s
            exp_annotations:
              summary: 'Job %(name)s (%(id)s) has not checkpointed for 10m 0s'
""" % {"jl": jl, "stl": stl, "labs": explabels(jd, severity="warning"),
       "name": jd.get("job_name", ""), "id": jd["job_id"]})
w("""  - interval: 1m
    input_series:
      - series: 'stfs_job_newest_checkpoint_timestamp_seconds%(jl)s'
        values: '0+60x30'
      - series: 'stfs_job_checkpoint_interval_seconds%(jl)s'
        values: '30x30'
      - series: 'seatunnel_job_state%(stl)s'
        values: '1x30'
    alert_rule_test:
      - eval_time: 10m
        alertname: SeaTunnelCheckpointStale
        exp_alerts: []
""" % {"jl": jl, "stl": stl})
# 2. storage of dead jobs, orphans, an old restore point of a FAILED job
w("""  - interval: 1m
    input_series:
      - series: 'stfs_dead_jobs_storage_bytes'
        values: '%(big)dx120'
      - series: 'stfs_orphan_jobs'
        values: '0x120'
      - series: 'stfs_job_oldest_restore_point_timestamp_seconds%(dl)s'
        values: '0x120'
      - series: 'seatunnel_job_state%(dstl)s'
        values: '1x120'
    alert_rule_test:
      - eval_time: 90m
        alertname: SeaTunnelDeadJobStorage
        exp_alerts:
          - exp_labels:
              severity: info
            exp_annotations:
              summary: '20GiB of checkpoint storage held by dead jobs'
      - eval_time: 90m
        alertname: SeaTunnelOrphanedCheckpoints
        exp_alerts: []
      - eval_time: 90m
        alertname: SeaTunnelOldRestorePoint
        exp_alerts: []
""" % {"big": 20 * GiB, "dl": dl, "dstl": dstl})
# a restore point written 2,700,000 s (31 days 6 h) before the test starts
w("""  - interval: 1m
    input_series:
      - series: 'stfs_job_oldest_restore_point_timestamp_seconds%(dl)s'
        values: '-2700000x120'
      - series: 'seatunnel_job_state%(dstl)s'
        values: '1x120'
    alert_rule_test:
      - eval_time: 90m
        alertname: SeaTunnelOldRestorePoint
        exp_alerts:
          - exp_labels:
%(labs)s
            exp_annotations:
              summary: 'Job %(name)s (%(id)s) keeps a restore point 31d 7h 30m 0s old'
""" % {"dl": dl, "dstl": dstl, "labs": explabels(dd, severity="info"),
       "name": dd.get("job_name", ""), "id": dd["job_id"]})
# 3. a degraded source, refused deletions
up = [l for l in series["stfs_backend_up"] if 'backend="engine"' in l][0]
w("""  - interval: 1m
    input_series:
      - series: 'stfs_backend_up%(up)s'
        values: '1 1 0x20'
      - series: 'stfs_deletions_refused_total'
        values: '0 0 0 1 2 2 2'
    alert_rule_test:
      - eval_time: 10m
        alertname: StfsBackendDegraded
        exp_alerts:
          - exp_labels:
              severity: warning
              backend: engine
            exp_annotations:
              summary: 'stfs cannot reach its engine source'
      - eval_time: 6m
        alertname: StfsDeletionsRefused
        exp_alerts:
          - exp_labels:
              severity: info
            exp_annotations:
              summary: 'stfs refused 2 deletions in 15 minutes (see .stfs/audit)'
""" % {"up": up})
# 4. reclaimable and superseded IMap WAL, on a map's labels as exported
im = [l for l in series["stfs_imap_reclaimable_bytes"]][0]
imd = labels(im)
w("""  - interval: 1m
    input_series:
      - series: 'stfs_imap_reclaimable_bytes%(im)s'
        values: '0 0 %(big)dx40'
      - series: 'stfs_imap_superseded_bytes%(im)s'
        values: '%(big)dx100'
    alert_rule_test:
      - eval_time: 10m
        alertname: StfsImapWalReclaimable
        exp_alerts: []
      - eval_time: 30m
        alertname: StfsImapWalReclaimable
        exp_alerts:
          - exp_labels:
%(labs)s
            exp_annotations:
              summary: '2GiB of IMap WAL in %(c)s/%(m)s can be removed now (see imap/%(c)s/%(m)s.summary)'
      - eval_time: 90m
        alertname: StfsImapWalSuperseded
        exp_alerts: []
""" % {"im": im, "big": 2 * GiB, "labs": explabels(imd, severity="info"),
       "c": imd["cluster"], "m": imd["map"]})
w("""  - interval: 1m
    input_series:
      - series: 'stfs_imap_superseded_bytes%(im)s'
        values: '%(big)dx100'
    alert_rule_test:
      - eval_time: 90m
        alertname: StfsImapWalSuperseded
        exp_alerts:
          - exp_labels:
%(labs)s
            exp_annotations:
              summary: '6GiB of superseded IMap WAL in %(c)s/%(m)s, removable while the engine is stopped'
""" % {"im": im, "big": 6 * GiB, "labs": explabels(imd, severity="info"),
       "c": imd["cluster"], "m": imd["map"]})
open(out, "w").write("".join(t))
