/* What the fill kernel costs a new context (docs/performance.md): ROUNDS times, retain the primary context (as a
 * probing round does), load the pattern kernel's PTX (the driver JITs it), fill 2 MiB once by it, unload, release.
 * Prints each step's milliseconds. Built on the GPU host with the shim's loader:
 *   gcc -std=c11 -D_GNU_SOURCE -O2 -Inative/include -Inative/src native/src/loader.c gpu/module_load.c -o /tmp/ml -ldl -lpthread
 */
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "loader.h"
#include "pattern_kernel.h"

static double ms(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}

int main(void) {
    const struct load_report *r = imexprobe_load(NULL, NULL);
    if (!r->cuda_loaded || cu.cuInit(0) != CUDA_SUCCESS) return printf("no driver\n"), 2;
    CUdevice dev;
    cu.cuDeviceGet(&dev, 0);
    for (int round = 0; round < 6; round++) {
        CUcontext ctx;
        CUmodule mod;
        CUfunction fn, compare;
        double t0 = ms();
        if (cu.cuDevicePrimaryCtxRetain(&ctx, dev) || cu.cuCtxSetCurrent(ctx)) return printf("retain failed\n"), 1;
        double t1 = ms();
        CUresult rc = pattern_kernel_load(&mod, &fn, &compare);
        double t2 = ms();
        CUmemAllocationProp prop;
        memset(&prop, 0, sizeof prop);
        prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
        prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
        CUmemGenericAllocationHandle h;
        CUdeviceptr va;
        CUmemAccessDesc acc;
        memset(&acc, 0, sizeof acc);
        acc.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
        acc.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
        cu.cuMemCreate(&h, 2 << 20, &prop, 0);
        cu.cuMemAddressReserve(&va, 2 << 20, 0, 0, 0);
        cu.cuMemMap(va, 2 << 20, 0, h, 0);
        cu.cuMemSetAccess(va, 2 << 20, &acc, 1);
        double t3 = ms();
        CUresult frc = rc == CUDA_SUCCESS ? pattern_kernel_fill(fn, va, 2 << 20, 42) : rc;
        double t4 = ms();
        CUresult frc2 = rc == CUDA_SUCCESS ? pattern_kernel_fill(fn, va, 2 << 20, 43) : rc;
        double t5 = ms();
        cu.cuMemUnmap(va, 2 << 20);
        cu.cuMemAddressFree(va, 2 << 20);
        cu.cuMemRelease(h);
        if (rc == CUDA_SUCCESS) cu.cuModuleUnload(mod);
        cu.cuDevicePrimaryCtxRelease(dev);
        double t6 = ms();
        printf("round %d: retain %.2f ms, module load %.2f ms (rc %d), first fill %.3f ms (rc %d), second %.3f ms (rc %d), "
               "teardown %.2f ms\n", round, t1 - t0, t2 - t1, rc, t4 - t3, frc, t5 - t4, frc2, t6 - t5);
    }
    return 0;
}
