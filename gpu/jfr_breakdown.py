#!/usr/bin/env python3
"""Where an agent's request threads spend their CPU, from a JFR recording made by gpu/hotpath.sh (JFR=1).
Execution samples per thread group, each attributed to the innermost frame of ours or of a library (so "tomcat" is
Tomcat's own code, not what it calls), and inclusive counts of our methods (docs/performance.md uses both).
  python3 gpu/jfr_breakdown.py agent-new-a.jfr        # JFR_TOOL=<jdk>/bin/jfr if the JDK is elsewhere
"""
import json, os, sys, collections, subprocess
f = sys.argv[1]
data = json.loads(subprocess.run([os.environ.get("JFR_TOOL", "/usr/lib/jvm/temurin-25-jdk-amd64/bin/jfr"), "print", "--json", "--stack-depth", "200", "--events", "jdk.ExecutionSample", f], capture_output=True, text=True).stdout)
evs = data["recording"]["events"]
def cat(m):
    t = m["type"]["name"].replace("/", ".")
    for p, c in (("dev.imexprobe.web", "web"), ("dev.imexprobe.metrics", "metrics(ours)"), ("dev.imexprobe.peer.PeerHttp", "PeerHttp"), ("dev.imexprobe", "ours:" ), ("org.apache", "tomcat"), ("org.springframework", "spring"), ("tools.jackson", "jackson"), ("com.fasterxml", "jackson"), ("io.micrometer", "micrometer"), ("io.prometheus", "prometheus"), ("jakarta", "jakarta"), ("org.hibernate", "hibernate-validator"), ("javax.crypto", "hmac"), ("sun.security", "hmac"), ("com.sun.crypto", "hmac"), ("sun.nio", "jdk-nio"), ("java.", "jdk"), ("jdk.", "jdk"), ("sun.", "jdk")):
        if t.startswith(p): return c + (t.split(".")[2] if c == "ours:" else "")
    return "other:" + t
threads = collections.Counter(); top = collections.Counter(); incl = collections.Counter(); ours = collections.Counter()
for e in evs:
    v = e["values"]; th = v["sampledThread"]["javaName"] or v["sampledThread"]["osName"]
    thg = th.rsplit("-", 1)[0] if th[-1].isdigit() else th
    threads[thg] += 1
    frames = v["stackTrace"]["frames"] if v["stackTrace"] else []
    # innermost frame of ours or a library (skip jdk frames) as in performance.md
    c = "jdk"
    for fr in frames:
        k = cat(fr["method"])
        if k != "jdk": c = k; break
    top[(thg, c)] += 1
    seen = set()
    for fr in frames:
        m = fr["method"]; name = m["type"]["name"].replace("/", ".").split(".")[-1].split("$$")[0] + "." + m["name"]
        if m["type"]["name"].startswith("dev/imexprobe") and name not in seen:
            seen.add(name); incl[(thg, name)] += 1
print("samples", len(evs)); print(threads.most_common(10))
for (t, c), n in sorted(top.items(), key=lambda x: -x[1])[:40]: print(f"  {t:30} {c:40} {n}")
print("inclusive (ours):")
for (t, c), n in sorted(incl.items(), key=lambda x: -x[1])[:45]: print(f"  {t:30} {c:60} {n}")
