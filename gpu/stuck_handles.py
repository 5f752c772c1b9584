#!/usr/bin/env python3
"""Hang every driver thread of a running agent with the altered handles whose cuMemMap never returns
(gpu/map_hang.py), and watch what the agent says: each import's map stage, imexprobe_driver_calls_stuck, the
liveness document, and a further import refused at once.

Usage: stuck_handles.py BASE TOKEN THREADS   (the agent runs with IMEXPROBE_DRIVER_THREADS=THREADS)
"""
import importlib.util, json, os, sys, time, urllib.request, base64

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import agent_http  # noqa: E402

base, token, threads = sys.argv[1], sys.argv[2], int(sys.argv[3])
spec = importlib.util.spec_from_file_location("map_hang", os.path.join(os.path.dirname(__file__), "map_hang.py"))
map_hang = importlib.util.module_from_spec(spec)
spec.loader.exec_module(map_hang)


call = agent_http.client(base, token)


def stuck():
    with urllib.request.urlopen(base + "/actuator/prometheus", timeout=30) as r:
        for line in r.read().decode().splitlines():
            if line.startswith("imexprobe_driver_calls_stuck "):
                return float(line.split()[1])


def stage(reply, name):
    return next((s for s in reply.get("stages", []) if s["name"] == name), {})


status, exp = call("POST", "/v1/exports", {"handleType": "FABRIC"})
assert status == 201, (status, exp)
good = base64.b64decode(exp["handle"])
masks = map_hang.masks()
hung = [masks[i] for i in map_hang.HUNG]
ok = True
for n in range(1, threads + 1):
    altered = bytes(a ^ b for a, b in zip(good, hung[(n - 1) % len(hung)]))
    t = time.time()
    s, r = call("POST", "/v1/imports", {"handle": base64.b64encode(altered).decode(), "handleType": "FABRIC",
                                         "sizeBytes": exp["sizeBytes"]})
    m = stage(r, "map")
    live_status, live = call("GET", "/actuator/health/liveness")
    d = live.get("components", {}).get("driver", {})
    print(f"import {n}: HTTP {s} in {time.time() - t:.2f} s, import {stage(r, 'import').get('cuResultName')}, "
          f"map {m.get('status')} ({m.get('detail', '')[:60]}), stuck metric {stuck()}, liveness {live_status} "
          f"{d.get('status')} {d.get('details')}", flush=True)
    ok &= m.get("status") == "timeout" and live_status == (503 if n == threads else 200)
t = time.time()
s, r = call("POST", "/v1/imports", {"handle": exp["handle"], "handleType": "FABRIC", "sizeBytes": exp["sizeBytes"]})
imp = stage(r, "import")
print(f"the good handle now: HTTP {s} in {time.time() - t:.2f} s, import {imp.get('status')}: {imp.get('detail')}")
ok &= imp.get("detail", "").startswith("driver busy")
rs, ready = call("GET", "/actuator/health/readiness")
print(f"readiness {rs}; liveness {call('GET', '/actuator/health/liveness')[0]}")
call("DELETE", "/v1/exports/" + exp["id"])  # with every thread held, its release goes to the clean-up thread
print("verdict:", "PASS" if ok else "FAIL")
sys.exit(0 if ok else 1)
