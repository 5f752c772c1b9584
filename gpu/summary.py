#!/usr/bin/env python3
"""Prints what a /probe answer says in a few lines, or (--times) per-stage p50/p99 over many answers."""
import json, sys

def summarize(doc):
    print(f"verdict {doc.get('verdict')} target {doc.get('target')} ({doc.get('targetNode')}) in {doc.get('durationSeconds', 0)*1000:.1f} ms")
    for r in doc.get('results', []):
        f = r.get('finding') or {}
        print(f"  {r['direction']:5} {r.get('sourceNode')} -> {r.get('targetNode')}: {r['verdict']} {f.get('code','')}")
        for s in r['stages']:
            print(f"    {s['name']:10} {s['status']:8} {s.get('cuResultName',''):28} {s['durationSeconds']*1e3:9.3f} ms  {s['detail'][:90]}")

def times(path):
    per = {}
    n = 0
    for line in open(path):
        line = line.strip()
        if not line:
            continue
        doc = json.loads(line); n += 1
        per.setdefault('total', []).append(doc['durationSeconds'])
        for r in doc['results']:
            for s in r['stages']:
                per.setdefault(s['name'], []).append(s['durationSeconds'])
    print(f"{n} probes")
    for k, v in per.items():
        v.sort()
        print(f"  {k:10} p50 {v[len(v)//2]*1e3:8.3f} ms  p99 {v[int((len(v)-1)*0.99)]*1e3:8.3f} ms")

if sys.argv[1] == '--times':
    times(sys.argv[2])
else:
    summarize(json.load(open(sys.argv[1])))
