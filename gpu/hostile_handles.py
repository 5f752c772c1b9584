#!/usr/bin/env python3
"""10,000 hostile FABRIC handles through a running agent's POST /v1/imports, against the real driver.

Random 64-byte handles, single- and multi-bit mutations of a real exported handle, the released handle, and the
handle of an exporter that exited. Prints the CUresult histogram at import, any non-2xx status, and the agent's
live allocations before and after. Usage: hostile_handles.py http://localhost:18081 TOKEN [N]
"""
import base64, collections, json, os, random, sys, urllib.request

base, token = sys.argv[1], sys.argv[2]
n = int(sys.argv[3]) if len(sys.argv) > 3 else 10000
hdr = {"Authorization": "Bearer " + token, "Content-Type": "application/json"}

def call(method, path, body=None):
    req = urllib.request.Request(base + path, method=method, headers=hdr,
                                 data=None if body is None else json.dumps(body).encode())
    try:
        with urllib.request.urlopen(req, timeout=30) as r:
            return r.status, json.loads(r.read() or b"null")
    except urllib.error.HTTPError as e:
        return e.code, json.loads(e.read() or b"null")

def live():
    with urllib.request.urlopen(base + "/actuator/prometheus", timeout=10) as r:
        text = r.read().decode()
    return {l.split("{")[1].split("}")[0]: float(l.split()[-1]) for l in text.splitlines()
            if l.startswith("imexprobe_allocations_live{")}

def free_memory():
    with urllib.request.urlopen(base + "/v1/node?refresh=true", timeout=30) as r:
        return [g.get("memoryFreeBytes") for g in json.loads(r.read())["gpus"]]

print("live allocations before:", live())
free_before = free_memory()
print("GPU memory free before (cuMemGetInfo):", free_before)
status, exp = call("POST", "/v1/exports", {"handleType": "FABRIC"})
good = base64.b64decode(exp["handle"])
size = exp["sizeBytes"]
results, statuses = collections.Counter(), collections.Counter()
rnd = random.Random(20261202)
for i in range(n):
    if i % 3 == 0:
        h = os.urandom(64)
    else:
        b = bytearray(good)
        for _ in range(1 + rnd.randrange(4 if i % 3 == 1 else 32)):
            b[rnd.randrange(64)] ^= 1 << rnd.randrange(8)
        h = bytes(b)
    if h == good:
        continue
    s, r = call("POST", "/v1/imports", {"handle": base64.b64encode(h).decode(), "handleType": "FABRIC", "sizeBytes": size})
    statuses[s] += 1
    if s == 200:
        imp = [st for st in r["stages"] if st["name"] == "import"][0]
        results[imp.get("cuResultName", imp["status"])] += 1
call("DELETE", "/v1/exports/" + exp["id"])
s, r = call("POST", "/v1/imports", {"handle": exp["handle"], "handleType": "FABRIC", "sizeBytes": size})
released = [st for st in r["stages"] if st["name"] == "import"][0].get("cuResultName")
print(f"{n} hostile handles: HTTP statuses {dict(statuses)}; import results {dict(results)}")
print("released handle:", released)
print("live allocations after:", live())
free_after = free_memory()
print("GPU memory free after (cuMemGetInfo):", free_after, "— back to baseline" if free_after == free_before else "— DIFFERS")
