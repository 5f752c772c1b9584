/* The entry list against our hand-written headers. */
#include <stddef.h>
#include "cuda_abi.h"
#include "nvml_abi.h"
#include "abi_entries.h"

const struct abi_entry abi_ours_cuda[] = {CUDA_ABI_ENTRIES(ABI_V, ABI_S, ABI_O){0, 0}};
const struct abi_entry abi_ours_nvml[] = {NVML_ABI_ENTRIES(ABI_V, ABI_S, ABI_O){0, 0}};
