/*
 * The shim's view of the driver: one function pointer per entry point of include/entry_points.h (resolved
 * through cuGetProcAddress with that list's API version, NVML's with dlsym) and what loading found.
 */
#ifndef IMEXPROBE_LOADER_H
#define IMEXPROBE_LOADER_H

#include "cuda_abi.h"
#include "nvml_abi.h"
#include "entry_points.h"

#define DECLARE_CUDA_POINTER(name, version, need) PFN_##name name;
#define DECLARE_NVML_POINTER(name, need) PFN_##name name;
struct cuda_api { CUDA_ENTRY_POINTS(DECLARE_CUDA_POINTER) };
struct nvml_api { NVML_ENTRY_POINTS(DECLARE_NVML_POINTER) };
#undef DECLARE_CUDA_POINTER
#undef DECLARE_NVML_POINTER

extern struct cuda_api cu;
extern struct nvml_api nvml;

/* What opening the libraries found; the strings live as long as the process. */
struct load_report {
    int cuda_loaded;          /* every REQUIRED CUDA entry point resolved */
    int nvml_loaded;          /* every REQUIRED NVML entry point resolved */
    const char *cuda_library; /* the file that was opened, or NULL */
    const char *cuda_message; /* why not loaded / which optional symbols are missing; NULL when all is well */
    const char *nvml_library;
    const char *nvml_message;
    const char *(*fake_info)(void); /* fakecudaInfo of the fake driver; NULL with the real one */
};

/* Opens both libraries once (later calls return the first result; the arguments of later calls are ignored).
 * cuda_path / nvml_path: a file to dlopen, or NULL for the sonames. */
const struct load_report *imexprobe_load(const char *cuda_path, const char *nvml_path);

#endif
