#!/usr/bin/env python3
"""Hostile FABRIC handles through a running agent's POST /v1/imports, against the real driver.

Usage: hostile_handles.py BASE TOKEN [N] [--exited HANDLE_B64] [--json OUT.json]

N (default 10,000) imports, in this mix: random 64-byte handles; 1..4-bit and 1..32-bit mutations of a real
exported handle (the byte positions of any mutation the driver ACCEPTS are reported: they are bytes the driver
does not check); the real handle replayed (must pass, and be released each time); the real handle with a size
larger than the export (must fail at map, and release the import); the released handle (after DELETE); and, with
--exited, the handle of an exporter that was killed. Exits non-zero on any 5xx, any transport error, an agent
that stops answering liveness, driver resources left (imexprobe_allocations_live) at the end, or GPU free memory
(cuMemGetInfo as GET /v1/node?refresh=true reports it, read with the export live before the first hostile import and
after the last) not back to where it was (HOSTILE_MEM_TOLERANCE_BYTES, 0).
"""
import base64, collections, json, os, random, sys, time, urllib.error, urllib.request

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import agent_http  # noqa: E402

args = [a for a in sys.argv[1:]]
out_json = None
exited = None
if "--json" in args:
    i = args.index("--json"); out_json = args[i + 1]; del args[i:i + 2]
if "--exited" in args:
    i = args.index("--exited"); exited = args[i + 1]; del args[i:i + 2]
base, token = args[0], args[1]
n = int(args[2]) if len(args) > 2 else 10000


call = agent_http.client(base, token)


def live():
    with urllib.request.urlopen(base + "/actuator/prometheus", timeout=30) as r:
        text = r.read().decode()
    return {l.split("{")[1].split("}")[0]: float(l.split()[-1]) for l in text.splitlines()
            if l.startswith("imexprobe_allocations_live{")}


def alive():
    try:
        with urllib.request.urlopen(base + "/actuator/health/liveness", timeout=10) as r:
            return r.status == 200 and b'"UP"' in r.read()
    except Exception:
        return False


def free_memory():
    """Free memory of each GPU as the agent's driver reports it (cuMemGetInfo, in GET /v1/node?refresh=true)."""
    with urllib.request.urlopen(base + "/v1/node?refresh=true", timeout=30) as r:
        return [g.get("memoryFreeBytes") for g in json.loads(r.read())["gpus"]]


def import_stage(reply):
    for st in (reply or {}).get("stages", []):
        if st["name"] == "import":
            return st
    return None


def first_failure(reply):
    for st in (reply or {}).get("stages", []):
        if st["status"] in ("failed", "timeout"):
            return st["name"] + ":" + st.get("cuResultName", st["status"])
    return "none"


print("live allocations before:", live())
status, exp = call("POST", "/v1/exports", {"handleType": "FABRIC"})
if status != 201:
    sys.exit(f"could not export a handle to mutate: {status} {exp}")
# The agent reads free memory only while it holds a context (it creates none to report it), so both readings are
# taken with the export live: the same allocation held, before the first hostile import and after the last.
free_before = free_memory()
print("GPU memory free before, the export live (cuMemGetInfo, the agent's view):", free_before)
good = base64.b64decode(exp["handle"])
size = exp["sizeBytes"]
rnd = random.Random(20261202)
statuses, results, by_kind = collections.Counter(), collections.Counter(), collections.Counter()
accepted_positions = collections.Counter()
by_kind_result = collections.Counter()
leaks, slow = [], []  # replies after which the agent held more than before, and replies slower than 1 s
held = live().get('kind="imported"', 0.0)
bad = []
start = time.time()
for i in range(n):
    kind = ("random", "mutated-few", "mutated-many", "random", "mutated-few", "mutated-many", "replayed",
            "oversized")[i % 8] if i % 97 else "replayed"
    req_size = size
    flipped = set()
    if kind == "random":
        h = os.urandom(64)
    elif kind.startswith("mutated"):
        b = bytearray(good)
        for _ in range(1 + rnd.randrange(4 if kind == "mutated-few" else 32)):
            pos = rnd.randrange(64)
            b[pos] ^= 1 << rnd.randrange(8)
            flipped.add(pos)
        h = bytes(b)
        if h == good:
            kind = "replayed"
    elif kind == "oversized":
        h = good
        req_size = size * 2
    else:
        h = good
    s, r = call("POST", "/v1/imports", {"handle": base64.b64encode(h).decode(), "handleType": "FABRIC",
                                         "sizeBytes": req_size})
    statuses[s] += 1
    by_kind[kind] += 1
    if s >= 500 or s == 0:
        bad.append(f"#{i} {kind}: HTTP {s} {r}")
        continue
    if s == 200:
        imp = import_stage(r)
        results[imp.get("cuResultName", imp["status"]) if imp else "?"] += 1
        by_kind_result[kind + " " + (imp.get("cuResultName", imp["status"]) if imp else "?")] += 1
        brief = {"i": i, "kind": kind, "flipped": sorted(flipped), "seconds": r.get("durationSeconds"),
                 "stages": [(st["name"], st["status"], st.get("cuResultName"), round(st.get("durationSeconds", 0), 4),
                             st.get("detail", "")[:160]) for st in r.get("stages", [])]}
        if (r.get("durationSeconds") or 0) > 1 and len(slow) < 50:
            slow.append(brief)
        now = live().get('kind="imported"', 0.0)
        if now > held and len(leaks) < 50:
            leaks.append(dict(brief, importedLive=now))
        held = now
        if kind.startswith("mutated") and r.get("verdict") == "pass":
            for pos in flipped:
                accepted_positions[pos] += 1
        if kind == "replayed" and r.get("verdict") != "pass":
            bad.append(f"#{i} the real handle did not import: {first_failure(r)}")
        if kind == "oversized" and r.get("verdict") != "fail":
            bad.append(f"#{i} an import larger than the export passed")
    if i % 1000 == 999:
        if not alive():
            bad.append(f"agent not live after {i + 1} imports")
            break
        print(f"  {i + 1} imports, {time.time() - start:.0f} s, live {live()}", flush=True)
seconds = time.time() - start
free_after = free_memory()

call("DELETE", "/v1/exports/" + exp["id"])
s, r = call("POST", "/v1/imports", {"handle": exp["handle"], "handleType": "FABRIC", "sizeBytes": size})
released = import_stage(r).get("cuResultName") if s == 200 and import_stage(r) else f"HTTP {s}"
exited_result = None
if exited:
    s, r = call("POST", "/v1/imports", {"handle": exited, "handleType": "FABRIC", "sizeBytes": size})
    exited_result = import_stage(r).get("cuResultName") if s == 200 and import_stage(r) else f"HTTP {s}"
time.sleep(1)
after = live()
leftover = sum(after.values())
tolerance = int(os.environ.get("HOSTILE_MEM_TOLERANCE_BYTES", "0"))
memory_back = all(a is not None and b is not None and abs(a - b) <= tolerance for a, b in zip(free_before, free_after))
summary = {"imports": sum(by_kind.values()), "seconds": round(seconds, 1), "byKind": dict(by_kind),
           "httpStatuses": {str(k): v for k, v in statuses.items()}, "importResults": dict(results),
           "mutationsAcceptedAtBytes": dict(sorted(accepted_positions.items())), "releasedHandle": released,
           "exitedExporterHandle": exited_result, "liveAllocationsAfter": after, "alive": alive(),
           "gpuMemoryFreeBefore": free_before, "gpuMemoryFreeAfter": free_after, "problems": bad,
           "importResultsByKind": dict(sorted(by_kind_result.items())), "leaks": leaks, "slowReplies": slow}
print(f"{summary['imports']} hostile imports in {seconds:.1f} s: HTTP {dict(statuses)}")
print("  by kind:", dict(by_kind))
print("  import stage results:", dict(results))
print("  by kind and result:", dict(sorted(by_kind_result.items())))
print(f"  replies after which the agent held one more import: {len(leaks)}; slower than 1 s: {len(slow)}")
for x in (leaks + slow)[:12]:
    print("   ", json.dumps(x)[:900])
print("  mutated handles the driver accepted, by flipped byte:", dict(sorted(accepted_positions.items())) or "none")
print("  released handle:", released, "| exited exporter's handle:", exited_result)
print("  live allocations after:", after)
print("  GPU memory free after, the export live:", free_after, "— back to baseline" if memory_back else f"— DIFFERS (tolerance {tolerance})")
for p in bad[:20]:
    print("  PROBLEM", p)
if out_json:
    with open(out_json, "w") as f:
        json.dump(summary, f, indent=1)
ok = (not bad and leftover == 0 and summary["alive"] and memory_back and released != "CUDA_SUCCESS"
      and exited_result != "CUDA_SUCCESS")
print("verdict:", "PASS" if ok else "FAIL")
sys.exit(0 if ok else 1)
