#!/usr/bin/env python3
"""Which altered FABRIC handles make cuMemMap hang, and can anything tell them apart before the map?

Usage (on the GPU machine, IMEX channel0 present): python3 gpu/map_hang.py [--timeout S]

Rebuilds the exact bit flips that hung cuMemMap in gpu/hostile_handles.py's seeded mix (indices 2242, 3490,
4525, 4882, 5157 of random.Random(20261202)) plus controls, and for each runs one child process that, like the
agent, creates a 2 MiB FABRIC allocation, exports it, alters its own handle, imports it, reads
cuMemGetAllocationPropertiesFromHandle of the import, reserves, and maps. The parent kills a child that does not
finish within the timeout and reports where it stopped. Never calls multicast; touches no GPU setting.
"""
import json, os, random, subprocess, sys, time

HUNG = (2242, 3490, 4525, 4882, 5157)


def masks():
    """XOR masks of the mutated kinds, by index, exactly as hostile_handles.py draws them."""
    rnd = random.Random(20261202)
    out = {}
    for i in range(max(HUNG) + 1):
        kind = ("random", "mutated-few", "mutated-many", "random", "mutated-few", "mutated-many", "replayed",
                "oversized")[i % 8] if i % 97 else "replayed"
        if kind.startswith("mutated"):
            m = bytearray(64)
            for _ in range(1 + rnd.randrange(4 if kind == "mutated-few" else 32)):
                pos = rnd.randrange(64)
                m[pos] ^= 1 << rnd.randrange(8)
            out[i] = bytes(m)
    return out


def flip(positions, bit=0):
    m = bytearray(64)
    for p in positions:
        m[p] ^= 1 << bit
    return bytes(m)


def child(mask_hex):
    try:
        from cuda.bindings import driver as cu
    except ImportError:
        from cuda import cuda as cu
    mask = bytes.fromhex(mask_hex)

    def ok(r, what):
        err = r[0] if isinstance(r, tuple) else r
        if int(err) != 0:
            print(json.dumps({"step": what, "result": str(err)}), flush=True)
            sys.exit(3)
        return r[1] if isinstance(r, tuple) and len(r) > 1 else None

    ok(cu.cuInit(0), "cuInit")
    dev = ok(cu.cuDeviceGet(0), "cuDeviceGet")
    ctx = ok(cu.cuDevicePrimaryCtxRetain(dev), "retain")
    ok(cu.cuCtxSetCurrent(ctx), "setCurrent")
    prop = cu.CUmemAllocationProp()
    prop.type = cu.CUmemAllocationType.CU_MEM_ALLOCATION_TYPE_PINNED
    prop.location.type = cu.CUmemLocationType.CU_MEM_LOCATION_TYPE_DEVICE
    prop.location.id = 0
    prop.requestedHandleTypes = cu.CUmemAllocationHandleType.CU_MEM_HANDLE_TYPE_FABRIC
    size = 2 << 20
    h = ok(cu.cuMemCreate(size, prop, 0), "cuMemCreate")
    fh = ok(cu.cuMemExportToShareableHandle(h, cu.CUmemAllocationHandleType.CU_MEM_HANDLE_TYPE_FABRIC, 0), "export")
    good = bytes(fh.data)
    altered = bytes(a ^ b for a, b in zip(good, mask))
    r = cu.cuMemImportFromShareableHandle(bytearray(altered), cu.CUmemAllocationHandleType.CU_MEM_HANDLE_TYPE_FABRIC)
    report = {"import": str(r[0])}
    if int(r[0]) != 0:
        print(json.dumps(report), flush=True)
        return
    imp = r[1]
    p = cu.cuMemGetAllocationPropertiesFromHandle(imp)
    if int(p[0]) == 0:
        q = p[1]
        report["props"] = {"type": int(q.type), "locationType": int(q.location.type), "locationId": q.location.id,
                           "handleTypes": int(q.requestedHandleTypes),
                           "compression": int(q.allocFlags.compressionType),
                           "gpuDirectRdma": int(q.allocFlags.gpuDirectRDMACapable), "usage": int(q.allocFlags.usage)}
    else:
        report["props"] = str(p[0])
    g = cu.cuMemGetAllocationPropertiesFromHandle(h)
    if int(g[0]) == 0:
        q = g[1]
        report["ownProps"] = {"type": int(q.type), "locationType": int(q.location.type),
                              "locationId": q.location.id, "handleTypes": int(q.requestedHandleTypes)}
    ptr = ok(cu.cuMemAddressReserve(size, 0, 0, 0), "reserve")
    report["differsFromGoodAt"] = [i for i in range(64) if mask[i]]
    print(json.dumps(dict(report, step="mapping")), flush=True)
    t = time.time()
    m = cu.cuMemMap(ptr, size, 0, imp, 0)
    report["map"] = str(m[0]) if isinstance(m, tuple) else str(m)
    report["mapSeconds"] = round(time.time() - t, 4)
    if "SUCCESS" in report["map"]:
        cu.cuMemUnmap(ptr, size)
    cu.cuMemAddressFree(ptr, size)
    cu.cuMemRelease(imp)
    cu.cuMemRelease(h)
    print(json.dumps(report), flush=True)


def main():
    if len(sys.argv) > 2 and sys.argv[1] == "child":
        child(sys.argv[2])
        return
    timeout = float(sys.argv[sys.argv.index("--timeout") + 1]) if "--timeout" in sys.argv else 8.0
    m = masks()
    cases = [(f"hung #{i}", m[i]) for i in HUNG]
    cases += [(f"accepted-looking #{i}", m[i]) for i in sorted(m) if all(b == 0 for b in m[i][8:18] + m[i][40:45])][:3]
    def only(mask, keep):
        return bytes(b if i in keep else 0 for i, b in enumerate(mask))
    for i in HUNG[:2]:
        cases += [(f"#{i} byte 44 only", only(m[i], {44})), (f"#{i} 12/16+44 only", only(m[i], {12, 16, 44})),
                  (f"#{i} without 44", only(m[i], set(range(64)) - {44})),
                  (f"#{i} without 12/16", only(m[i], set(range(64)) - {12, 16}))]
    cases += [("byte 44 bit 0", flip([44])), ("bytes 12,44", flip([12, 44])), ("bytes 16,44", flip([16, 44])),
              ("byte 12", flip([12])), ("byte 16", flip([16])), ("byte 43", flip([43])),
              ("bytes 0-7", flip(range(8))), ("none", bytes(64))]
    for name, mask in cases:
        t = time.time()
        p = subprocess.Popen([sys.executable, __file__, "child", mask.hex()], stdout=subprocess.PIPE,
                             stderr=subprocess.STDOUT, text=True)
        try:
            out, _ = p.communicate(timeout=timeout)
            state = f"exit {p.returncode}"
        except subprocess.TimeoutExpired:
            p.kill()
            try:
                out, _ = p.communicate(timeout=30)
                state = f"HUNG > {timeout:.0f} s (killed; gone {time.time() - t - timeout:.1f} s later)"
            except subprocess.TimeoutExpired:
                out, state = "", f"HUNG > {timeout:.0f} s and still there 30 s after SIGKILL"
        lines = [l for l in out.splitlines() if l.strip()]
        print(f"{name:24s} {state:45s} {lines[-1] if lines else ''}", flush=True)


if __name__ == "__main__":
    main()
