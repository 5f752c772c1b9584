# A peer that answers GET as the real agent behind it does (so the exporter learns who it is and exports) and
# takes every POST (the import) without ever answering: the exporter's deadline must end the wait, and its release
# must follow. For checks of that on a GPU (bench/results/evidence/2026-12-06-o/call2.sh).
#   python3 gpu/mute_peer.py LISTEN_PORT http://REAL_AGENT_HOST:PORT
import http.server, sys, time, urllib.request

LISTEN, REAL = int(sys.argv[1]), sys.argv[2]


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def do_GET(self):
        with urllib.request.urlopen(REAL + self.path, timeout=10) as r:
            body, ctype, code = r.read(), r.headers.get("Content-Type", "application/json"), r.status
        self.send_response(code)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_POST(self):
        self.rfile.read(int(self.headers.get("Content-Length", "0")))
        time.sleep(3600)

    def log_message(self, *args):
        pass


http.server.ThreadingHTTPServer(("127.0.0.1", LISTEN), Handler).serve_forever()
