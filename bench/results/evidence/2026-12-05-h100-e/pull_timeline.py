#!/usr/bin/env python3
"""Session 2026-12-05 e: where a pull's wall time goes in the probing agent (the importer), from its timeline events
(gpu/hotpath.sh DIRECTION=pull TIMELINE=1): python3 pull_timeline.py OUT new|old. Segments are p50s over the
measured probes; 6a > 0 means the import list was still running (its release) when the exporter was first called."""
import json, subprocess, sys, statistics
d, tag = sys.argv[1], sys.argv[2]
raw = subprocess.run(["/usr/lib/jvm/temurin-25-jdk-amd64/bin/jfr","print","--json","--events","imexprobe.Request,imexprobe.DriverHop,imexprobe.PeerCall",f"{d}/agent-{tag}-a.jfr"],capture_output=True,text=True,check=True).stdout
ev=[(e["type"],e["values"]) for e in json.loads(raw)["recording"]["events"]]
reqs=sorted([v for t,v in ev if t=="imexprobe.Request"], key=lambda v:v["enteredNanos"])
hops=[v for t,v in ev if t=="imexprobe.DriverHop"]; calls=[v for t,v in ev if t=="imexprobe.PeerCall"]
segs={}
for r in reqs[-2000:]:
    lo,hi=r["enteredNanos"],r["answeredNanos"]
    h=[x for x in hops if lo<=x["submittedNanos"]<=hi]; c=sorted([x for x in calls if lo<=x["beganNanos"]<=hi],key=lambda x:x["beganNanos"])
    if len(h)!=1: continue
    h=h[0]; exp=[x for x in c if x["path"]=="/v1/exports"]; rest=[x for x in c if x["path"]!="/v1/exports" and x["path"]!="/v1/node"]
    if len(exp)!=1 or not rest: continue
    exp=exp[0]; wb="true" if len(rest)==2 else "false"
    s={}
    s["1 entered->export call"]=exp["beganNanos"]-lo
    s["2 export call"]=exp["parsedNanos"]-exp["beganNanos"]
    s["3 parsed->hop submitted"]=h["submittedNanos"]-exp["parsedNanos"]
    s["4 hop start"]=h["startedNanos"]-h["submittedNanos"]
    s["5 hop started->remote began"]=rest[0]["beganNanos"]-h["startedNanos"]
    s["6 remote calls"]=rest[-1]["parsedNanos"]-rest[0]["beganNanos"]
    s["6a list finished - remote began (overlap)"]=h["finishedNanos"]-rest[0]["beganNanos"]
    s["6b list run (started->finished)"]=h["finishedNanos"]-h["startedNanos"]
    s["7 last parsed->resumed"]=h["resumedNanos"]-rest[-1]["parsedNanos"]
    s["8 max(resumed,parsed)->answered"]=hi-max(h["resumedNanos"],rest[-1]["parsedNanos"])
    s["total"]=hi-lo
    for k,v in s.items(): segs.setdefault(wb,{}).setdefault(k,[]).append(v/1e6)
for wb in sorted(segs):
    print(f"{tag} wb={wb} n={len(segs[wb]['total'])}")
    for k in sorted(segs[wb]): print(f"   {k:45s} p50 {statistics.median(segs[wb][k]):.3f} ms")
