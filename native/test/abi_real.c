/* The entry list against the vendor headers: cuda.h always, nvml.h when WITH_NVML_H is defined. */
#include <stddef.h>
#include <cuda.h>
#include "abi_entries.h"

const struct abi_entry abi_real_cuda[] = {CUDA_ABI_ENTRIES(ABI_V, ABI_S, ABI_O){0, 0}};
#ifdef WITH_NVML_H
#include <nvml.h>
const struct abi_entry abi_real_nvml[] = {NVML_ABI_ENTRIES(ABI_V, ABI_S, ABI_O){0, 0}};
#else
const struct abi_entry abi_real_nvml[] = {{0, 0}};
#endif
