# Fake peers for the domain view: every 127.0.0.x:PORT answers GET /v1/mesh like a 4-GPU agent of one of 8 NVL72
# domains (4 x 68 pairs in its domain, ok; 4 x 504 across domains, not probed, unless across=false).
import json, sys, threading
from http.server import ThreadingHTTPServer, BaseHTTPRequestHandler
port = int(sys.argv[1])
def pair(sn, sg, tn, tg, across):
    p = {"sourceNode": sn, "sourceGpu": sg, "targetNode": tn, "targetGpu": tg, "domain": "fabric:c0ffee-0000/1"}
    if across:
        p.update({"targetDomain": "fabric:c0ffee-0000/2", "state": "not_probed", "finding": {"code": "DIFFERENT_IMEX_DOMAIN",
                  "severity": "info", "blame": "target", "cause": "The importer is in another IMEX domain.", "remedy": "none needed",
                  "evidence": {"sourceDomain": "fabric:c0ffee-0000/1", "targetDomain": "fabric:c0ffee-0000/2"}},
                  "lastProbe": "2026-12-08T03:00:00Z", "consecutiveFailures": 0})
    else:
        p.update({"state": "ok", "lastSuccess": "2026-12-08T03:00:00Z", "lastProbe": "2026-12-08T03:00:00Z", "ageSeconds": 3.0,
                  "durationSeconds": 0.004, "consecutiveFailures": 0, "recentProbes": 64, "recentFailures": 0})
    return p
def gpu(node, i):
    # the page labels a GPU by its UUID's first 8 hex digits: they differ per GPU, as real UUIDs do
    h = (hash(node) * 31 + i) & 0xffffffff
    return "GPU-%08x-%04x-%04x-%04x-%012x" % (h, i, i, i, i)
cache = {}
def body(node, across):
    k = (node, across)
    if k not in cache:
        pairs = []
        for i in range(4):
            for n in range(17):
                for j in range(4):
                    pairs.append(pair(node, gpu(node, i), "peer-%d" % n, gpu("peer-%d" % n, j), False))
            if across:
                for n in range(126):
                    for j in range(4):
                        pairs.append(pair(node, gpu(node, i), "far-%d" % n, gpu("far-%d" % n, j), True))
        cache[k] = json.dumps({"agent": {"id": "agent-" + node, "node": node, "version": "0.1.0"}, "scope": "agent",
                               "pairs": pairs}).encode()
    return cache[k]
class H(BaseHTTPRequestHandler):
    def do_GET(self):
        if not self.path.startswith("/v1/mesh"):
            self.send_response(404); self.end_headers(); return
        node = "node-" + self.connection.getsockname()[0]
        b = body(node, "across=false" not in self.path)
        self.send_response(200); self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(b))); self.end_headers(); self.wfile.write(b)
    def log_message(self, *a): pass
ThreadingHTTPServer.daemon_threads = True
ThreadingHTTPServer(("0.0.0.0", port), H).serve_forever()
