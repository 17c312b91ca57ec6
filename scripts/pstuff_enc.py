#!/usr/bin/env python3
"""Protostuff 1.8.0 ENCODER for SeaTunnel's checkpoint and IMap WAL classes.

Pure Python 3 stdlib. Written from the rules in
tests/fixtures/protostuff/README.md (bytes written by the real protostuff library) and
checked byte for byte against those fixtures by tests/scripts/test_genstate.py.

Input shapes follow the "content" / "records" members of
tests/fixtures/protostuff/expected.json:

* encode_pipeline_state(content, preserve_nulls=True) -> bytes
    content = {"jobId": "<str>", "pipelineId": int, "checkpointId": int,
               "states": <CompletedCheckpoint dict> | bytes}
  CompletedCheckpoint dict: jobId, pipelineId, checkpointId, triggerTimestamp,
  checkpointType (int ordinal | {"ordinal":..} | enum name), completedTimestamp,
  taskStates (list of {"key": {"name":..}, "value": ActionState} in INSERTION
  order, or None), taskStatistics (list of {"key": int, "value": TaskStatistics}),
  isRestored.  Map entries are re-ordered into Java HashMap iteration order
  (the order the engine's Collectors.toMap HashMap yields), so any insertion
  order compatible with the real one gives the engine's bytes.
* encode_wal_record(rec) -> bytes (12-byte header + IMapFileData payload)
    rec = {"deleted": bool, "key": ..., "keyClassName": str,
           "value": ..., "valueClassName": str, "timestamp": int}
  Supported key/value classes: java.lang.Long, java.lang.String,
  java.lang.Integer, java.lang.Boolean, [Ljava.lang.Long; (list with None),
  ...JobInfo ({"initializationTimestamp", "jobImmutableInformation":
  {"payload": hex}}), ...PipelineLocation ({"jobId","pipelineId"}),
  ...JobStatus ({"ordinal"} or {"name"} or name string; root-enum encoding).
* encode_wal(records) -> bytes: concatenated records.
* java_hashmap_order(keys, hashes) -> list of indexes in iteration order.

Thread safety: pure functions, no shared state.
"""

import struct

# ---------------------------------------------------------------- wire basics

WT_VARINT, WT_LEN, WT_START, WT_END = 0, 2, 3, 4

CHECKPOINT_TYPES = ["CHECKPOINT_TYPE", "SCHEMA_CHANGE_BEFORE_POINT_TYPE",
                    "SCHEMA_CHANGE_AFTER_POINT_TYPE", "SAVEPOINT_TYPE",
                    "COMPLETED_POINT_TYPE"]
SUBTASK_STATUSES = ["RUNNING", "SAVEPOINT_PREPARE_CLOSE", "AUTO_PREPARE_CLOSE"]
JOB_STATUSES = ["INITIALIZING", "CREATED", "PENDING", "SCHEDULED", "RUNNING",
                "FAILING", "FAILED", "DOING_SAVEPOINT", "SAVEPOINT_DONE",
                "CANCELING", "CANCELED", "FINISHED", "UNKNOWABLE"]
END_STATES = {"FAILED", "SAVEPOINT_DONE", "CANCELED", "FINISHED", "UNKNOWABLE"}
# JobStatus.EndState {NOT_END, LOCALLY, GLOBALLY} (Flink-derived); the fixture
# only confirms NOT_END == 0 for RUNNING.  GLOBALLY == 2 is an assumption.
ENDSTATE_NOT_END, ENDSTATE_GLOBALLY = 0, 2

CLS_LONG = "java.lang.Long"
CLS_STRING = "java.lang.String"
CLS_INT = "java.lang.Integer"
CLS_BOOL = "java.lang.Boolean"
CLS_LONG_ARRAY = "[Ljava.lang.Long;"
CLS_JOBINFO = "org.apache.seatunnel.engine.core.job.JobInfo"
CLS_HEAPDATA = "com.hazelcast.internal.serialization.impl.HeapData"
CLS_PIPELINE_LOCATION = \
    "org.apache.seatunnel.engine.server.dag.physical.PipelineLocation"
CLS_JOBSTATUS = "org.apache.seatunnel.engine.core.job.JobStatus"

_M64 = (1 << 64) - 1


def varint(n):
    """protobuf varint; negatives are sign-extended to 64 bits (10 bytes)."""
    n &= _M64
    if n < 0x80:
        return bytes((n,))
    out = bytearray()
    while n >= 0x80:
        out.append((n & 0x7F) | 0x80)
        n >>= 7
    out.append(n)
    return bytes(out)


_TAG_CACHE = {}


def tag(field, wt):
    k = (field << 3) | wt
    t = _TAG_CACHE.get(k)
    if t is None:
        t = _TAG_CACHE[k] = varint(k)
    return t


def f_varint(out, field, n):
    out += tag(field, WT_VARINT)
    out += varint(n)


def f_bytes(out, field, b):
    out += tag(field, WT_LEN)
    out += varint(len(b))
    out += b


def f_string(out, field, s):
    f_bytes(out, field, s.encode("utf-8"))


def f_bool(out, field, v):
    f_varint(out, field, 1 if v else 0)


def start(out, field):
    out += tag(field, WT_START)


def end(out, field):
    out += tag(field, WT_END)


def _hex(b):
    if isinstance(b, (bytes, bytearray)):
        return bytes(b)
    return bytes.fromhex(b)


def enum_ordinal(v, names):
    if isinstance(v, bool):
        raise TypeError("enum value cannot be bool")
    if isinstance(v, int):
        return v
    if isinstance(v, str):
        return names.index(v)
    if isinstance(v, dict):
        if "ordinal" in v:
            return int(v["ordinal"])
        return names.index(v["name"])
    raise TypeError("bad enum value %r" % (v,))


# ---------------------------------------------------------- Java hash codes

def _s32(x):
    x &= 0xFFFFFFFF
    return x - (1 << 32) if x & 0x80000000 else x


def java_string_hash(s):
    """String.hashCode over UTF-16 code units, as int32."""
    h = 0
    data = s.encode("utf-16-be")
    for i in range(0, len(data), 2):
        h = (31 * h + ((data[i] << 8) | data[i + 1])) & 0xFFFFFFFF
    return _s32(h)


def action_state_key_hash(name):
    """Lombok @EqualsAndHashCode: 59 * 1 + (name == null ? 43 : name.hashCode())."""
    return _s32(59 + (43 if name is None else java_string_hash(name)))


def java_long_hash(v):
    u = v & _M64
    return _s32(u ^ (u >> 32))


def hashmap_spread(h):
    h &= 0xFFFFFFFF
    return h ^ (h >> 16)


def hashmap_capacity(n):
    """Capacity of a default `new HashMap<>()` after n distinct puts."""
    cap = 16
    while n > cap * 3 // 4:
        cap *= 2
    return cap


def java_hashmap_order(hashes):
    """Indexes of entries (given in insertion order, by their hashCode) in
    HashMap iteration order: ascending bucket, insertion order within one
    (a resize split keeps relative order; treeified bins are not modelled)."""
    cap = hashmap_capacity(len(hashes))
    keyed = [((hashmap_spread(h) & (cap - 1)), i) for i, h in enumerate(hashes)]
    keyed.sort()
    return [i for _, i in keyed]


# ----------------------------------------------------------- list / array

def enc_list(out, field, items, enc_elem, preserve_nulls=True):
    """List<E>: with preserve_null_elements (SeaTunnel) a wrapping group with
    elements at field 1 and runs of nulls at field 2; otherwise repeated
    fields at `field` with nulls dropped (2.3.0 variant).  enc_elem(out, f, e)
    writes one non-null element at field f."""
    if items is None:
        return
    if not preserve_nulls:
        for e in items:
            if e is not None:
                enc_elem(out, field, e)
        return
    start(out, field)
    nulls = 0
    for e in items:
        if e is None:
            nulls += 1
            continue
        if nulls:
            f_varint(out, 2, nulls)
            nulls = 0
        enc_elem(out, 1, e)
    if nulls:
        f_varint(out, 2, nulls)
    end(out, field)


def enc_array_body(out, items, enc_scalar):
    """Array body: field 1 length, elements at field 2, null runs at field 3."""
    f_varint(out, 1, len(items))
    nulls = 0
    for e in items:
        if e is None:
            nulls += 1
            continue
        if nulls:
            f_varint(out, 3, nulls)
            nulls = 0
        enc_scalar(out, 2, e)
    if nulls:
        f_varint(out, 3, nulls)


def _bool_elem(out, f, v):
    f_bool(out, f, v)


def _varint_elem(out, f, v):
    f_varint(out, f, v)


def _bytes_elem(out, f, v):
    f_bytes(out, f, _hex(v))


# ---------------------------------------------------- checkpoint classes

def _key_name(k):
    return k["name"] if isinstance(k, dict) else k


def enc_action_state_key(out, field, key):
    start(out, field)
    name = _key_name(key)
    if name is not None:
        f_string(out, 1, name)
    end(out, field)


def enc_action_subtask_state(out, field, st, preserve_nulls=True):
    start(out, field)
    if st.get("stateKey") is not None:
        enc_action_state_key(out, 1, st["stateKey"])
    f_varint(out, 2, st.get("index", 0))
    enc_list(out, 3, st.get("state"), _bytes_elem, preserve_nulls)
    end(out, field)


def enc_action_state(out, field, a, preserve_nulls=True):
    start(out, field)
    if a.get("stateKey") is not None:
        enc_action_state_key(out, 1, a["stateKey"])

    def sub(o, f, e):
        enc_action_subtask_state(o, f, e, preserve_nulls)

    enc_list(out, 2, a.get("subtaskStates"), sub, preserve_nulls)
    if a.get("coordinatorState") is not None:
        enc_action_subtask_state(out, 3, a["coordinatorState"], preserve_nulls)
    f_varint(out, 4, a.get("parallelism", 0))
    end(out, field)


def enc_subtask_statistics(out, field, s):
    start(out, field)
    f_varint(out, 1, s.get("subtaskIndex", 0))
    f_varint(out, 2, s.get("ackTimestamp", 0))
    f_varint(out, 3, s.get("stateSize", 0))
    if s.get("subtaskStatus") is not None:
        f_varint(out, 4, enum_ordinal(s["subtaskStatus"], SUBTASK_STATUSES))
    end(out, field)


def enc_task_statistics(out, field, t, preserve_nulls=True):
    start(out, field)
    if t.get("jobVertexId") is not None:
        f_varint(out, 1, t["jobVertexId"])
    enc_list(out, 2, t.get("subtaskStats"), enc_subtask_statistics,
             preserve_nulls)
    sc = t.get("subtaskCompleted")
    if sc is not None:
        start(out, 3)
        enc_array_body(out, sc, _bool_elem)
        end(out, 3)
    f_varint(out, 4, t.get("numAcknowledgedSubtasks", 0))
    if t.get("latestAckedSubtaskStatistics") is not None:
        enc_subtask_statistics(out, 5, t["latestAckedSubtaskStatistics"])
    end(out, field)


def _entries(m):
    if m is None:
        return None
    if isinstance(m, dict):
        return [{"key": k, "value": v} for k, v in m.items()]
    return list(m)


def enc_map(out, field, entries, hashes, enc_key, enc_val):
    """Map<K,V>: group of entry groups at field 1 (key = 1, value = 2), in
    Java HashMap iteration order computed from `hashes`."""
    if entries is None:
        return
    start(out, field)
    for i in java_hashmap_order(hashes):
        e = entries[i]
        start(out, 1)
        if e.get("key") is not None:
            enc_key(out, 1, e["key"])
        if e.get("value") is not None:
            enc_val(out, 2, e["value"])
        end(out, 1)
    end(out, field)


def encode_completed_checkpoint(cp, preserve_nulls=True):
    out = bytearray()
    f_varint(out, 1, int(cp["jobId"]))
    f_varint(out, 2, cp["pipelineId"])
    f_varint(out, 3, cp["checkpointId"])
    f_varint(out, 4, cp.get("triggerTimestamp", 0))
    if cp.get("checkpointType") is not None:
        f_varint(out, 5, enum_ordinal(cp["checkpointType"], CHECKPOINT_TYPES))
    f_varint(out, 6, cp.get("completedTimestamp", 0))

    ts = _entries(cp.get("taskStates"))
    if ts is not None:
        def asv(o, f, v):
            enc_action_state(o, f, v, preserve_nulls)
        enc_map(out, 7, ts,
                [action_state_key_hash(_key_name(e["key"])) for e in ts],
                enc_action_state_key, asv)
    st = _entries(cp.get("taskStatistics"))
    if st is not None:
        def tsv(o, f, v):
            enc_task_statistics(o, f, v, preserve_nulls)
        enc_map(out, 8, st, [java_long_hash(int(e["key"])) for e in st],
                _varint_elem, tsv)
    f_bool(out, 9, cp.get("isRestored", False))
    return bytes(out)


def encode_pipeline_state(content, preserve_nulls=True):
    out = bytearray()
    if content.get("jobId") is not None:
        f_string(out, 1, str(content["jobId"]))
    f_varint(out, 2, content["pipelineId"])
    f_varint(out, 3, content["checkpointId"])
    states = content.get("states")
    if states is not None:
        if not isinstance(states, (bytes, bytearray)):
            states = encode_completed_checkpoint(states, preserve_nulls)
        f_bytes(out, 4, states)
    return bytes(out)


# ------------------------------------------------------------ IMap / WAL

# ObjectSchema type ids of dynamic (Object-typed) fields.
ID_BOOL, ID_INT32, ID_INT64, ID_STRING = 1, 5, 6, 9
ID_ARRAY_SCALAR, ID_POJO = 33, 127
ARRAY_ID_LONG = 13


def _dyn_long_array(out, field, arr):
    start(out, field)
    f_varint(out, ID_ARRAY_SCALAR, ARRAY_ID_LONG)
    enc_array_body(out, arr, _varint_elem)
    end(out, field)


def _enc_jobinfo_fields(out, v):
    if v.get("initializationTimestamp") is not None:
        f_varint(out, 1, v["initializationTimestamp"])
    d = v.get("jobImmutableInformation")
    if d is not None:  # dynamic field of interface type Data -> POJO id 127
        start(out, 2)
        f_string(out, ID_POJO, d.get("@class", CLS_HEAPDATA))
        if d.get("payload") is not None:
            f_bytes(out, 1, _hex(d["payload"]))
        end(out, 2)


def encode_imap_object(obj, cls):
    """ProtoStuffSerializer.serialize(obj) for an IMap key or value."""
    out = bytearray()
    if cls in (CLS_LONG, CLS_STRING, CLS_INT, CLS_BOOL, CLS_LONG_ARRAY):
        # WRAPPERS member -> SerializerDeserializerWrapper{1: Object obj}
        if cls == CLS_LONG_ARRAY:
            _dyn_long_array(out, 1, obj)
            return bytes(out)
        start(out, 1)
        if cls == CLS_LONG:
            f_varint(out, ID_INT64, int(obj))
        elif cls == CLS_INT:
            f_varint(out, ID_INT32, int(obj))
        elif cls == CLS_BOOL:
            f_bool(out, ID_BOOL, obj)
        else:
            f_string(out, ID_STRING, obj)
        end(out, 1)
        return bytes(out)
    if cls == CLS_JOBINFO:
        _enc_jobinfo_fields(out, obj)
    elif cls == CLS_PIPELINE_LOCATION:
        f_varint(out, 1, int(obj["jobId"]))
        f_varint(out, 2, obj["pipelineId"])
    elif cls == CLS_JOBSTATUS:
        o = enum_ordinal(obj, JOB_STATUSES)
        name = JOB_STATUSES[o]
        f_string(out, 1, name)
        f_varint(out, 2, o)
        f_varint(out, 3, ENDSTATE_GLOBALLY if name in END_STATES
                 else ENDSTATE_NOT_END)
    elif isinstance(obj, (bytes, bytearray)):
        out += obj  # pre-encoded
    else:
        raise ValueError("unsupported IMap class %s" % cls)
    return bytes(out)


def encode_imap_file_data(rec):
    out = bytearray()
    deleted = bool(rec.get("deleted", False))
    f_bool(out, 1, deleted)
    kc = rec["keyClassName"]
    f_bytes(out, 2, encode_imap_object(rec["key"], kc))
    f_string(out, 3, kc)
    if not deleted and rec.get("valueClassName") is not None:
        vc = rec["valueClassName"]
        f_bytes(out, 4, encode_imap_object(rec["value"], vc))
        f_string(out, 5, vc)
    f_varint(out, 6, rec.get("timestamp", 0))
    return bytes(out)


def wal_header(n):
    return struct.pack("<i", n) + b"\0" * 8


def encode_wal_record(rec):
    payload = encode_imap_file_data(rec)
    return wal_header(len(payload)) + payload


def encode_wal(records):
    return b"".join(encode_wal_record(r) for r in records)


def long_long_record(key, value, ts, deleted=False):
    """Convenience: Long key -> wrapped Long value (or tombstone)."""
    r = {"deleted": deleted, "key": key, "keyClassName": CLS_LONG,
         "timestamp": ts}
    if not deleted:
        r["value"] = value
        r["valueClassName"] = CLS_LONG
    return r


def checkpoint_id_map_key(job_id, pipeline_id):
    """engine_checkpoint-id-map key: Base64(8-byte BE jobId || 4-byte BE pid)."""
    import base64
    return base64.b64encode(struct.pack(">qi", job_id, pipeline_id)).decode()
