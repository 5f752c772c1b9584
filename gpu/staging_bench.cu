// Where a probe's pattern time goes on the GPU host, per way of moving it (docs/performance.md, issue 23):
// a 2 MiB FABRIC allocation mapped read-write, then for N iterations each of
//   fill:   the shim's way (malloc'd staging, pattern_fill, cuMemcpyHtoD, cuCtxSynchronize), a reused malloc'd
//           buffer, a reused pinned buffer (cuMemHostAlloc), a device kernel writing the same words, cuMemsetD32
//   verify: the shim's way (malloc'd staging, cuMemcpyDtoH, pattern_first_mismatch), reused malloc'd, pinned,
//           a device kernel comparing the same words (one 8-byte read back)
//   and the CPU's share alone: pattern_fill / pattern_first_mismatch over 2 MiB in host memory.
// Also the VMM calls of one create / import (cuMemCreate, reserve, map, access, export, unmap, free, release).
//   gcc -O2 -c -I native/src gpu/staging_pattern.c -o /tmp/sp.o &&
//   nvcc -O2 gpu/staging_bench.cu /tmp/sp.o -o /tmp/staging -lcuda && /tmp/staging [iters]
// Prints p50 / p90 in microseconds, one line each. Never calls multicast.
#include <cuda.h>
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <vector>
#include <cstdint>
extern "C" void sp_fill(uint64_t *buf, size_t words, uint64_t seed);
extern "C" size_t sp_mismatch(const uint64_t *buf, size_t words, uint64_t seed);

#define CK(x) do { CUresult r_ = (x); if (r_ != CUDA_SUCCESS) { printf("FAIL %s = %d line %d\n", #x, r_, __LINE__); exit(1); } } while (0)

static double now_us() { timespec t; clock_gettime(CLOCK_MONOTONIC, &t); return t.tv_sec * 1e6 + t.tv_nsec / 1e3; }

__device__ unsigned long long dev_word(unsigned long long seed, unsigned long long i) {
    unsigned long long z = seed + (i + 1) * 0x9E3779B97F4A7C15ULL;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
}
extern "C" __global__ void fill_k(unsigned long long *p, unsigned long long n, unsigned long long seed) {
    for (unsigned long long i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
        p[i] = dev_word(seed, i);
}
extern "C" __global__ void check_k(const unsigned long long *p, unsigned long long n, unsigned long long seed,
                                   unsigned long long *first) {
    for (unsigned long long i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
        if (p[i] != dev_word(seed, i)) atomicMin(first, i);
}

struct Stat { const char *name; std::vector<double> v; };
static void report(Stat &s) {
    std::sort(s.v.begin(), s.v.end());
    printf("%-44s p50 %8.1f us  p90 %8.1f us\n", s.name, s.v[s.v.size() / 2], s.v[s.v.size() * 9 / 10]);
}

int main(int argc, char **argv) {
    int iters = argc > 1 ? atoi(argv[1]) : 300;
    const size_t size = 2u << 20, words = size / 8;
    CK(cuInit(0));
    CUdevice dev; CUcontext ctx;
    CK(cuDeviceGet(&dev, 0));
    CK(cuDevicePrimaryCtxRetain(&ctx, dev));
    CK(cuCtxSetCurrent(ctx));
    CUmemAllocationProp prop; memset(&prop, 0, sizeof prop);
    prop.type = CU_MEM_ALLOCATION_TYPE_PINNED; prop.requestedHandleTypes = CU_MEM_HANDLE_TYPE_FABRIC;
    prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE; prop.location.id = 0;
    CUmemAccessDesc acc; memset(&acc, 0, sizeof acc);
    acc.location.type = CU_MEM_LOCATION_TYPE_DEVICE; acc.location.id = 0; acc.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;

    Stat vmm[] = {{"vmm: cuMemCreate FABRIC 2 MiB", {}}, {"vmm: cuMemAddressReserve", {}}, {"vmm: cuMemMap", {}},
                  {"vmm: cuMemSetAccess", {}}, {"vmm: cuMemExportToShareableHandle", {}},
                  {"vmm: cuMemImportFromShareableHandle (own)", {}}, {"vmm: cuMemUnmap", {}},
                  {"vmm: cuMemAddressFree", {}}, {"vmm: cuMemRelease", {}}, {"vmm: cuCtxSynchronize (idle)", {}}};
    for (int i = 0; i < iters; i++) {
        CUmemGenericAllocationHandle h, h2; CUdeviceptr p; CUmemFabricHandle fh; double t;
        t = now_us(); CK(cuMemCreate(&h, size, &prop, 0)); vmm[0].v.push_back(now_us() - t);
        t = now_us(); CK(cuMemAddressReserve(&p, size, 0, 0, 0)); vmm[1].v.push_back(now_us() - t);
        t = now_us(); CK(cuMemMap(p, size, 0, h, 0)); vmm[2].v.push_back(now_us() - t);
        t = now_us(); CK(cuMemSetAccess(p, size, &acc, 1)); vmm[3].v.push_back(now_us() - t);
        t = now_us(); CK(cuMemExportToShareableHandle(&fh, h, CU_MEM_HANDLE_TYPE_FABRIC, 0)); vmm[4].v.push_back(now_us() - t);
        t = now_us(); CK(cuMemImportFromShareableHandle(&h2, &fh, CU_MEM_HANDLE_TYPE_FABRIC)); vmm[5].v.push_back(now_us() - t);
        CK(cuMemRelease(h2));
        t = now_us(); CK(cuMemUnmap(p, size)); vmm[6].v.push_back(now_us() - t);
        t = now_us(); CK(cuMemAddressFree(p, size)); vmm[7].v.push_back(now_us() - t);
        t = now_us(); CK(cuMemRelease(h)); vmm[8].v.push_back(now_us() - t);
        t = now_us(); CK(cuCtxSynchronize()); vmm[9].v.push_back(now_us() - t);
    }
    for (auto &s : vmm) report(s);

    CUmemGenericAllocationHandle h; CUdeviceptr p;
    CK(cuMemCreate(&h, size, &prop, 0));
    CK(cuMemAddressReserve(&p, size, 0, 0, 0));
    CK(cuMemMap(p, size, 0, h, 0));
    CK(cuMemSetAccess(p, size, &acc, 1));
    uint64_t *reused = (uint64_t *)malloc(size), *pinned = nullptr, *cpu = (uint64_t *)malloc(size);
    CK(cuMemHostAlloc((void **)&pinned, size, 0));
    CUdeviceptr first; CK(cuMemAlloc(&first, 8));
    Stat st[] = {{"cpu: pattern_fill 2 MiB", {}}, {"cpu: pattern_first_mismatch 2 MiB", {}},
                 {"fill: shim (malloc + fill + HtoD + sync)", {}}, {"fill: reused malloc + fill + HtoD + sync", {}},
                 {"fill: pinned + fill + HtoD + sync", {}}, {"fill: pinned, HtoD + sync only", {}},
                 {"fill: kernel + sync", {}}, {"fill: cuMemsetD32 + sync", {}},
                 {"verify: shim (malloc + DtoH + compare)", {}}, {"verify: reused malloc + DtoH + compare", {}},
                 {"verify: pinned + DtoH + compare", {}}, {"verify: pinned, DtoH only", {}},
                 {"verify: kernel + 8 B DtoH", {}}};
    long bad = 0;
    for (int i = 0; i < iters; i++) {
        uint64_t seed = 0x1234 + i; double t;
        t = now_us(); sp_fill(cpu, words, seed); st[0].v.push_back(now_us() - t);
        t = now_us(); bad += sp_mismatch(cpu, words, seed) != words; st[1].v.push_back(now_us() - t);
        t = now_us();
        { uint64_t *b = (uint64_t *)malloc(size); sp_fill(b, words, seed); CK(cuMemcpyHtoD(p, b, size)); free(b); CK(cuCtxSynchronize()); }
        st[2].v.push_back(now_us() - t);
        t = now_us(); sp_fill(reused, words, seed); CK(cuMemcpyHtoD(p, reused, size)); CK(cuCtxSynchronize()); st[3].v.push_back(now_us() - t);
        t = now_us(); sp_fill(pinned, words, seed); CK(cuMemcpyHtoD(p, pinned, size)); CK(cuCtxSynchronize()); st[4].v.push_back(now_us() - t);
        t = now_us(); CK(cuMemcpyHtoD(p, pinned, size)); CK(cuCtxSynchronize()); st[5].v.push_back(now_us() - t);
        t = now_us(); fill_k<<<264, 256>>>((unsigned long long *)p, words, seed); CK(cuCtxSynchronize()); st[6].v.push_back(now_us() - t);
        t = now_us(); CK(cuMemsetD32(p, (unsigned)seed, size / 4)); CK(cuCtxSynchronize()); st[7].v.push_back(now_us() - t);
        CK(cuMemcpyHtoD(p, reused, size)); CK(cuCtxSynchronize());
        t = now_us();
        { uint64_t *b = (uint64_t *)malloc(size); CK(cuMemcpyDtoH(b, p, size)); bad += sp_mismatch(b, words, seed) != words; free(b); }
        st[8].v.push_back(now_us() - t);
        t = now_us(); CK(cuMemcpyDtoH(reused, p, size)); bad += sp_mismatch(reused, words, seed) != words; st[9].v.push_back(now_us() - t);
        t = now_us(); CK(cuMemcpyDtoH(pinned, p, size)); bad += sp_mismatch(pinned, words, seed) != words; st[10].v.push_back(now_us() - t);
        t = now_us(); CK(cuMemcpyDtoH(pinned, p, size)); st[11].v.push_back(now_us() - t);
        t = now_us();
        { unsigned long long f = ~0ULL; CK(cuMemcpyHtoD(first, &f, 8)); check_k<<<264, 256>>>((const unsigned long long *)p, words, seed, (unsigned long long *)first);
          CK(cuMemcpyDtoH(&f, first, 8)); bad += f != ~0ULL; }
        st[12].v.push_back(now_us() - t);
    }
    for (auto &s : st) report(s);
    printf("mismatches seen (must be 0): %ld\n", bad);
    return 0;
}
