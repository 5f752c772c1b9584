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
    "\n"
/* PTX end */
    ;
/* clang-format on */

/* Loads the fill kernel into the calling thread's current context: CUDA_SUCCESS and *fn, or why not (no module
 * entry points in this driver, a PTX it cannot compile). */
static inline CUresult pattern_kernel_load(CUmodule *module, CUfunction *fn) {
    if (!cu.cuModuleLoadData || !cu.cuModuleGetFunction || !cu.cuLaunchKernel || !cu.cuModuleUnload)
        return CUDA_ERROR_NOT_FOUND;
    CUresult rc = cu.cuModuleLoadData(module, PATTERN_PTX);
    if (rc != CUDA_SUCCESS) return rc;
    rc = cu.cuModuleGetFunction(fn, *module, PATTERN_KERNEL_NAME);
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

#endif
