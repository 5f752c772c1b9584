/* The pattern fill on the GPU (pattern_kernel.cu, as PTX the driver compiles for the GPU at hand): measured on the
 * H200 (docs/performance.md), 2 MiB filled in 15 us against 259 us computed on the host and copied from page-locked
 * memory, and no host CPU spent on it. Shared by the shim (jni_bridge.c) and the benchmark's driver floor.
 * The PTX between the markers is written by pattern_kernel.sh; edit the .cu and run that, not the text. */
#ifndef IMEXPROBE_PATTERN_KERNEL_H
#define IMEXPROBE_PATTERN_KERNEL_H

#include <stddef.h>
#include <stdint.h>

#include "loader.h"

#define PATTERN_KERNEL_NAME "imexprobe_pattern_fill"
#define PATTERN_COMPARE_NAME "imexprobe_pattern_compare"
/* The compare kernel's grid at most, so the words of page-locked host memory its answer needs. */
#define PATTERN_COMPARE_BLOCKS 1024

/* clang-format off */
static const char PATTERN_PTX[] =
/* PTX begin */
    "\n"
    ".version 7.0\n"
    ".target sm_70\n"
    ".address_size 64\n"
    "\n"
    "	// .globl	imexprobe_pattern_fill\n"
    "\n"
    ".visible .entry imexprobe_pattern_fill(\n"
    "	.param .u64 imexprobe_pattern_fill_param_0,\n"
    "	.param .u64 imexprobe_pattern_fill_param_1,\n"
    "	.param .u64 imexprobe_pattern_fill_param_2,\n"
    "	.param .u64 imexprobe_pattern_fill_param_3\n"
    ")\n"
    "{\n"
    "	.reg .pred 	%p<3>;\n"
    "	.reg .b32 	%r<5>;\n"
    "	.reg .b64 	%rd<29>;\n"
    "\n"
    "\n"
    "	ld.param.u64 	%rd8, [imexprobe_pattern_fill_param_0];\n"
    "	ld.param.u64 	%rd9, [imexprobe_pattern_fill_param_1];\n"
    "	ld.param.u64 	%rd10, [imexprobe_pattern_fill_param_2];\n"
    "	ld.param.u64 	%rd11, [imexprobe_pattern_fill_param_3];\n"
    "	mov.u32 	%r1, %ntid.x;\n"
    "	cvt.u64.u32 	%rd1, %r1;\n"
    "	mov.u32 	%r2, %ctaid.x;\n"
    "	mul.wide.u32 	%rd12, %r2, %r1;\n"
    "	mov.u32 	%r3, %tid.x;\n"
    "	cvt.u64.u32 	%rd13, %r3;\n"
    "	add.s64 	%rd28, %rd12, %rd13;\n"
    "	setp.ge.u64 	%p1, %rd28, %rd9;\n"
    "	@%p1 bra 	$L__BB0_3;\n"
    "\n"
    "	add.s64 	%rd3, %rd10, -7046029254386353131;\n"
    "	mov.u32 	%r4, %nctaid.x;\n"
    "	cvt.u64.u32 	%rd14, %r4;\n"
    "	mul.lo.s64 	%rd4, %rd14, %rd1;\n"
    "	cvta.to.global.u64 	%rd5, %rd8;\n"
    "\n"
    "$L__BB0_2:\n"
    "	add.s64 	%rd15, %rd28, %rd11;\n"
    "	mul.lo.s64 	%rd16, %rd15, -7046029254386353131;\n"
    "	add.s64 	%rd17, %rd3, %rd16;\n"
    "	shr.u64 	%rd18, %rd17, 30;\n"
    "	xor.b64  	%rd19, %rd18, %rd17;\n"
    "	mul.lo.s64 	%rd20, %rd19, -4658895280553007687;\n"
    "	shr.u64 	%rd21, %rd20, 27;\n"
    "	xor.b64  	%rd22, %rd21, %rd20;\n"
    "	mul.lo.s64 	%rd23, %rd22, -7723592293110705685;\n"
    "	shr.u64 	%rd24, %rd23, 31;\n"
    "	xor.b64  	%rd25, %rd24, %rd23;\n"
    "	shl.b64 	%rd26, %rd28, 3;\n"
    "	add.s64 	%rd27, %rd5, %rd26;\n"
    "	st.global.u64 	[%rd27], %rd25;\n"
    "	add.s64 	%rd28, %rd28, %rd4;\n"
    "	setp.lt.u64 	%p2, %rd28, %rd9;\n"
    "	@%p2 bra 	$L__BB0_2;\n"
    "\n"
    "$L__BB0_3:\n"
    "	ret;\n"
    "\n"
    "}\n"
    "	// .globl	imexprobe_pattern_compare\n"
    ".visible .entry imexprobe_pattern_compare(\n"
    "	.param .u64 imexprobe_pattern_compare_param_0,\n"
    "	.param .u64 imexprobe_pattern_compare_param_1,\n"
    "	.param .u64 imexprobe_pattern_compare_param_2,\n"
    "	.param .u64 imexprobe_pattern_compare_param_3,\n"
    "	.param .u64 imexprobe_pattern_compare_param_4\n"
    ")\n"
    "{\n"
    "	.reg .pred 	%p<9>;\n"
    "	.reg .b32 	%r<14>;\n"
    "	.reg .b64 	%rd<42>;\n"
    "	// demoted variable\n"
    "	.shared .align 8 .b8 _ZZ25imexprobe_pattern_compareE5first[2048];\n"
    "\n"
    "	ld.param.u64 	%rd11, [imexprobe_pattern_compare_param_0];\n"
    "	ld.param.u64 	%rd12, [imexprobe_pattern_compare_param_1];\n"
    "	ld.param.u64 	%rd13, [imexprobe_pattern_compare_param_2];\n"
    "	ld.param.u64 	%rd14, [imexprobe_pattern_compare_param_3];\n"
    "	ld.param.u64 	%rd15, [imexprobe_pattern_compare_param_4];\n"
    "	mov.u32 	%r1, %ntid.x;\n"
    "	cvt.u64.u32 	%rd1, %r1;\n"
    "	mov.u32 	%r7, %ctaid.x;\n"
    "	cvt.u64.u32 	%rd2, %r7;\n"
    "	mul.wide.u32 	%rd17, %r7, %r1;\n"
    "	mov.u32 	%r2, %tid.x;\n"
    "	cvt.u64.u32 	%rd18, %r2;\n"
    "	add.s64 	%rd40, %rd17, %rd18;\n"
    "	setp.ge.u64 	%p1, %rd40, %rd12;\n"
    "	mov.u64 	%rd16, -1;\n"
    "	mov.u64 	%rd41, %rd16;\n"
    "	@%p1 bra 	$L__BB1_4;\n"
    "\n"
    "	add.s64 	%rd4, %rd13, -7046029254386353131;\n"
    "	mov.u32 	%r8, %nctaid.x;\n"
    "	cvt.u64.u32 	%rd19, %r8;\n"
    "	mul.lo.s64 	%rd5, %rd19, %rd1;\n"
    "	cvta.to.global.u64 	%rd6, %rd11;\n"
    "\n"
    "$L__BB1_2:\n"
    "	add.s64 	%rd20, %rd40, %rd14;\n"
    "	mul.lo.s64 	%rd21, %rd20, -7046029254386353131;\n"
    "	add.s64 	%rd22, %rd4, %rd21;\n"
    "	shr.u64 	%rd23, %rd22, 30;\n"
    "	xor.b64  	%rd24, %rd23, %rd22;\n"
    "	mul.lo.s64 	%rd25, %rd24, -4658895280553007687;\n"
    "	shr.u64 	%rd26, %rd25, 27;\n"
    "	xor.b64  	%rd27, %rd26, %rd25;\n"
    "	mul.lo.s64 	%rd28, %rd27, -7723592293110705685;\n"
    "	shr.u64 	%rd29, %rd28, 31;\n"
    "	xor.b64  	%rd30, %rd29, %rd28;\n"
    "	shl.b64 	%rd31, %rd40, 3;\n"
    "	add.s64 	%rd32, %rd6, %rd31;\n"
    "	ld.global.u64 	%rd33, [%rd32];\n"
    "	setp.ne.s64 	%p2, %rd33, %rd30;\n"
    "	mov.u64 	%rd41, %rd40;\n"
    "	@%p2 bra 	$L__BB1_4;\n"
    "\n"
    "	add.s64 	%rd40, %rd40, %rd5;\n"
    "	setp.lt.u64 	%p3, %rd40, %rd12;\n"
    "	mov.u64 	%rd41, %rd16;\n"
    "	@%p3 bra 	$L__BB1_2;\n"
    "\n"
    "$L__BB1_4:\n"
    "	shl.b32 	%r9, %r2, 3;\n"
    "	mov.u32 	%r10, _ZZ25imexprobe_pattern_compareE5first;\n"
    "	add.s32 	%r3, %r10, %r9;\n"
    "	st.shared.u64 	[%r3], %rd41;\n"
    "	bar.sync 	0;\n"
    "	shr.u32 	%r13, %r1, 1;\n"
    "	setp.eq.s32 	%p4, %r13, 0;\n"
    "	@%p4 bra 	$L__BB1_9;\n"
    "\n"
    "$L__BB1_5:\n"
    "	setp.ge.u32 	%p5, %r2, %r13;\n"
    "	@%p5 bra 	$L__BB1_8;\n"
    "\n"
    "	shl.b32 	%r11, %r13, 3;\n"
    "	add.s32 	%r12, %r3, %r11;\n"
    "	ld.shared.u64 	%rd35, [%r3];\n"
    "	ld.shared.u64 	%rd10, [%r12];\n"
    "	setp.ge.u64 	%p6, %rd10, %rd35;\n"
    "	@%p6 bra 	$L__BB1_8;\n"
    "\n"
    "	st.shared.u64 	[%r3], %rd10;\n"
    "\n"
    "$L__BB1_8:\n"
    "	bar.sync 	0;\n"
    "	shr.u32 	%r13, %r13, 1;\n"
    "	setp.ne.s32 	%p7, %r13, 0;\n"
    "	@%p7 bra 	$L__BB1_5;\n"
    "\n"
    "$L__BB1_9:\n"
    "	setp.ne.s32 	%p8, %r2, 0;\n"
    "	@%p8 bra 	$L__BB1_11;\n"
    "\n"
    "	ld.shared.u64 	%rd36, [_ZZ25imexprobe_pattern_compareE5first];\n"
    "	cvta.to.global.u64 	%rd37, %rd15;\n"
    "	shl.b64 	%rd38, %rd2, 3;\n"
    "	add.s64 	%rd39, %rd37, %rd38;\n"
    "	st.global.u64 	[%rd39], %rd36;\n"
    "\n"
    "$L__BB1_11:\n"
    "	ret;\n"
    "\n"
    "}\n"
    "\n"
/* PTX end */
    ;
/* clang-format on */

/* Loads the fill and compare kernels into the calling thread's current context: CUDA_SUCCESS, *fill and *compare,
 * or why not (no module entry points in this driver, a PTX it cannot compile). */
static inline CUresult pattern_kernel_load(CUmodule *module, CUfunction *fill, CUfunction *compare) {
    if (!cu.cuModuleLoadData || !cu.cuModuleGetFunction || !cu.cuLaunchKernel || !cu.cuModuleUnload)
        return CUDA_ERROR_NOT_FOUND;
    CUresult rc = cu.cuModuleLoadData(module, PATTERN_PTX);
    if (rc != CUDA_SUCCESS) return rc;
    rc = cu.cuModuleGetFunction(fill, *module, PATTERN_KERNEL_NAME);
    if (rc == CUDA_SUCCESS) rc = cu.cuModuleGetFunction(compare, *module, PATTERN_COMPARE_NAME);
    if (rc != CUDA_SUCCESS) cu.cuModuleUnload(*module);
    return rc;
}

/* Fills [ptr, ptr + size) with the words of `seed` from index 0 and waits for it: the next reader may be another
 * process (the peer's verify), which must see every word. */
static inline CUresult pattern_kernel_fill(CUfunction fn, CUdeviceptr ptr, size_t size, uint64_t seed) {
    unsigned long long words = size / 8, first = 0, s = seed;
    CUdeviceptr p = ptr;
    unsigned int block = 256;
    unsigned long long blocks = (words + block - 1) / block;
    unsigned int grid = blocks > 1024 ? 1024 : (unsigned int)blocks;
    void *params[] = {&p, &words, &s, &first};
    CUresult rc = cu.cuLaunchKernel(fn, grid, 1, 1, block, 1, 1, 0, NULL, params, NULL);
    return rc == CUDA_SUCCESS ? cu.cuCtxSynchronize() : rc;
}

/* Compares [ptr, ptr + size) with the words of `seed` on the GPU and waits: *first_bad = index of the first word
 * that differs, or -1. `answer` is page-locked host memory of PATTERN_COMPARE_BLOCKS words (cuMemHostAlloc: under
 * unified addressing the kernel writes it directly), one word per block. */
static inline CUresult pattern_kernel_compare(CUfunction fn, CUdeviceptr ptr, size_t size, uint64_t seed,
                                              uint64_t *answer, long long *first_bad) {
    unsigned long long words = size / 8, first = 0, s = seed;
    CUdeviceptr p = ptr;
    unsigned long long *out = (unsigned long long *)answer;
    unsigned int block = 256;
    unsigned long long blocks = (words + block - 1) / block;
    unsigned int grid = blocks > PATTERN_COMPARE_BLOCKS ? PATTERN_COMPARE_BLOCKS : (unsigned int)blocks;
    void *params[] = {&p, &words, &s, &first, &out};
    *first_bad = -1;
    CUresult rc = cu.cuLaunchKernel(fn, grid, 1, 1, block, 1, 1, 0, NULL, params, NULL);
    if (rc == CUDA_SUCCESS) rc = cu.cuCtxSynchronize();
    if (rc != CUDA_SUCCESS) return rc;
    unsigned long long least = ~0ULL;
    for (unsigned int b = 0; b < grid; b++)
        if (answer[b] < least) least = answer[b];
    if (least < words) *first_bad = (long long)least;
    return CUDA_SUCCESS;
}

#endif
