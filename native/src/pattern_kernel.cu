// The pattern fill as a kernel: each thread writes words i, i + stride, ... of pattern.h's pattern_word, so the
// device holds the very words pattern_fill would have copied from the host. native/src/pattern_kernel.sh compiles
// it to PTX (the driver JITs it for the GPU at hand) and writes pattern_kernel.h; the shim loads it per context.
extern "C" __global__ void imexprobe_pattern_fill(unsigned long long *p, unsigned long long words,
                                                  unsigned long long seed, unsigned long long first_index) {
    unsigned long long stride = (unsigned long long)gridDim.x * blockDim.x;
    for (unsigned long long i = (unsigned long long)blockIdx.x * blockDim.x + threadIdx.x; i < words; i += stride) {
        unsigned long long z = seed + (first_index + i + 1) * 0x9E3779B97F4A7C15ULL;
        z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
        z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
        p[i] = z ^ (z >> 31);
    }
}
