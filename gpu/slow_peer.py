# A peer that answers correctly but slowly: every request goes on to the real agent behind it, and each POST (the
# import a mesh round asks for) is held SLOW seconds first, inside the caller's peer timeout. For checks that such a
# peer does not hold the caller's rounds (gpu/slow-peer.sh).
#   python3 gpu/slow_peer.py LISTEN_PORT http://REAL_AGENT_HOST:PORT SLOW_SECONDS
import http.server, sys, time, urllib.error, urllib.request

LISTEN, REAL, SLOW = int(sys.argv[1]), sys.argv[2], float(sys.argv[3])
PASSED = ("Authorization", "Content-Type", "Accept")


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def forward(self):
        body = self.rfile.read(int(self.headers.get("Content-Length", "0"))) if self.command != "GET" else None
        if self.command == "POST":
            time.sleep(SLOW)
        req = urllib.request.Request(REAL + self.path, data=body, method=self.command,
                                     headers={h: self.headers[h] for h in PASSED if self.headers.get(h)})
        try:
            with urllib.request.urlopen(req, timeout=30) as r:
                code, ctype, out = r.status, r.headers.get("Content-Type", "application/json"), r.read()
        except urllib.error.HTTPError as e:
            code, ctype, out = e.code, e.headers.get("Content-Type", "application/json"), e.read()
        self.send_response(code)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(out)))
        self.end_headers()
        self.wfile.write(out)

    do_GET = do_POST = do_DELETE = forward

    def log_message(self, *args):
        pass


http.server.ThreadingHTTPServer(("127.0.0.1", LISTEN), Handler).serve_forever()
