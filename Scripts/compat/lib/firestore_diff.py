"""Hearth's Firestore REST beside Google's Firestore emulator: the same random requests to both,
the answers compared. Run by Scripts/compat/firestore-emulator-diff, which starts both servers.

Three parts, each over its own collections:
- queries: random documents, then structured queries (every operator over values of every type,
  AND/OR, orders, cursors, limits, offsets); the documents returned, in order, or the status;
- cursors: queries ordered by one to three fields (`__name__` last) with startAt and endAt of
  one value per order or fewer, before or after, with filters, limits and offsets;
- aggregations: count (with upTo), sum and avg, up to three at once, over documents with
  numbers, non-numbers and missing fields, with filters, orders, offsets and limits;
- writes: random commits (updates with masks and transforms, transform-only writes, deletes,
  preconditions) on three documents; each commit's status and transform results, then every
  document's fields;
- requests: a fixed list of reads and writes on the other endpoints (get with masks, listings
  with pages, orders, masks and showMissing, batchGet, listCollectionIds, createDocument, patch
  and delete with preconditions and masks, malformed values): status and answer.

Differences the emulator is known to have, which Hearth keeps on purpose, are counted apart.
"""
import json
import random
import sys
import urllib.error
import urllib.request

P = "demo-diff"
DB = f"projects/{P}/databases/(default)"
ROOT = f"{DB}/documents"


def call(base, method, path, body=None, auth="Bearer owner"):
    """One request (as the owner unless `auth` says otherwise): the status and the JSON answer."""
    req = urllib.request.Request(base + path, data=None if body is None else json.dumps(body).encode(), method=method,
                                 headers={"Content-Type": "application/json", "Authorization": auth})
    try:
        with urllib.request.urlopen(req, timeout=30) as r:
            return r.status, json.loads(r.read() or b"null")
    except urllib.error.HTTPError as e:
        raw = e.read()
        try:
            return e.code, json.loads(raw)
        except Exception:
            return e.code, raw.decode(errors="replace")


def message(body):
    return body.get("error", {}).get("message", "") if isinstance(body, dict) else str(body)


class Diff:
    def __init__(self, hearth, emulator):
        self.H, self.E = hearth, emulator
        self.counts = {}

    def both(self, method, path, body=None):
        return call(self.H, method, path, body), call(self.E, method, path, body)

    def count(self, part, kind):
        self.counts.setdefault(part, {"total": 0, "differ": 0, "known": 0})[kind] += 1


VALUES = [
    {"nullValue": None}, {"booleanValue": False}, {"booleanValue": True},
    {"integerValue": "-3"}, {"integerValue": "0"}, {"integerValue": "1"}, {"integerValue": "2"}, {"integerValue": "9007199254740993"},
    {"doubleValue": -2.5}, {"doubleValue": 0.0}, {"doubleValue": 1.0}, {"doubleValue": 1.5}, {"doubleValue": "NaN"}, {"doubleValue": "Infinity"}, {"doubleValue": "-Infinity"},
    {"timestampValue": "2024-01-01T00:00:00Z"}, {"timestampValue": "2025-06-01T12:00:00.123456Z"},
    {"stringValue": ""}, {"stringValue": "a"}, {"stringValue": "B"}, {"stringValue": "é"}, {"stringValue": "ab"},
    {"bytesValue": "AA=="}, {"bytesValue": "AQI="},
    {"referenceValue": f"{ROOT}/x/a"}, {"referenceValue": f"{ROOT}/x/b/y/c"},
    {"geoPointValue": {"latitude": 1, "longitude": 2}}, {"geoPointValue": {"latitude": -1, "longitude": 5}},
    {"arrayValue": {}}, {"arrayValue": {"values": [{"integerValue": "1"}]}}, {"arrayValue": {"values": [{"integerValue": "1"}, {"stringValue": "a"}]}},
    {"mapValue": {}}, {"mapValue": {"fields": {"a": {"integerValue": "1"}}}},
    {"mapValue": {"fields": {"__type__": {"stringValue": "__vector__"}, "value": {"arrayValue": {"values": [{"doubleValue": 1.0}, {"doubleValue": 2.0}]}}}}},
]
NUMBERS = [{"integerValue": "0"}, {"integerValue": "1"}, {"integerValue": "-2"}, {"integerValue": "9223372036854775807"},
           {"integerValue": "-9223372036854775808"}, {"integerValue": "4611686018427387904"},
           {"doubleValue": 1.0}, {"doubleValue": 2.5}, {"doubleValue": -0.5}, {"doubleValue": "NaN"}, {"doubleValue": "Infinity"},
           {"doubleValue": "-Infinity"}, {"doubleValue": 1e308}]
SMALL_NUMBERS = NUMBERS[:3] + NUMBERS[6:9]


def set_field(fields, path, value):
    if path.startswith("`"):
        fields[path.strip("`")] = value
        return
    parts = path.split(".")
    cur = fields
    for p in parts[:-1]:
        cur = cur.setdefault(p, {"mapValue": {"fields": {}}})["mapValue"].setdefault("fields", {})
    cur[parts[-1]] = value


def random_update(R, name, fields, values, transform, transforms=2):
    """An update of `name`: up to three of `fields` set to `values`, maybe a mask of up to three,
    maybe up to `transforms` field transforms made by `transform()`."""
    f = {}
    for fld in R.sample(fields, R.randint(0, 3)):
        set_field(f, fld, R.choice(values))
    w = {"update": {"name": name, "fields": f}}
    if R.random() < 0.5:
        w["updateMask"] = {"fieldPaths": R.sample(fields, R.randint(0, 3))}
    if R.random() < 0.5:
        w["updateTransforms"] = [transform() for _ in range(R.randint(1, transforms))]
    return w


# The emulator refuses an order by __name__ descending, which production serves with an index.
DESCENDING_KEYS = ["Firestore does not support descending key scans"]


def compare_query(d, part, q, known=DESCENDING_KEYS):
    """Runs one structured query on both and counts it under `part`: the same status, and on
    success the same documents in the same order; a refusal of the emulator's in `known` apart."""
    d.count(part, "total")
    (hs, hb), (es, eb) = d.both("POST", f"/v1/{ROOT}:runQuery", {"structuredQuery": q})

    def names(body):
        return [x["document"]["name"].rsplit("/", 1)[1] for x in body if "document" in x] if isinstance(body, list) else body

    label = part.rstrip("s").upper()
    if hs != es:
        if any(k in message(eb) for k in known):
            d.count(part, "known")
            return
        d.count(part, "differ")
        print(label, "STATUS", hs, es, json.dumps(q)[:300], "\n   hearth:", str(hb)[:200], "\n   emulator:", str(eb)[:200])
    elif hs == 200 and names(hb) != names(eb):
        d.count(part, "differ")
        print(label, "RESULTS", json.dumps(q)[:300], "\n   hearth:", names(hb), "\n   emulator:", names(eb))


def queries(d, seeds, per_seed):
    fields = ["a", "b", "m.x"]
    ops = ["EQUAL", "NOT_EQUAL", "LESS_THAN", "LESS_THAN_OR_EQUAL", "GREATER_THAN", "GREATER_THAN_OR_EQUAL", "IN", "NOT_IN",
           "ARRAY_CONTAINS", "ARRAY_CONTAINS_ANY"]
    for seed in range(1, seeds + 1):
        R = random.Random(seed)
        col = f"c{seed}"
        for i in range(30):
            f = {}
            for fld in fields:
                if R.random() < 0.8:
                    set_field(f, fld, R.choice(VALUES))
            if R.random() < 0.5:
                f["tags"] = {"arrayValue": {"values": R.sample(VALUES[3:24], R.randint(0, 3))}}
            d.both("PATCH", f"/v1/{ROOT}/{col}/d{i:02d}", {"fields": f})

        def field_filter():
            op = R.choice(ops)
            fld = R.choice(fields + ["tags"])
            v = {"arrayValue": {"values": R.sample(VALUES, R.randint(1, 3))}} if op in ("IN", "NOT_IN", "ARRAY_CONTAINS_ANY") else R.choice(VALUES)
            return {"fieldFilter": {"field": {"fieldPath": fld}, "op": op, "value": v}}

        def query():
            q = {"from": [{"collectionId": col}]}
            k = R.random()
            if k < 0.45:
                q["where"] = field_filter()
            elif k < 0.55:
                q["where"] = {"unaryFilter": {"field": {"fieldPath": R.choice(fields)}, "op": R.choice(["IS_NULL", "IS_NAN", "IS_NOT_NULL", "IS_NOT_NAN"])}}
            elif k < 0.75:
                q["where"] = {"compositeFilter": {"op": "AND", "filters": [field_filter(), field_filter()]}}
            elif k < 0.9:
                q["where"] = {"compositeFilter": {"op": "OR", "filters": [field_filter(), field_filter()]}}
            if R.random() < 0.5:
                q["orderBy"] = [{"field": {"fieldPath": R.choice(fields + ["__name__"])}, "direction": R.choice(["ASCENDING", "DESCENDING"])}]
            if R.random() < 0.3:
                q["limit"] = R.randint(0, 5)
            if R.random() < 0.2:
                q["offset"] = R.randint(0, 3)
            if R.random() < 0.2 and "orderBy" in q:
                q["startAt"] = {"values": [R.choice(VALUES)], "before": R.random() < 0.5}
            return q

        for _ in range(per_seed):
            compare_query(d, "queries", query())


def cursors(d, seeds, per_seed):
    small = [{"integerValue": str(i)} for i in range(4)] + [{"stringValue": c} for c in "abc"] + [{"nullValue": None}, {"doubleValue": 1.5}]
    for seed in range(1, seeds + 1):
        R = random.Random(100 + seed)
        col = f"k{seed}"
        for i in range(25):
            f = {fld: R.choice(small) for fld in ("a", "b") if R.random() < 0.85}
            d.both("PATCH", f"/v1/{ROOT}/{col}/d{i:02d}", {"fields": f})
        for _ in range(per_seed):
            fields = [f for f in R.sample(["a", "b", "__name__"], R.randint(1, 3)) if f != "__name__"]
            if R.random() < 0.7 or not fields:
                fields.append("__name__")
            q = {"from": [{"collectionId": col}],
                 "orderBy": [{"field": {"fieldPath": f}, "direction": "ASCENDING" if f == "__name__" else R.choice(["ASCENDING", "DESCENDING"])}
                             for f in fields]}

            def cursor():
                values = [{"referenceValue": f"{ROOT}/{col}/d{R.randint(0, 26):02d}"} if f == "__name__" else R.choice(small)
                          for f in fields[:R.randint(1, len(fields))]]
                return {"values": values, "before": R.random() < 0.5}
            if R.random() < 0.6:
                q["startAt"] = cursor()
            if R.random() < 0.6:
                q["endAt"] = cursor()
            if R.random() < 0.3:
                q["limit"] = R.randint(1, 6)
            if R.random() < 0.2:
                q["offset"] = R.randint(1, 3)
            if R.random() < 0.3:
                q["where"] = {"fieldFilter": {"field": {"fieldPath": R.choice(["a", "b"])},
                                              "op": R.choice(["GREATER_THAN", "LESS_THAN_OR_EQUAL", "NOT_EQUAL", "EQUAL"]), "value": R.choice(small)}}
            compare_query(d, "cursors", q)


def aggregations(d, seeds, per_seed):
    others = [{"nullValue": None}, {"stringValue": "a"}, {"booleanValue": True}, {"arrayValue": {"values": [{"integerValue": "1"}]}}]

    def strip(x):
        if isinstance(x, dict):
            return {k: strip(v) for k, v in x.items() if k != "readTime"}
        if isinstance(x, list):
            return [strip(v) for v in x]
        return x

    for seed in range(1, seeds + 1):
        R = random.Random(seed * 7)
        col = f"g{seed}"
        for i in range(R.randint(0, 12)):
            f = {}
            for fld in ("a", "b"):
                k = R.random()
                if k < 0.6:
                    f[fld] = R.choice(SMALL_NUMBERS) if R.random() < 0.7 else R.choice(NUMBERS)
                elif k < 0.8:
                    f[fld] = R.choice(others)
            f["g"] = {"integerValue": str(R.randint(0, 2))}
            d.both("PATCH", f"/v1/{ROOT}/{col}/d{i:02d}", {"fields": f})
        for _ in range(per_seed):
            aggs = []
            for j in range(R.randint(1, 3)):
                k = R.random()
                alias = f"x{j}"
                if k < 0.3:
                    a = {"alias": alias, "count": {}}
                    if R.random() < 0.4:
                        # upTo 0 is refused: Firestore's reference requires more than zero (the emulator takes it).
                        a["count"]["upTo"] = str(R.randint(1, 5))
                elif k < 0.65:
                    a = {"alias": alias, "sum": {"field": {"fieldPath": R.choice(["a", "b", "c"])}}}
                else:
                    a = {"alias": alias, "avg": {"field": {"fieldPath": R.choice(["a", "b", "c"])}}}
                aggs.append(a)
            q = {"from": [{"collectionId": col}]}
            if R.random() < 0.4:
                q["where"] = {"fieldFilter": {"field": {"fieldPath": "g"}, "op": "EQUAL", "value": {"integerValue": str(R.randint(0, 2))}}}
            if R.random() < 0.3:
                q["limit"] = R.randint(0, 6)
            if R.random() < 0.2:
                q["offset"] = R.randint(0, 3)
            if R.random() < 0.3:
                q["orderBy"] = [{"field": {"fieldPath": R.choice(["a", "b", "g"])}, "direction": R.choice(["ASCENDING", "DESCENDING"])}]
            if R.random() < 0.2:
                q["where"] = {"fieldFilter": {"field": {"fieldPath": R.choice(["a", "b"])}, "op": R.choice(["GREATER_THAN", "LESS_THAN", "NOT_EQUAL"]),
                                              "value": R.choice(SMALL_NUMBERS)}}
            body = {"structuredAggregationQuery": {"structuredQuery": q, "aggregations": aggs}}
            d.count("aggregations", "total")
            (hs, hb), (es, eb) = d.both("POST", f"/v1/{ROOT}:runAggregationQuery", body)
            hr = strip([x.get("result") for x in hb if "result" in x]) if hs == 200 else None
            er = strip([x.get("result") for x in eb if "result" in x]) if es == 200 else None
            if hs != es or hr != er:
                d.count("aggregations", "differ")
                print("AGGREGATION", hs, es, json.dumps(body)[:400], "\n   hearth:", json.dumps(hr) if hs == 200 else str(hb)[:300],
                      "\n   emulator:", json.dumps(er) if es == 200 else str(eb)[:300])


def writes(d, seeds, per_seed):
    others = [{"nullValue": None}, {"stringValue": "a"}, {"stringValue": "b"}, {"booleanValue": True}, {"timestampValue": "2020-01-01T00:00:00Z"},
              {"arrayValue": {"values": [{"integerValue": "1"}, {"doubleValue": 1.0}, {"stringValue": "a"}]}}, {"arrayValue": {}},
              {"arrayValue": {"values": [{"integerValue": "2"}, {"nullValue": None}]}},
              {"mapValue": {"fields": {"x": {"integerValue": "1"}}}}, {"mapValue": {}}]
    values = NUMBERS + others
    # Elements of arrayUnion/arrayRemove: no arrays, which Firestore's documentation forbids
    # inside arrays and Hearth refuses, though the emulator takes them there.
    elements = [v for v in values if "arrayValue" not in v]
    fields = ["a", "b", "m.x", "m.y", "arr", "`w.k`"]
    # The emulator refuses some sequences of writes to one document in one commit that cannot
    # succeed (a delete then an update of it; an upsert then an insert) with INVALID_ARGUMENT
    # "Cannot <write> then <write> an entity in the same request."; Hearth runs them, and the
    # commit fails on the precondition with nothing written.
    known = ["an entity in the same request"]

    def normalized(x):
        if isinstance(x, dict):
            out = {}
            for k, v in x.items():
                if k in ("updateTime", "createTime", "commitTime", "readTime"):
                    continue
                out[k] = "NOW" if k == "timestampValue" and v >= "2026" else normalized(v)
            return out
        if isinstance(x, list):
            return [normalized(v) for v in x]
        return x

    for seed in range(1, seeds + 1):
        R = random.Random(seed)
        col = f"w{seed}"

        def transform():
            fp = R.choice(fields)
            k = R.random()
            if k < 0.15:
                return {"fieldPath": fp, "setToServerValue": "REQUEST_TIME"}
            if k < 0.45:
                return {"fieldPath": fp, "increment": R.choice(NUMBERS + others[:2])}
            if k < 0.6:
                return {"fieldPath": fp, "maximum": R.choice(NUMBERS + others[:2])}
            if k < 0.75:
                return {"fieldPath": fp, "minimum": R.choice(NUMBERS + others[:2])}
            listed = {"values": R.sample(elements, R.randint(0, 3))}
            return {"fieldPath": fp, "appendMissingElements" if k < 0.88 else "removeAllFromArray": listed}

        def write():
            name = f"{ROOT}/{col}/d{R.randint(0, 2)}"
            k = R.random()
            w = {}
            if k < 0.15:
                w["delete"] = name
            elif k < 0.3:
                w["transform"] = {"document": name, "fieldTransforms": [transform() for _ in range(R.randint(1, 2))]}
            else:
                w = random_update(R, name, fields, values, transform)
            if R.random() < 0.2:
                w["currentDocument"] = {"exists": R.random() < 0.5}
            return w

        for _ in range(per_seed):
            body = {"writes": [write() for _ in range(R.randint(1, 2))]}
            d.count("writes", "total")
            (hs, hb), (es, eb) = d.both("POST", f"/v1/{DB}/documents:commit", body)
            if hs != es:
                if any(k in message(eb) for k in known):
                    d.count("writes", "known")
                    continue
                d.count("writes", "differ")
                print("WRITE STATUS", hs, es, json.dumps(body)[:600], "\n   hearth:", str(hb)[:300], "\n   emulator:", str(eb)[:300])
                continue
            if hs == 200 and normalized(hb.get("writeResults")) != normalized(eb.get("writeResults")):
                d.count("writes", "differ")
                print("WRITE RESULTS", json.dumps(body)[:600], "\n   hearth:", json.dumps(normalized(hb.get("writeResults")))[:400],
                      "\n   emulator:", json.dumps(normalized(eb.get("writeResults")))[:400])
            for i in range(3):
                (gs, gb), (fs, fb) = d.both("GET", f"/v1/{ROOT}/{col}/d{i}")
                if gs != fs or (gs == 200 and normalized(gb.get("fields", {})) != normalized(fb.get("fields", {}))):
                    d.count("writes", "differ")
                    print("WRITE STATE after", json.dumps(body)[:600], f"\n   d{i} hearth:", gs, json.dumps(normalized(gb.get("fields", {})) if gs == 200 else gb)[:400],
                          "\n   emulator:", fs, json.dumps(normalized(fb.get("fields", {})) if fs == 200 else fb)[:400])
                    # Carry on from the emulator's state.
                    if fs == 200:
                        call(d.H, "PATCH", f"/v1/{ROOT}/{col}/d{i}", {"fields": fb.get("fields", {})})
                    else:
                        call(d.H, "DELETE", f"/v1/{ROOT}/{col}/d{i}")


def requests(d):
    def strip(x):
        if isinstance(x, dict):
            return {k: ("TOKEN" if k == "nextPageToken" else strip(v)) for k, v in x.items()
                    if k not in ("readTime", "updateTime", "createTime", "commitTime", "transaction")}
        if isinstance(x, list):
            return [strip(v) for v in x]
        return x

    col = "rq"
    for i in range(7):
        f = {"n": {"integerValue": str(i)}, "s": {"stringValue": "abcdefg"[i]},
             "m": {"mapValue": {"fields": {"x": {"integerValue": str(i % 3)}, "y": {"booleanValue": i % 2 == 0}}}}}
        if i % 3 == 0:
            del f["s"]
        d.both("PATCH", f"/v1/{ROOT}/{col}/d{i}", {"fields": f})
    for path in ("d2/sub/x", "ghost/sub/y", "d3/other/z"):
        d.both("PATCH", f"/v1/{ROOT}/{col}/{path}", {"fields": {}})
    name = lambda path: f"{ROOT}/{col}/{path}"
    cases = [
        ("GET", f"/{col}/d1", None), ("GET", f"/{col}/d1?mask.fieldPaths=n&mask.fieldPaths=m.x", None),
        ("GET", f"/{col}/d1?mask.fieldPaths=missing", None), ("GET", f"/{col}/nope", None),
        ("GET", f"/{col}", None), ("GET", f"/{col}?pageSize=2", None), ("GET", f"/{col}?orderBy=n%20desc", None),
        ("GET", f"/{col}?orderBy=s", None), ("GET", f"/{col}?orderBy=m.x,n%20desc", None), ("GET", f"/{col}?mask.fieldPaths=s", None),
        ("GET", f"/{col}?showMissing=true", None), ("GET", f"/{col}?showMissing=true&pageSize=3", None),
        ("GET", f"/{col}/d2/sub", None), ("GET", f"/{col}?pageSize=0", None), ("GET", f"/{col}?pageSize=-1", None),
        ("GET", f"/{col}?orderBy=n%20sideways", None),
        ("POST", ":batchGet", {"documents": [name("d1"), name("nope"), name("d0")]}),
        ("POST", ":batchGet", {"documents": [name("d1"), name("d1")]}),
        ("POST", ":batchGet", {"documents": [name("d1")], "mask": {"fieldPaths": ["m.y"]}}),
        ("POST", ":batchGet", {"documents": []}), ("POST", ":batchGet", {"documents": [f"{ROOT}/{col}"]}),
        ("POST", ":listCollectionIds", {}), ("POST", f"/{col}/d2:listCollectionIds", {}),
        ("POST", f"/{col}/ghost:listCollectionIds", {}),
        ("POST", f"/{col}?documentId=d1", {"fields": {}}),
        ("POST", f"/{col}?documentId=new1", {"fields": {"a": {"integerValue": "1"}}}),
        ("POST", f"/{col}?documentId=new2&mask.fieldPaths=a", {"fields": {"a": {"integerValue": "1"}, "b": {"integerValue": "2"}}}),
        ("PATCH", f"/{col}/d4?updateMask.fieldPaths=n&mask.fieldPaths=s", {"fields": {"n": {"integerValue": "40"}}}),
        ("PATCH", f"/{col}/nope2?currentDocument.exists=true", {"fields": {}}),
        ("PATCH", f"/{col}/d5?currentDocument.exists=false", {"fields": {}}),
        ("PATCH", f"/{col}/d5?updateMask.fieldPaths=m.y", {"fields": {}}), ("GET", f"/{col}/d5", None),
        ("DELETE", f"/{col}/nope3?currentDocument.exists=true", None), ("DELETE", f"/{col}/nope4", None),
        ("DELETE", f"/{col}/d6?currentDocument.exists=true", None), ("GET", f"/{col}/d6", None),
        ("GET", f"/{col}/d1/sub/x/y", None), ("GET", f"/{col}/d2/", None), ("GET", f"/{col}/ghost/?pageSize=5", None),
        ("GET", f"/{col}/d2/?showMissing=true", None), ("GET", f"/{col}/d1?mask.fieldPaths=x%20y", None),
        ("GET", f"/{col}/d1?mask.fieldPaths=%60x%20y%60", None), ("GET", f"/{col}/d1?mask.fieldPaths=1n", None),
        ("PATCH", f"/{col}/d7", {"fields": {"a b": {"integerValue": "1"}, "`q`": {"integerValue": "2"}, "__x__": {"integerValue": "3"}}}),
        ("PATCH", f"/{col}/d8", {"fields": {"": {"integerValue": "1"}}}),
        ("PATCH", f"/{col}/d9?updateMask.fieldPaths=a.b", {"fields": {"a": {"integerValue": "1"}}}), ("GET", f"/{col}/d9", None),
        ("PATCH", f"/{col}/d10", {"fields": {"t": {"timestampValue": "2020-01-01T00:00:00.1234567891Z"}}}),
        ("PATCH", f"/{col}/d11", {"fields": {"t": {"timestampValue": "2020-01-01T10:00:00+02:00"}}}), ("GET", f"/{col}/d11", None),
        ("PATCH", f"/{col}/d12", {"fields": {"i": {"integerValue": 5}}}),
        ("PATCH", f"/{col}/d14", {"fields": {"d": {"doubleValue": "1.5"}}}), ("GET", f"/{col}/d14", None),
        ("PATCH", f"/{col}/d15", {"fields": {"g": {"geoPointValue": {"latitude": 91, "longitude": 0}}}}),
        ("PATCH", f"/{col}/d17", {"fields": {"b": {"bytesValue": "not base64!"}}}),
        ("PATCH", f"/{col}/d18", {"fields": {"x": {}}}), ("GET", f"/{col}/d18", None),
        ("PATCH", f"/{col}/d19", {"fields": {"x": {"stringValue": "a", "integerValue": "1"}}}),
    ]
    for method, suffix, body in cases:
        d.count("requests", "total")
        (hs, hb), (es, eb) = d.both(method, f"/v1/{ROOT}{suffix}" if suffix.startswith("/") else f"/v1/{ROOT}{suffix}", body)
        if hs != es or (hs == 200 and strip(hb) != strip(eb)):
            d.count("requests", "differ")
            print(f"REQUEST {method} {suffix} {json.dumps(body)[:150] if body else ''}\n   hearth {hs}: {json.dumps(strip(hb))[:400]}\n   emulator {es}: {json.dumps(strip(eb))[:400]}")


def main():
    hport, eport, seeds, per_seed = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
    d = Diff(f"http://127.0.0.1:{hport}", f"http://127.0.0.1:{eport}")
    queries(d, seeds, per_seed)
    cursors(d, seeds, per_seed // 2 or 1)
    aggregations(d, seeds, per_seed // 3 or 1)
    writes(d, seeds, per_seed // 3 or 1)
    requests(d)
    differ = 0
    for part, c in d.counts.items():
        over = "" if part == "requests" else f" over {seeds} seeds"
        print(f"{part}: {c['total']}{over}, {c['differ']} differences, {c['known']} known emulator differences")
        differ += c["differ"]
    sys.exit(1 if differ else 0)


if __name__ == "__main__":
    main()
