/* The entry list against the vendor headers: cuda.h always, nvml.h when WITH_NVML_H is defined. */
#include <stddef.h>
#include <cuda.h>
#include <cudaTypedefs.h>
#include "abi_entries.h"

const struct abi_entry abi_real_cuda[] = {CUDA_ABI_ENTRIES(ABI_V, ABI_S, ABI_O){0, 0}};
#ifdef WITH_NVML_H
#include <nvml.h>
const struct abi_entry abi_real_nvml[] = {NVML_ABI_ENTRIES(ABI_V, ABI_S, ABI_O){0, 0}};
#else
const struct abi_entry abi_real_nvml[] = {{0, 0}};
#endif

/*
 * Signatures: our PFN_<name> (include/cuda_pfn.h, renamed ours_PFN_<name> here and written over the toolkit's
 * types) must be the toolkit's PFN_<name>_v<version> for the version in include/entry_points.h, the one the
 * loader asks cuGetProcAddress for. A wrong parameter list or the wrong version fails the compile.
 */
#define IMEXPROBE_PFN(name) ours_PFN_##name
#include "cuda_pfn.h"
#include "entry_points.h"

#define SAME_SIGNATURE(name, version, need)                                                   \
    _Static_assert(__builtin_types_compatible_p(ours_PFN_##name, PFN_##name##_v##version),    \
                   "PFN_" #name " differs from the toolkit's PFN_" #name "_v" #version);
CUDA_ENTRY_POINTS(SAME_SIGNATURE)
_Static_assert(__builtin_types_compatible_p(ours_PFN_cuGetProcAddress_v2, PFN_cuGetProcAddress_v12000),
               "PFN_cuGetProcAddress_v2 differs from the toolkit's PFN_cuGetProcAddress_v12000");
_Static_assert(__builtin_types_compatible_p(ours_PFN_cuGetProcAddress_v1, PFN_cuGetProcAddress_v11030),
               "PFN_cuGetProcAddress_v1 differs from the toolkit's PFN_cuGetProcAddress_v11030");
