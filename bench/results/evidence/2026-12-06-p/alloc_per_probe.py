import json, collections, sys
d = json.load(open(sys.argv[1]))["recording"]["events"]
n_probes = int(sys.argv[2])
d = [e for e in d if (e["values"].get("eventThread") or {}).get("javaName","").startswith(("http-nio","probe-recorder","driver-"))]
tot = sum(e["values"]["weight"] for e in d)
by_ours = collections.Counter()
for e in d:
    v = e["values"]; fr = v["stackTrace"]["frames"] if v.get("stackTrace") else []
    names = [f["method"]["type"]["name"] + "." + f["method"]["name"] for f in fr]
    by_ours[next((x for x in names if x.startswith("dev/imexprobe")), "-")] += v["weight"]
print(f"{sys.argv[1]}: request-path threads {tot/2**20:.0f} MiB, {tot/n_probes/1024:.1f} KiB per probe")
for k, w in by_ours.most_common(8): print(f"  {w/n_probes/1024:5.1f} KiB/probe  {k}")
