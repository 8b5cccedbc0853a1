"""Hearth's security rules beside Google's Firestore emulator. Run by
Scripts/compat/rules-emulator-diff: `rules <expressions> <rules file>` writes one rules file for
both; `run <hearth port> <emulator port> <expressions> <rules file> <seeds> <commits>` compares.

Three parts, in one rules file:
- reads: every expression of the expressions file guards the `get` of its own collection e<i>;
  the same document is written to each (as the owner) and a signed-in client reads it from both:
  allowed or denied must agree. A line starting with "~ " is a known difference, counted apart.
- writes: each condition of WRITE_CONDITIONS guards create, update and delete in collection r<i>;
  a signed-in client sends random commits (updates with masks and transforms, deletes,
  preconditions) to three documents there: the status must agree, and then every document.
- queries: each condition of LIST_CONDITIONS guards `list` in collection q<i>; a signed-in
  client sends random queries (field filters of every operator, AND/OR, limits, orders,
  offsets): allowed or denied must agree. Conditions where the emulator's reasoning is known to
  differ from Hearth's are left out (see LIST_CONDITIONS).
"""
import base64
import json
import random
import sys
import time

from firestore_diff import DB, P, ROOT, call, random_update

WRITE_CONDITIONS = [
    "request.resource.data.diff(resource == null ? {} : resource.data).affectedKeys().hasOnly(['a', 'n'])",
    "request.resource.data.keys().hasOnly(['a', 'b', 'm', 'n', 't'])",
    "request.resource.data.get('a', 0) is int",
    "!('t' in request.resource.data) || request.resource.data.t == request.time",
    "resource == null || request.resource.data.get('n', 0) == resource.data.get('n', 0) + 1",
    "!('m' in request.resource.data) || request.resource.data.m.get('x', 0) is number",
    "request.resource.data.size() <= 3",
    "request.method == 'delete' || request.resource.data.get('b', '') != 'forbidden'",
    "request.resource.id == id && request.resource.__name__ == /databases/$(database)/documents/$(coll)/$(id)",
    "getAfter(/databases/$(database)/documents/$(coll)/$(id)) == request.resource || request.method == 'delete'",
    "request.method == 'delete' ? resource.data.get('a', 0) == 1 : true",
    "existsAfter(/databases/$(database)/documents/$(coll)/d0) || id == 'd0'",
    "request.resource.data.get('arr', []).size() < 3",
    "request.resource.data.get('n', 0) < 10 && request.resource.data.get('n', 0) > -10",
    "request.resource.data.diff(resource == null ? {} : resource.data).changedKeys().size() <= 1",
    "request.resource.data.get(['m', 'x'], null) == null || request.resource.data.m.x > 0",
]


# Left out, where the emulator reasons differently: it allows any query under
# `resource.data.size() < 5`; it cannot prove `score is number` from `score > 5`, `tags is list`
# from `tags array-contains x` or `!(state == 'hidden')` from `state != 'hidden'`, which Hearth does;
# it proves `score is int` from `score == 5`, which also returns 5.0, and Hearth does not.
LIST_CONDITIONS = [
    "resource.data.owner == request.auth.uid",
    "request.auth.uid == resource.data.owner",
    "resource.data.public == true",
    "resource.data.public",
    "resource.data.public == true || resource.data.owner == request.auth.uid",
    "resource.data.score < 10",
    "resource.data.score >= 0 && resource.data.score < 100",
    "resource.data.state in ['a', 'b']",
    "resource.data.state != 'hidden'",
    "request.auth.uid in resource.data.members",
    "request.query.limit <= 5",
    "request.query.limit <= 5 && resource.data.owner == request.auth.uid",
    "resource.data.m.x == 1",
    "resource.data.get('owner', '') == request.auth.uid",
    "resource == null || resource.data.owner == 'alice'",
    "resource.data.owner == 'alice' && resource.data.public == true",
    "resource.data.tags.hasAny(['x'])",
    "request.query.orderBy.score == 'ASC'",
    "resource.id != 'secret'",
    "request.query.offset == 0",
    "resource.data.score > 0",
]


def lines_of(path):
    return [line.rstrip("\n") for line in open(path) if line.strip() and not line.startswith("#")]


def expressions_of(path):
    """The expressions of the file: every line but comments and `function` declarations."""
    return [line for line in lines_of(path) if not line.startswith("function ")]


def functions_of(path):
    """The file's `function` declarations, declared beside the match blocks for all to call."""
    return [line for line in lines_of(path) if line.startswith("function ")]


def rules(expressions, functions=()):
    reads = [f"    match /e{i}/{{id}} {{ allow get: if {line.removeprefix('~ ').replace('$(coll)', f'e{i}')}; }}"
             for i, line in enumerate(expressions)]
    writes = [f"    match /r{i}/{{id}} {{\n      allow read;\n      allow create, update, delete: if {c.replace('$(coll)', f'r{i}')};\n    }}"
              for i, c in enumerate(WRITE_CONDITIONS)]
    lists = [f"    match /q{i}/{{id}} {{ allow list: if {c}; }}" for i, c in enumerate(LIST_CONDITIONS)]
    declared = [f"    {f}" for f in functions]
    return "rules_version = '2';\nservice cloud.firestore {\n  match /databases/{database}/documents {\n" + "\n".join(declared + reads + writes + lists) + "\n  }\n}\n"


def b64(d):
    return base64.urlsafe_b64encode(json.dumps(d).encode()).decode().rstrip("=")


def client_token():
    """An unsigned ID token for alice, which both take in emulator mode."""
    now = int(time.time())
    return b64({"alg": "none", "typ": "JWT"}) + "." + b64({
        "iss": f"https://securetoken.google.com/{P}", "aud": P, "sub": "alice", "user_id": "alice",
        "auth_time": now, "iat": now, "exp": now + 3600, "firebase": {"sign_in_provider": "password"}}) + "."


def word(status):
    return {200: "allows", 403: "denies"}.get(status, str(status))


def reads(H, E, expressions, auth):
    vector = {"mapValue": {"fields": {"__type__": {"stringValue": "__vector__"},
                                      "value": {"arrayValue": {"values": [{"doubleValue": 1.0}, {"doubleValue": 2.0}]}}}}}
    document = {"fields": {"n": {"integerValue": "3"}, "blob": {"bytesValue": "AQI="}, "t": {"timestampValue": "1970-01-01T00:00:01Z"}, "v": vector}}
    differ = known = 0
    for i, line in enumerate(expressions):
        answers = []
        for base in (H, E):
            status, body = call(base, "PATCH", f"/v1/{ROOT}/e{i}/doc", document)
            if status != 200:
                sys.exit(f"error: writing e{i}/doc to {base}: {status} {body}")
            answers.append(call(base, "GET", f"/v1/{ROOT}/e{i}/doc", auth=auth)[0])
        if answers[0] != answers[1]:
            if line.startswith("~ "):
                known += 1
                continue
            differ += 1
            print(f"READ DIFFERS: hearth {word(answers[0])}, emulator {word(answers[1])}: {line}")
    print(f"reads: {len(expressions)} expressions, {differ} answered differently, {known} known emulator differences")
    return differ


def writes(H, E, auth, seeds, per_condition):
    values = [{"integerValue": "1"}, {"integerValue": "2"}, {"integerValue": "-1"}, {"doubleValue": 1.5}, {"doubleValue": 1.0},
              {"stringValue": "x"}, {"stringValue": "forbidden"}, {"nullValue": None}, {"arrayValue": {"values": [{"integerValue": "1"}]}},
              {"mapValue": {"fields": {"x": {"integerValue": "1"}}}}, {"mapValue": {"fields": {"x": {"stringValue": "s"}}}}]
    fields = ["a", "b", "n", "m.x", "arr", "t", "z"]
    # As in firestore_diff.writes: the emulator refuses some impossible sequences of writes to one
    # document outright, where Hearth's commit fails on the precondition.
    known_message = "an entity in the same request"

    def normalized(x):
        if isinstance(x, dict):
            return {k: ("NOW" if k == "timestampValue" and v >= "2026" else normalized(v))
                    for k, v in x.items() if k not in ("updateTime", "createTime", "commitTime")}
        if isinstance(x, list):
            return [normalized(v) for v in x]
        return x

    total = allowed = differ = known = 0
    for seed in range(1, seeds + 1):
        R = random.Random(seed)
        for i in range(len(WRITE_CONDITIONS)):
            col = f"r{i}"

            def transform():
                fp = R.choice(["n", "t", "a", "arr"])
                k = R.random()
                if k < 0.3:
                    return {"fieldPath": fp, "setToServerValue": "REQUEST_TIME"}
                if k < 0.7:
                    return {"fieldPath": fp, "increment": R.choice([{"integerValue": "1"}, {"integerValue": "-1"}, {"doubleValue": 0.5}])}
                if k < 0.85:
                    return {"fieldPath": fp, "appendMissingElements": {"values": [R.choice(values[:4])]}}
                return {"fieldPath": fp, "maximum": {"integerValue": "3"}}

            for _ in range(per_condition):
                commit = []
                for _ in range(R.randint(1, 2)):
                    name = f"{ROOT}/{col}/d{R.randint(0, 2)}"
                    w = {"delete": name} if R.random() < 0.15 else random_update(R, name, fields, values, transform, transforms=1)
                    if R.random() < 0.15:
                        w["currentDocument"] = {"exists": R.random() < 0.5}
                    commit.append(w)
                body = {"writes": commit}
                total += 1
                hs, hb = call(H, "POST", f"/v1/{DB}/documents:commit", body, auth=auth)
                es, eb = call(E, "POST", f"/v1/{DB}/documents:commit", body, auth=auth)
                allowed += hs == 200
                if hs != es:
                    if known_message in str(eb):
                        known += 1
                        continue
                    differ += 1
                    print(f"WRITE STATUS r{i} [{WRITE_CONDITIONS[i][:80]}]", hs, es, json.dumps(body)[:500],
                          "\n   hearth:", str(hb)[:250], "\n   emulator:", str(eb)[:250])
                for d in range(3):
                    (gs, gb), (fs, fb) = call(H, "GET", f"/v1/{ROOT}/{col}/d{d}"), call(E, "GET", f"/v1/{ROOT}/{col}/d{d}")
                    if gs != fs or (gs == 200 and normalized(gb.get("fields", {})) != normalized(fb.get("fields", {}))):
                        differ += 1
                        print(f"WRITE STATE r{i}/d{d}", json.dumps(body)[:400], "\n   hearth:", gs, json.dumps(normalized(gb.get("fields", {})))[:300],
                              "\n   emulator:", fs, json.dumps(normalized(fb.get("fields", {})))[:300])
                        # Carry on from the emulator's state.
                        if fs == 200:
                            call(H, "PATCH", f"/v1/{ROOT}/{col}/d{d}", {"fields": fb.get("fields", {})})
                        else:
                            call(H, "DELETE", f"/v1/{ROOT}/{col}/d{d}")
    print(f"writes: {total} client commits over {len(WRITE_CONDITIONS)} conditions ({allowed} allowed), {differ} differences, {known} known emulator differences")
    return differ


def queries(H, E, auth, seeds, per_condition):
    values = {"owner": [{"stringValue": "alice"}, {"stringValue": "bob"}], "public": [{"booleanValue": True}, {"booleanValue": False}],
              "score": [{"integerValue": "5"}, {"integerValue": "50"}, {"doubleValue": 5.0}, {"integerValue": "-1"}, {"integerValue": "10"}],
              "state": [{"stringValue": "a"}, {"stringValue": "b"}, {"stringValue": "hidden"}], "members": [{"stringValue": "alice"}, {"stringValue": "bob"}],
              "m.x": [{"integerValue": "1"}, {"integerValue": "2"}], "tags": [{"stringValue": "x"}, {"stringValue": "y"}]}
    ops = ["EQUAL", "NOT_EQUAL", "LESS_THAN", "LESS_THAN_OR_EQUAL", "GREATER_THAN", "GREATER_THAN_OR_EQUAL", "IN", "NOT_IN",
           "ARRAY_CONTAINS", "ARRAY_CONTAINS_ANY"]
    # Firestore allows one array-contains(-any) per query, which Hearth checks first; the
    # emulator runs such queries.
    known_message = "at most one array-contains"
    total = allowed = differ = known = proved = 0
    for seed in range(1, seeds + 1):
        R = random.Random(seed)
        for i in range(len(LIST_CONDITIONS)):
            for _ in range(per_condition):
                q = {"from": [{"collectionId": f"q{i}"}]}
                filters = []
                for _ in range(R.choice([0, 1, 1, 2, 2, 3])):
                    fld = R.choice(list(values))
                    op = R.choice(ops)
                    if op in ("IN", "NOT_IN", "ARRAY_CONTAINS_ANY"):
                        v = {"arrayValue": {"values": R.sample(values[fld], R.randint(1, len(values[fld])))}}
                    else:
                        v = R.choice(values[fld])
                    filters.append({"fieldFilter": {"field": {"fieldPath": fld}, "op": op, "value": v}})
                if len(filters) == 1:
                    q["where"] = filters[0]
                elif filters:
                    q["where"] = {"compositeFilter": {"op": "OR" if R.random() < 0.2 else "AND", "filters": filters}}
                if R.random() < 0.4:
                    q["limit"] = R.choice([1, 5, 6, 100])
                if R.random() < 0.2:
                    q["orderBy"] = [{"field": {"fieldPath": R.choice(["score", "owner"])}, "direction": R.choice(["ASCENDING", "DESCENDING"])}]
                if R.random() < 0.1:
                    q["offset"] = R.choice([0, 1])
                total += 1
                hs, hb = call(H, "POST", f"/v1/{ROOT}:runQuery", {"structuredQuery": q}, auth=auth)
                es, eb = call(E, "POST", f"/v1/{ROOT}:runQuery", {"structuredQuery": q}, auth=auth)
                allowed += hs == 200
                if hs != es:
                    if known_message in str(hb):
                        known += 1
                        continue
                    if hs == 200 and es == 403:
                        # Hearth proved the condition from the filters and the emulator did not
                        # (it does not mix int and double bounds, nor take array-contains for
                        # "not a string"): listed to check that each proof is sound, not failed.
                        proved += 1
                        print(f"PROVED BY HEARTH ONLY q{i} [{LIST_CONDITIONS[i]}]", json.dumps(q)[:500])
                        continue
                    differ += 1
                    print(f"QUERY q{i} [{LIST_CONDITIONS[i]}]: hearth {word(hs)}, emulator {word(es)}", json.dumps(q)[:500])
    print(f"queries: {total} client queries over {len(LIST_CONDITIONS)} conditions ({allowed} allowed), {differ} differences, "
          f"{proved} proved by Hearth only, {known} known emulator differences")
    return differ


def main():
    if sys.argv[1] == "rules":
        open(sys.argv[3], "w").write(rules(expressions_of(sys.argv[2]), functions_of(sys.argv[2])))
        return
    hport, eport, expressions_path, rules_path, seeds, per_condition = sys.argv[2:8]
    H, E = f"http://127.0.0.1:{hport}", f"http://127.0.0.1:{eport}"
    status, body = call(E, "PUT", f"/emulator/v1/projects/{P}:securityRules", {"rules": {"files": [{"content": open(rules_path).read()}]}})
    if status != 200:
        sys.exit(f"error: the emulator refused the rules: {status} {body}")
    auth = "Bearer " + client_token()
    differ = reads(H, E, expressions_of(expressions_path), auth)
    differ += writes(H, E, auth, int(seeds), int(per_condition))
    differ += queries(H, E, auth, int(seeds), int(per_condition))
    sys.exit(1 if differ else 0)


if __name__ == "__main__":
    main()
