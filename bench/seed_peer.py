#!/usr/bin/env python3
"""The seed-style peer: the same FABRIC exchange imexprobe's /probe makes, written the way a user would write it
in an afternoon (cuda-bindings and the standard library's HTTP), so the bench can print the two side by side.

One exchange, timed from the exporter's create to its release:
  exporter: cuMemCreate(FABRIC) -> reserve, map, set access -> fill a pattern (cuMemcpyHtoD, synchronize)
            -> cuMemExportToShareableHandle -> POST the 64-byte handle to the importer
  importer: cuMemImportFromShareableHandle -> reserve, map, set access -> cuMemcpyDtoH and compare
            -> unmap, free the address, release -> answer {"ok": true}
  exporter: unmap, free the address, release
Both sides on loopback with TCP_NODELAY and a kept-alive connection; each side in its own process on one GPU.

Usage (GPU host, IMEX channel present, cuda-bindings installed):
  python3 bench/seed_peer.py [--size BYTES] [--count N] [--warmup N] [--gpu ORDINAL] [--json FILE]
Prints p50/p90/p99 per exchange in ms; --json writes every figure. Never calls multicast.
"""
import argparse, http.client, http.server, json, os, socket, statistics, subprocess, sys, time

import numpy as np

try:
    from cuda.bindings import driver as cu
except ImportError:  # older cuda-python
    from cuda import cuda as cu

FABRIC = cu.CUmemAllocationHandleType.CU_MEM_HANDLE_TYPE_FABRIC


def ok(result, what):
    err = result[0] if isinstance(result, tuple) else result
    if int(err) != 0:
        raise RuntimeError(f"{what}: {err}")
    return result[1] if isinstance(result, tuple) and len(result) > 1 else None


def context(gpu):
    ok(cu.cuInit(0), "cuInit")
    dev = ok(cu.cuDeviceGet(gpu), "cuDeviceGet")
    ctx = ok(cu.cuDevicePrimaryCtxRetain(dev), "cuDevicePrimaryCtxRetain")
    ok(cu.cuCtxSetCurrent(ctx), "cuCtxSetCurrent")


def map_rw(handle, size, gpu):
    ptr = ok(cu.cuMemAddressReserve(size, 0, 0, 0), "cuMemAddressReserve")
    ok(cu.cuMemMap(ptr, size, 0, handle, 0), "cuMemMap")
    desc = cu.CUmemAccessDesc()
    desc.location.type = cu.CUmemLocationType.CU_MEM_LOCATION_TYPE_DEVICE
    desc.location.id = gpu
    desc.flags = cu.CUmemAccess_flags.CU_MEM_ACCESS_FLAGS_PROT_READWRITE
    ok(cu.cuMemSetAccess(ptr, size, [desc], 1), "cuMemSetAccess")
    return ptr


def unmap_release(ptr, handle, size):
    ok(cu.cuMemUnmap(ptr, size), "cuMemUnmap")
    ok(cu.cuMemAddressFree(ptr, size), "cuMemAddressFree")
    ok(cu.cuMemRelease(handle), "cuMemRelease")


def pattern(seed, size):
    return (np.arange(size // 4, dtype=np.uint32) * np.uint32(2654435761)) ^ np.uint32(seed & 0xFFFFFFFF)


def importer(port, gpu):
    context(gpu)

    class Handler(http.server.BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"
        disable_nagle_algorithm = True

        def do_POST(self):
            req = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
            size = req["size"]
            try:
                h = ok(cu.cuMemImportFromShareableHandle(bytearray(bytes.fromhex(req["handle"])), FABRIC),
                       "cuMemImportFromShareableHandle")
                ptr = map_rw(h, size, gpu)
                back = np.empty(size // 4, dtype=np.uint32)
                ok(cu.cuMemcpyDtoH(back.ctypes.data, ptr, size), "cuMemcpyDtoH")
                same = bool(np.array_equal(back, pattern(req["seed"], size)))
                unmap_release(ptr, h, size)
                answer = {"ok": same}
            except RuntimeError as e:
                answer = {"ok": False, "error": str(e)}
            body = json.dumps(answer).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args):
            pass

    http.server.HTTPServer(("127.0.0.1", port), Handler).serve_forever()


def exporter(port, gpu, size, count, warmup):
    context(gpu)
    prop = cu.CUmemAllocationProp()
    prop.type = cu.CUmemAllocationType.CU_MEM_ALLOCATION_TYPE_PINNED
    prop.location.type = cu.CUmemLocationType.CU_MEM_LOCATION_TYPE_DEVICE
    prop.location.id = gpu
    prop.requestedHandleTypes = FABRIC
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    conn.connect()
    conn.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    times, failures = [], 0
    for i in range(warmup + count):
        t = time.perf_counter()
        h = ok(cu.cuMemCreate(size, prop, 0), "cuMemCreate")
        ptr = map_rw(h, size, gpu)
        data = pattern(i, size)
        ok(cu.cuMemcpyHtoD(ptr, data.ctypes.data, size), "cuMemcpyHtoD")
        ok(cu.cuCtxSynchronize(), "cuCtxSynchronize")
        fh = ok(cu.cuMemExportToShareableHandle(h, FABRIC, 0), "cuMemExportToShareableHandle")
        body = json.dumps({"handle": bytes(fh.data).hex(), "size": size, "seed": i})
        conn.request("POST", "/import", body, {"Content-Type": "application/json"})
        answer = json.loads(conn.getresponse().read())
        unmap_release(ptr, h, size)
        if i >= warmup:
            times.append((time.perf_counter() - t) * 1000)
            failures += 0 if answer.get("ok") else 1
    return times, failures


def main():
    a = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    a.add_argument("--size", type=int, default=2 << 20)
    a.add_argument("--count", type=int, default=500)
    a.add_argument("--warmup", type=int, default=50)
    a.add_argument("--gpu", type=int, default=0)
    a.add_argument("--port", type=int, default=0)
    a.add_argument("--json")
    a.add_argument("--serve", type=int, help=argparse.SUPPRESS)
    args = a.parse_args()
    if args.serve:
        importer(args.serve, args.gpu)
        return
    port = args.port
    if not port:
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            port = s.getsockname()[1]
    server = subprocess.Popen([sys.executable, __file__, "--serve", str(port), "--gpu", str(args.gpu)])
    try:
        for _ in range(200):  # until the importer listens
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                time.sleep(0.05)
        times, failures = exporter(port, args.gpu, args.size, args.count, args.warmup)
    finally:
        server.terminate()
        server.wait(10)
    s = sorted(times)
    q = lambda p: s[min(len(s) - 1, int(round(p * (len(s) - 1))))]
    result = {"sizeBytes": args.size, "exchanges": len(s), "failures": failures, "p50Ms": round(q(0.5), 3),
              "p90Ms": round(q(0.9), 3), "p99Ms": round(q(0.99), 3), "meanMs": round(statistics.mean(s), 3),
              "python": sys.version.split()[0]}
    print(f"seed-style peer (Python, cuda-bindings): {result['exchanges']} exchanges of {args.size} bytes, "
          f"{failures} failed; p50 {result['p50Ms']} ms, p90 {result['p90Ms']} ms, p99 {result['p99Ms']} ms")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(result, f, indent=1)
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
