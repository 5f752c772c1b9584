#!/usr/bin/env python3
"""Where an agent's request threads spend their CPU, from a JFR recording made by gpu/hotpath.sh (JFR=1).
Execution samples per thread group, each attributed to the innermost frame of ours or of a library (so "tomcat" is
Tomcat's own code, not what it calls), and inclusive counts of our methods (docs/performance.md uses both).
  python3 gpu/jfr_breakdown.py agent-new-a.jfr        # JFR_TOOL=<jdk>/bin/jfr if the JDK is elsewhere
STEADY=0.6 keeps the last 60 % of the request threads' samples (past the warm-up, whose interpreted code would
weigh the deepest libraries most); --groups prints the request threads' samples in the groups docs/performance.md
uses (Tomcat and Spring's filters, Jackson, Bean Validation, the signature, metrics, spinning, our code).
"""
import json, os, sys, collections, subprocess
groups = "--groups" in sys.argv
f = [a for a in sys.argv[1:] if a != "--groups"][0]
data = json.loads(subprocess.run([os.environ.get("JFR_TOOL", "/usr/lib/jvm/temurin-25-jdk-amd64/bin/jfr"), "print", "--json", "--stack-depth", "200", "--events", "jdk.ExecutionSample", f], capture_output=True, text=True).stdout)
evs = data["recording"]["events"]
steady = float(os.environ.get("STEADY", "1"))
if steady < 1:
    req = sorted(e["values"]["startTime"] for e in evs if "exec" in (e["values"]["sampledThread"]["javaName"] or ""))
    cut = req[int(len(req) * (1 - steady))] if req else ""
    evs = [e for e in evs if e["values"]["startTime"] >= cut]
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

if groups:
    g = collections.Counter(); n = 0
    for e in evs:
        v = e["values"]
        if "exec" not in (v["sampledThread"]["javaName"] or ""):
            continue
        n += 1
        fr = [x["method"]["type"]["name"].replace("/", ".") + "." + x["method"]["name"] for x in (v["stackTrace"]["frames"] if v["stackTrace"] else [])]
        lib = next((cat({"type": {"name": x.rsplit(".", 1)[0]}}) for x in fr if cat({"type": {"name": x.rsplit(".", 1)[0]}}) != "jdk"), "jdk")
        our = next((x for x in fr if x.startswith("dev.imexprobe")), "-")
        if "awaitNear" in our: k = "spinning for the driver pool (StageEngine.awaitNear)"
        elif lib in ("micrometer", "metrics(ours)") or "RouteTimer.timer" in our: k = "metrics (observation / RouteTimer)"
        elif lib == "jackson": k = "Jackson"
        elif lib == "hibernate-validator": k = "Bean Validation"
        elif lib == "hmac" or "AgentSignature" in our: k = "signature (HMAC)"
        elif lib in ("tomcat", "spring", "jakarta", "jdk", "jdk-nio") and (our == "-" or any(t in our for t in ("RouteTimer", "DriverWake", "RecordedFirst", "BodilessErrors", "DirectRoutes.write", "DirectRoutes.probe", "AgentAuthFilter.readBounded"))): k = "Tomcat and Spring's filters"
        else: k = "our code (and the JDK under it)"
        g[k] += 1
    print(f"request threads: {n} samples")
    for k, m in g.most_common(): print(f"  {100 * m / n:5.1f} %  {m:5}  {k}")
