/* Can the compare kernel fail, and does it agree with the host (docs/gpu-validation.md)? On one 2 MiB allocation:
 * the GPU's fill checked by the GPU's compare; the host's words (pattern.h, copied in) checked by the compare, and
 * the GPU's words checked on the host; another seed found differing at word 0; ROUNDS single words changed at random
 * places, each found at exactly that word and no other; the compare's time (p50 of 200); verify's copy-engine window
 * (cuMemcpyDtoHAsync on a non-blocking stream, beside the compare, as the shim does): what it reads, what it adds to
 * the compare's time, and the GPU memory the stream takes (cuMemGetInfo). Exits 1 on any wrong answer. Built on the GPU host with the shim's loader:
 *   gcc -std=c11 -D_GNU_SOURCE -O2 -Inative/include -Inative/src native/src/loader.c gpu/compare_check.c -o /tmp/cc -ldl -lpthread
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "loader.h"
#include "pattern.h"
#include "pattern_kernel.h"

#define SIZE ((size_t)2 << 20)
#define WORDS (SIZE / 8)
#define ROUNDS 50

static int failures;

static double ms(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}

static void expect(const char *what, long long got, long long want) {
    printf("%-58s got %lld, want %lld: %s\n", what, got, want, got == want ? "ok" : "WRONG");
    if (got != want) failures++;
}

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

#define CHECK(call)                                                              \
    do {                                                                         \
        CUresult rc_ = (call);                                                   \
        if (rc_ != CUDA_SUCCESS) return printf("%s: %d\n", #call, (int)rc_), 2; \
    } while (0)

int main(void) {
    const struct load_report *r = imexprobe_load(NULL, NULL);
    if (!r->cuda_loaded) return printf("no driver\n"), 2;
    CHECK(cu.cuInit(0));
    CUdevice dev;
    CUcontext ctx;
    CHECK(cu.cuDeviceGet(&dev, 0));
    CHECK(cu.cuDevicePrimaryCtxRetain(&ctx, dev));
    CHECK(cu.cuCtxSetCurrent(ctx));
    CUmodule mod;
    CUfunction fill, compare;
    CHECK(pattern_kernel_load(&mod, &fill, &compare));
    CUmemAllocationProp prop;
    memset(&prop, 0, sizeof prop);
    prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
    prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
    CUmemAccessDesc acc;
    memset(&acc, 0, sizeof acc);
    acc.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
    acc.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
    CUmemGenericAllocationHandle h;
    CUdeviceptr va;
    CHECK(cu.cuMemCreate(&h, SIZE, &prop, 0));
    CHECK(cu.cuMemAddressReserve(&va, SIZE, 0, 0, 0));
    CHECK(cu.cuMemMap(va, SIZE, 0, h, 0));
    CHECK(cu.cuMemSetAccess(va, SIZE, &acc, 1));
    void *answer_mem, *host_mem;
    CHECK(cu.cuMemHostAlloc(&answer_mem, PATTERN_COMPARE_BLOCKS * 8, 0));
    CHECK(cu.cuMemHostAlloc(&host_mem, SIZE, 0));
    uint64_t *answer = answer_mem, *host = host_mem;
    srand((unsigned)time(NULL));
    uint64_t seed = ((uint64_t)rand() << 32) ^ (uint64_t)rand();
    long long bad;

    CHECK(pattern_kernel_fill(fill, va, SIZE, seed));
    CHECK(pattern_kernel_compare(compare, va, SIZE, seed, answer, &bad));
    expect("the GPU's fill, compared on the GPU", bad, -1);
    CHECK(pattern_kernel_compare(compare, va, SIZE, seed + 1, answer, &bad));
    expect("the same memory against the next seed", bad, 0);
    CHECK(cu.cuMemcpyDtoH(host, va, SIZE));
    expect("the GPU's fill, compared on the host (pattern.h)", (long long)pattern_first_mismatch(host, WORDS, seed, 0),
           (long long)WORDS);
    pattern_fill(host, WORDS, seed ^ 0x5555, 0);
    CHECK(cu.cuMemcpyHtoD(va, host, SIZE));
    CHECK(pattern_kernel_compare(compare, va, SIZE, seed ^ 0x5555, answer, &bad));
    expect("the host's words (pattern.h), compared on the GPU", bad, -1);

    CHECK(pattern_kernel_fill(fill, va, SIZE, seed));
    int found = 0;
    for (int i = 0; i < ROUNDS; i++) {
        size_t at = (size_t)rand() % WORDS;
        uint64_t changed = pattern_word(seed, at) ^ (1ULL << (rand() % 64)); /* one bit flipped */
        CHECK(cu.cuMemcpyHtoD(va + at * 8, &changed, 8));
        CHECK(pattern_kernel_compare(compare, va, SIZE, seed, answer, &bad));
        if (bad == (long long)at) found++;
        else printf("word %zu changed: the compare answered %lld\n", at, bad);
        uint64_t back = pattern_word(seed, at);
        CHECK(cu.cuMemcpyHtoD(va + at * 8, &back, 8));
    }
    expect("single flipped bits found at their word (of ROUNDS)", found, ROUNDS);
    CHECK(pattern_kernel_compare(compare, va, SIZE, seed, answer, &bad));
    expect("every word restored", bad, -1);

    double t[200];
    for (int i = 0; i < 200; i++) {
        double t0 = ms();
        CHECK(pattern_kernel_compare(compare, va, SIZE, seed, answer, &bad));
        t[i] = ms() - t0;
    }
    qsort(t, 200, sizeof t[0], cmp_double);
    printf("compare of 2 MiB (launch, synchronise, %d answers read): p50 %.4f ms, p99 %.4f ms\n",
           PATTERN_COMPARE_BLOCKS, t[100], t[198]);

    size_t free0, free1, total;
    CUstream stream;
    CHECK(cu.cuMemGetInfo(&free0, &total));
    CHECK(cu.cuStreamCreate(&stream, CU_STREAM_NON_BLOCKING));
    CHECK(cu.cuMemGetInfo(&free1, &total));
    printf("GPU memory a non-blocking stream takes (free before - after)  %lld KiB\n",
           ((long long)free0 - (long long)free1) / 1024);
    const size_t window = (size_t)64 << 10;
    for (int round = 0; round < 2; round++) {
        int right = 0;
        for (int i = 0; i < 200; i++) {
            size_t from = (size_t)(rand() % (int)(SIZE / window)) * window;
            memset(host, 0, window);
            double t0 = ms();
            CHECK(cu.cuMemcpyDtoHAsync(host, va + from, window, stream));
            CHECK(pattern_kernel_compare(compare, va, SIZE, seed, answer, &bad)); /* synchronises the stream too */
            t[i] = ms() - t0;
            if (bad == -1 && pattern_first_mismatch(host, window / 8, seed, from / 8) == window / 8) right++;
        }
        if (round == 1) expect("64 KiB windows read beside the compare, matching (of 200)", right, 200);
        qsort(t, 200, sizeof t[0], cmp_double);
        printf("compare of 2 MiB with a 64 KiB window beside it (round %d): p50 %.4f ms, p99 %.4f ms\n", round + 1,
               t[100], t[198]);
    }
    for (int i = 0; i < 200; i++) {
        size_t from = (size_t)(rand() % (int)(SIZE / window)) * window;
        double t0 = ms();
        CHECK(pattern_kernel_compare(compare, va, SIZE, seed, answer, &bad));
        CHECK(cu.cuMemcpyDtoH(host, va + from, window));
        t[i] = ms() - t0;
    }
    qsort(t, 200, sizeof t[0], cmp_double);
    printf("compare of 2 MiB, then the window by cuMemcpyDtoH: p50 %.4f ms, p99 %.4f ms\n", t[100], t[198]);
    cu.cuStreamDestroy(stream);
    cu.cuMemUnmap(va, SIZE);
    cu.cuMemAddressFree(va, SIZE);
    cu.cuMemRelease(h);
    cu.cuMemFreeHost(answer_mem);
    cu.cuMemFreeHost(host_mem);
    cu.cuModuleUnload(mod);
    cu.cuDevicePrimaryCtxRelease(dev);
    printf("compare_check: %s\n", failures ? "FAILED" : "every answer right");
    return failures ? 1 : 0;
}
