"""HTTP to a running agent for the GPU scripts: one call() that answers (status, parsed JSON) for every status."""
import json, urllib.error, urllib.request


def client(base, token):
    hdr = {"Authorization": "Bearer " + token, "Content-Type": "application/json"}

    def call(method, path, body=None, timeout=60):
        req = urllib.request.Request(base + path, method=method, headers=hdr,
                                     data=None if body is None else json.dumps(body).encode())
        try:
            with urllib.request.urlopen(req, timeout=timeout) as r:
                return r.status, json.loads(r.read() or b"null")
        except urllib.error.HTTPError as e:
            raw = e.read()
            try:
                return e.code, json.loads(raw or b"null")
            except ValueError:
                return e.code, {"raw": raw[:200].decode(errors="replace")}

    return call
