"""What one CUDA context costs a process in resident memory, without the JVM: RssAnon/RssFile and the driver's
device mappings (/dev/nvidia*) before cuInit, after it, after the primary context, and after one 2 MiB FABRIC
allocation written from host memory (what an agent holds between probes). Run under different CUDA_* variables
to see which of them change it (docs/performance.md, section H200). Prints one JSON line."""
import ctypes, json, os, re, sys
from cuda.bindings import driver as cu


def rss():
    out = {}
    with open("/proc/self/status") as f:
        for line in f:
            k, _, v = line.partition(":")
            if k in ("RssAnon", "RssFile", "RssShmem"):
                out[k] = round(int(v.split()[0]) / 1024, 1)
    dev, name = {}, None
    with open("/proc/self/smaps") as f:
        for line in f:
            if re.match(r"[0-9a-f]+-[0-9a-f]+ ", line):
                parts = line.split(None, 5)
                name = parts[5].strip() if len(parts) == 6 else ""
            elif line.startswith("Rss:") and name.startswith("/dev/nvidia"):
                dev[name] = round(dev.get(name, 0) + int(line.split()[1]) / 1024, 1)
    out["deviceMappings"] = dev
    return out


def ok(r):
    err = r[0] if isinstance(r, tuple) else r
    if err != cu.CUresult.CUDA_SUCCESS:
        sys.exit(f"CUDA call failed: {err}")
    return r[1] if isinstance(r, tuple) and len(r) > 1 else None


steps = {"start": rss()}
ok(cu.cuInit(0))
steps["cuInit"] = rss()
dev = ok(cu.cuDeviceGet(0))
ctx = ok(cu.cuDevicePrimaryCtxRetain(dev))
ok(cu.cuCtxSetCurrent(ctx))
steps["primaryContext"] = rss()
prop = cu.CUmemAllocationProp()
prop.type = cu.CUmemAllocationType.CU_MEM_ALLOCATION_TYPE_PINNED
prop.location.type = cu.CUmemLocationType.CU_MEM_LOCATION_TYPE_DEVICE
prop.location.id = 0
prop.requestedHandleTypes = cu.CUmemAllocationHandleType.CU_MEM_HANDLE_TYPE_FABRIC
size = 2 << 20
h = ok(cu.cuMemCreate(size, prop, 0))
va = ok(cu.cuMemAddressReserve(size, 0, 0, 0))
ok(cu.cuMemMap(va, size, 0, h, 0))
acc = cu.CUmemAccessDesc()
acc.location = prop.location
acc.flags = cu.CUmemAccess_flags.CU_MEM_ACCESS_FLAGS_PROT_READWRITE
ok(cu.cuMemSetAccess(va, size, [acc], 1))
buf = ctypes.create_string_buffer(size)
ok(cu.cuMemcpyHtoD(va, ctypes.addressof(buf), size))
ok(cu.cuCtxSynchronize())
steps["fabricAllocationWritten"] = rss()
ok(cu.cuMemUnmap(va, size))
ok(cu.cuMemAddressFree(va, size))
ok(cu.cuMemRelease(h))
steps["released"] = rss()
env = {k: v for k, v in os.environ.items() if k.startswith("CUDA_")}
print(json.dumps({"env": env, "steps": steps}))
