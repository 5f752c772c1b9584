#!/usr/bin/env python3
"""Where the wall time of a push probe goes, across the caller and both agents (docs/performance.md, "Where the wall
time goes"). Reads what gpu/hotpath.sh leaves with TIMELINE=1 (not TRACE: Spring Boot reads that variable as its trace switch): the caller's send and receive times (caller-trace.json)
and each agent's timeline events (agent-<pair>-a.jfr: the exporter, -b: the importer; dev.imexprobe.trace.Timeline).
Every point is CLOCK_MONOTONIC of one host, so the three processes line up. Prints, per write-back setting and
caller, the p50 of each segment of the exchange in order, and their sum against the caller's p50.
  python3 gpu/timeline.py OUT [PAIR]        # JFR_TOOL=<jdk>/bin/jfr if the JDK is elsewhere
"""
import bisect, json, os, subprocess, sys

out = sys.argv[1]
pair = sys.argv[2] if len(sys.argv) > 2 else "new"
tool = os.environ.get("JFR_TOOL", "/usr/lib/jvm/temurin-25-jdk-amd64/bin/jfr")


def events(path):
    raw = subprocess.run([tool, "print", "--json", "--events", "imexprobe.Request,imexprobe.DriverHop,imexprobe.PeerCall",
                          path], capture_output=True, text=True, check=True).stdout
    out = {"imexprobe.Request": [], "imexprobe.DriverHop": [], "imexprobe.PeerCall": []}
    for e in json.loads(raw)["recording"]["events"]:
        out[e["type"]].append(e["values"])
    return out


def starting(evs, key):
    evs = sorted(evs, key=lambda v: v[key])
    return evs, [v[key] for v in evs]


def within(evs, keys, lo, hi):
    """The events whose key lies in [lo, hi], in order."""
    i = bisect.bisect_left(keys, lo)
    found = []
    while i < len(keys) and keys[i] <= hi:
        found.append(evs[i])
        i += 1
    return found


exp, imp = events(os.path.join(out, f"agent-{pair}-a.jfr")), events(os.path.join(out, f"agent-{pair}-b.jfr"))
ra, ra_k = starting([v for v in exp["imexprobe.Request"] if "/probe" in v["route"]], "enteredNanos")
ha, ha_k = starting(exp["imexprobe.DriverHop"], "submittedNanos")
pa, pa_k = starting([v for v in exp["imexprobe.PeerCall"] if v["path"] == "/v1/imports"], "beganNanos")
rb, rb_k = starting([v for v in imp["imexprobe.Request"] if "/v1/imports" in v["route"]], "enteredNanos")
hb, hb_k = starting(imp["imexprobe.DriverHop"], "submittedNanos")
calls = [c for c in json.load(open(os.path.join(out, "caller-trace.json"))) if c["pair"] == pair and c["verdict"] == "pass"]

SEGMENTS = [
    ("caller sent -> exporter's Tomcat worker reads it", "network, Tomcat's poller and its hand-off to a worker"),
    ("-> exporter's first filter", "Tomcat: request line, headers, mapping, valves"),
    ("-> create handed to the driver pool", "filters, query, controller, prober"),
    ("create: pool hand-off in", ""), ("create: driver work (create, map, fill, export)", ""),
    ("create: hand-off back", ""),
    ("-> POST /v1/imports begun", "the request record"),
    ("-> sending", "JSON of the request, signature"),
    ("-> importer's Tomcat worker reads it", "write, network, the importer's poller and hand-off"),
    ("-> importer's first filter", "Tomcat"),
    ("-> import stages handed to the pool", "auth (HMAC), body read, JSON, validation"),
    ("import: pool hand-off in", ""), ("import: driver work (import ... release)", ""), ("import: hand-off back", ""),
    ("-> importer's answer written", "the reply's JSON, into Tomcat's buffer"),
    ("-> exporter has the answer", "Tomcat's flush, network, the exporter's thread woken, read"),
    ("-> answer parsed", "JSON of the reply"),
    ("-> check+release done, as far as it was not yet", "stitching, and what of the check and release is left"),
    ("-> exporter's report written", "diagnosis, the report's JSON"),
    ("-> caller has the report", "Tomcat's flush, network, the caller woken, read"),
]

SIDE = ["check+release handed to the pool, from the importer's hop's end (negative: before it)",
        "its pool hand-off in", "its driver work"]

rows = {}
for c in calls:
    s, e = c["sentNanos"], c["receivedNanos"]
    a = within(ra, ra_k, s, e)
    if len(a) != 1:
        continue
    a = a[0]
    hops = within(ha, ha_k, a["enteredNanos"], a["answeredNanos"])
    peer = within(pa, pa_k, a["enteredNanos"], a["answeredNanos"])
    if len(peer) != 1:
        continue
    p = peer[0]
    b = within(rb, rb_k, p["sendingNanos"], p["answeredNanos"])
    if len(b) != 1:
        continue
    b = b[0]
    bh = within(hb, hb_k, b["enteredNanos"], b["answeredNanos"])
    before = [h for h in hops if h["resumedNanos"] <= p["beganNanos"]]
    # The check and release: handed to the pool once the answer is parsed (builds before 2026-12-05 b), or when the
    # answer begins, the importer having sent its head before its release (overlapping the importer's hop).
    after = [h for h in hops if h["submittedNanos"] >= p["sendingNanos"]]
    if len(before) != 1 or len(bh) != 1 or len(after) != 1:
        continue
    h1, h2, hi = before[0], after[0], bh[0]
    points = [s, a["parsedNanos"], a["enteredNanos"], h1["submittedNanos"], h1["startedNanos"], h1["finishedNanos"],
              h1["resumedNanos"], p["beganNanos"], p["sendingNanos"], b["parsedNanos"], b["enteredNanos"],
              hi["submittedNanos"], hi["startedNanos"], hi["finishedNanos"], hi["resumedNanos"], b["answeredNanos"],
              p["answeredNanos"], p["parsedNanos"], max(p["parsedNanos"], h2["resumedNanos"]), a["answeredNanos"], e]
    if any(y < x for x, y in zip(points, points[1:])):
        continue  # a point out of order: an event of another probe was matched; leave it out
    key = (c["writeback"], c["caller"])
    # Beside the path: the check and release's own hop, and how far it began before the importer's hop ended.
    side = [(h2["submittedNanos"] - hi["finishedNanos"]) / 1e6, (h2["startedNanos"] - h2["submittedNanos"]) / 1e6,
            (h2["finishedNanos"] - h2["startedNanos"]) / 1e6]
    rows.setdefault(key, []).append([(y - x) / 1e6 for x, y in zip(points, points[1:])] + side + [(e - s) / 1e6])

p50 = lambda xs: sorted(xs)[len(xs) // 2]
result = {}
for (wb, caller), r in sorted(rows.items()):
    n = len(r)
    total = p50([x[-1] for x in r])
    cols = [p50([x[i] for x in r]) for i in range(len(SEGMENTS))]
    print(f"\n== writeback={wb}, {caller} caller: {n} probes matched; caller's p50 {total:.3f} ms, "
          f"sum of the segments' p50s {sum(cols):.3f} ms")
    for (name, what), v in zip(SEGMENTS, cols):
        print(f"  {v:7.3f}  {name}{'  (' + what + ')' if what else ''}")
    side = {name: p50([x[len(SEGMENTS) + i] for x in r]) for i, name in enumerate(SIDE)}
    print("  beside the path: " + "; ".join(f"{name} {v:.3f}" for name, v in side.items()))
    result[f"writeback={wb}:{caller}"] = {"probes": n, "callerP50Ms": round(total, 4),
                                           "segmentsP50Ms": {name: round(v, 4) for (name, _), v in zip(SEGMENTS, cols)},
                                           "checkAndReleaseP50Ms": {k: round(v, 4) for k, v in side.items()}}
json.dump(result, open(os.path.join(out, "timeline.json"), "w"), indent=1)
