#!/usr/bin/env python3
"""Prints a `ladder --json` report in a few lines a rung: each cell's outcome and stages, what each side saw."""
import json
import sys

d = json.load(open(sys.argv[1]))
print(f"fake={d['fake']} exit={d['exitCode']} mountNamespaces={d.get('mountNamespaces') or 'available'} "
      f"in {d['durationSeconds']:.1f} s")
for r in d['rungs']:
    print(f"rung {r['rung']}: {r['title']}\n  exporter {r.get('exporter')}\n  importer {r.get('importer')}")
    for c in r['results']:
        code = (c.get('finding') or {}).get('code', '')
        print(f"  {c['handleType']:8} {c['status']:7} {c['outcome'][:90]} {c.get('reason') or ''} {code}")
        for s in c.get('stages') or []:
            print(f"      {s['name']:10} {s['status']:8} {s.get('cuResultName', ''):28} {s['durationSeconds'] * 1e3:9.3f} ms")
    for side, v in zip(('exporter', 'importer'), r.get('seen') or []):
        print(f"    {side} sees GPUs {v.get('gpus')}, channels {v.get('channels')}, nodes {v.get('deviceNodes')}, "
              f"/proc {v.get('procGpus')}")
print(f"verdict {d['verdict']['code']}: {d['verdict']['cause']}")
print("verdict evidence", d['verdict'].get('evidence'))
