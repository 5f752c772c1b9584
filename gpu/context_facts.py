# Facts for the fake: compute/MIG mode as NVML reports, granularity query without a context.
import time
from cuda.bindings import driver as d
print("cuInit", d.cuInit(0))
err, dev = d.cuDeviceGet(0); print("cuDeviceGet", err)
prop = d.CUmemAllocationProp()
prop.type = d.CUmemAllocationType.CU_MEM_ALLOCATION_TYPE_PINNED
prop.location.type = d.CUmemLocationType.CU_MEM_LOCATION_TYPE_DEVICE
prop.location.id = 0
prop.requestedHandleTypes = d.CUmemAllocationHandleType.CU_MEM_HANDLE_TYPE_FABRIC
err, g = d.cuMemGetAllocationGranularity(prop, d.CUmemAllocationGranularity_flags.CU_MEM_ALLOC_GRANULARITY_MINIMUM)
print("granularity without a context:", err, g)
err, ctx = d.cuCtxGetCurrent(); print("current context after granularity:", err, int(ctx) if ctx else None)
for attr in ("CU_DEVICE_ATTRIBUTE_COMPUTE_MODE", "CU_DEVICE_ATTRIBUTE_HANDLE_TYPE_FABRIC_SUPPORTED"):
    print(attr, d.cuDeviceGetAttribute(getattr(d.CUdevice_attribute, attr), dev))
t = time.perf_counter(); err, c = d.cuDevicePrimaryCtxRetain(dev); print("retain", err, "%.1f ms" % ((time.perf_counter()-t)*1e3))
t = time.perf_counter(); print("release", d.cuDevicePrimaryCtxRelease(dev), "%.1f ms" % ((time.perf_counter()-t)*1e3))
