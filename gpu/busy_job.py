"""A stand-in for a job that has filled its GPU: retains the primary context of GPU 0, allocates all but LEAVE_MIB of
the free memory (cuMemAlloc), prints one JSON line with what cuMemGetInfo says before and after, then holds the memory
until stdin closes or a line arrives. Then it allocates 256 MiB more (what a job does next) and prints whether that
succeeded, so a caller can tell whether anything took memory from it meanwhile."""
import json, sys
from cuda.bindings import driver as cu

LEAVE_MIB = int(sys.argv[1]) if len(sys.argv) > 1 else 2048


def ok(r):
    err = r[0] if isinstance(r, tuple) else r
    if err != cu.CUresult.CUDA_SUCCESS:
        sys.exit(f"busy_job: CUDA call failed: {err}")
    return r[1:] if isinstance(r, tuple) and len(r) > 2 else (r[1] if isinstance(r, tuple) and len(r) > 1 else None)


ok(cu.cuInit(0))
dev = ok(cu.cuDeviceGet(0))
ctx = ok(cu.cuDevicePrimaryCtxRetain(dev))
ok(cu.cuCtxSetCurrent(ctx))
free0, total = ok(cu.cuMemGetInfo())
size = max(0, free0 - LEAVE_MIB * 2**20)
size -= size % (2 * 2**20)
ptr = ok(cu.cuMemAlloc(size))
free1, _ = ok(cu.cuMemGetInfo())
print(json.dumps({"freeBeforeMiB": free0 >> 20, "totalMiB": total >> 20, "heldMiB": size >> 20,
                  "freeAfterMiB": free1 >> 20}), flush=True)
sys.stdin.readline()
err, more = cu.cuMemAlloc(256 * 2**20)
free2, _ = ok(cu.cuMemGetInfo())
print(json.dumps({"next256MiB": str(err), "freeAtEndMiB": free2 >> 20}), flush=True)
