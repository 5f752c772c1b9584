/*
 * Function types, one per entry point, named after the symbol cuGetProcAddress resolves: PFN_<name>.
 * Included at the end of cuda_abi.h, whose types they use. test/abi_real.c includes it after the toolkit's
 * cuda.h with IMEXPROBE_PFN renaming them, to assert each is the toolkit's PFN_<name>_v<version>.
 */
#ifndef IMEXPROBE_CUDA_PFN_H
#define IMEXPROBE_CUDA_PFN_H

#ifndef IMEXPROBE_PFN
#define IMEXPROBE_PFN(name) PFN_##name
#endif

typedef CUresult (*IMEXPROBE_PFN(cuGetProcAddress_v2))(const char *symbol, void **pfn, int cudaVersion, cuuint64_t flags,
                                            CUdriverProcAddressQueryResult *symbolStatus);
typedef CUresult (*IMEXPROBE_PFN(cuGetProcAddress_v1))(const char *symbol, void **pfn, int cudaVersion, cuuint64_t flags);
typedef CUresult (*IMEXPROBE_PFN(cuInit))(unsigned int flags);
typedef CUresult (*IMEXPROBE_PFN(cuDriverGetVersion))(int *version);
typedef CUresult (*IMEXPROBE_PFN(cuGetErrorName))(CUresult error, const char **name);
typedef CUresult (*IMEXPROBE_PFN(cuGetErrorString))(CUresult error, const char **text);
typedef CUresult (*IMEXPROBE_PFN(cuDeviceGetCount))(int *count);
typedef CUresult (*IMEXPROBE_PFN(cuDeviceGet))(CUdevice *device, int ordinal);
typedef CUresult (*IMEXPROBE_PFN(cuDeviceGetName))(char *name, int len, CUdevice dev);
typedef CUresult (*IMEXPROBE_PFN(cuDeviceGetUuid))(CUuuid *uuid, CUdevice dev);
typedef CUresult (*IMEXPROBE_PFN(cuDeviceGetPCIBusId))(char *pciBusId, int len, CUdevice dev);
typedef CUresult (*IMEXPROBE_PFN(cuDeviceGetAttribute))(int *pi, CUdevice_attribute attrib, CUdevice dev);
typedef CUresult (*IMEXPROBE_PFN(cuDevicePrimaryCtxRetain))(CUcontext *pctx, CUdevice dev);
typedef CUresult (*IMEXPROBE_PFN(cuDevicePrimaryCtxRelease))(CUdevice dev);
typedef CUresult (*IMEXPROBE_PFN(cuCtxSetCurrent))(CUcontext ctx);
typedef CUresult (*IMEXPROBE_PFN(cuCtxSynchronize))(void);
typedef CUresult (*IMEXPROBE_PFN(cuMemGetInfo))(size_t *free, size_t *total);
typedef CUresult (*IMEXPROBE_PFN(cuMemGetAllocationGranularity))(size_t *granularity, const CUmemAllocationProp *prop,
                                                      CUmemAllocationGranularity_flags option);
typedef CUresult (*IMEXPROBE_PFN(cuMemCreate))(CUmemGenericAllocationHandle *handle, size_t size, const CUmemAllocationProp *prop,
                                    unsigned long long flags);
typedef CUresult (*IMEXPROBE_PFN(cuMemRelease))(CUmemGenericAllocationHandle handle);
typedef CUresult (*IMEXPROBE_PFN(cuMemExportToShareableHandle))(void *shareableHandle, CUmemGenericAllocationHandle handle,
                                                     CUmemAllocationHandleType handleType, unsigned long long flags);
typedef CUresult (*IMEXPROBE_PFN(cuMemImportFromShareableHandle))(CUmemGenericAllocationHandle *handle, void *osHandle,
                                                       CUmemAllocationHandleType shHandleType);
typedef CUresult (*IMEXPROBE_PFN(cuMemAddressReserve))(CUdeviceptr *ptr, size_t size, size_t alignment, CUdeviceptr addr,
                                            unsigned long long flags);
typedef CUresult (*IMEXPROBE_PFN(cuMemAddressFree))(CUdeviceptr ptr, size_t size);
typedef CUresult (*IMEXPROBE_PFN(cuMemMap))(CUdeviceptr ptr, size_t size, size_t offset, CUmemGenericAllocationHandle handle,
                                 unsigned long long flags);
typedef CUresult (*IMEXPROBE_PFN(cuMemUnmap))(CUdeviceptr ptr, size_t size);
typedef CUresult (*IMEXPROBE_PFN(cuMemSetAccess))(CUdeviceptr ptr, size_t size, const CUmemAccessDesc *desc, size_t count);
typedef CUresult (*IMEXPROBE_PFN(cuMemcpyHtoD))(CUdeviceptr dst, const void *src, size_t bytes);
typedef CUresult (*IMEXPROBE_PFN(cuMemcpyDtoH))(void *dst, CUdeviceptr src, size_t bytes);
typedef CUresult (*IMEXPROBE_PFN(cuMemHostAlloc))(void **pp, size_t bytesize, unsigned int flags);
typedef CUresult (*IMEXPROBE_PFN(cuMemFreeHost))(void *p);
typedef CUresult (*IMEXPROBE_PFN(cuModuleLoadData))(CUmodule *module, const void *image);
typedef CUresult (*IMEXPROBE_PFN(cuModuleUnload))(CUmodule hmod);
typedef CUresult (*IMEXPROBE_PFN(cuModuleGetFunction))(CUfunction *hfunc, CUmodule hmod, const char *name);
typedef CUresult (*IMEXPROBE_PFN(cuLaunchKernel))(CUfunction f, unsigned int gridDimX, unsigned int gridDimY,
                                                  unsigned int gridDimZ, unsigned int blockDimX, unsigned int blockDimY,
                                                  unsigned int blockDimZ, unsigned int sharedMemBytes, CUstream hStream,
                                                  void **kernelParams, void **extra);
typedef CUresult (*IMEXPROBE_PFN(cuMemcpyDtoDAsync))(CUdeviceptr dst, CUdeviceptr src, size_t bytes, CUstream stream);
typedef CUresult (*IMEXPROBE_PFN(cuMemcpyDtoHAsync))(void *dst, CUdeviceptr src, size_t bytes, CUstream stream);
typedef CUresult (*IMEXPROBE_PFN(cuStreamCreate))(CUstream *stream, unsigned int flags);
typedef CUresult (*IMEXPROBE_PFN(cuStreamDestroy))(CUstream stream);
typedef CUresult (*IMEXPROBE_PFN(cuStreamSynchronize))(CUstream stream);
typedef CUresult (*IMEXPROBE_PFN(cuEventCreate))(CUevent *event, unsigned int flags);
typedef CUresult (*IMEXPROBE_PFN(cuEventDestroy))(CUevent event);
typedef CUresult (*IMEXPROBE_PFN(cuEventRecord))(CUevent event, CUstream stream);
typedef CUresult (*IMEXPROBE_PFN(cuEventSynchronize))(CUevent event);
typedef CUresult (*IMEXPROBE_PFN(cuEventElapsedTime))(float *ms, CUevent start, CUevent end);

#endif
