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

// The pattern's check on the GPU: each block writes the index of the first word of its share that differs from the
// pattern (all ones when none does) into block_first[blockIdx.x], which the host reads after a synchronisation and
// takes the least of. block_first is page-locked host memory (reachable from every context under unified
// addressing), so nothing of the GPU's memory is taken for the answer. blockDim.x must be a power of two <= 256.
extern "C" __global__ void imexprobe_pattern_compare(const unsigned long long *p, unsigned long long words,
                                                     unsigned long long seed, unsigned long long first_index,
                                                     unsigned long long *block_first) {
    __shared__ unsigned long long first[256];
    unsigned long long stride = (unsigned long long)gridDim.x * blockDim.x;
    unsigned long long mine = ~0ULL;
    for (unsigned long long i = (unsigned long long)blockIdx.x * blockDim.x + threadIdx.x; i < words; i += stride) {
        unsigned long long z = seed + (first_index + i + 1) * 0x9E3779B97F4A7C15ULL;
        z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
        z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
        if (p[i] != (z ^ (z >> 31))) {
            mine = i; // a thread's words rise, so its first mismatch is its least
            break;
        }
    }
    first[threadIdx.x] = mine;
    __syncthreads();
    for (unsigned int s = blockDim.x / 2; s > 0; s >>= 1) {
        if (threadIdx.x < s && first[threadIdx.x + s] < first[threadIdx.x]) first[threadIdx.x] = first[threadIdx.x + s];
        __syncthreads();
    }
    if (threadIdx.x == 0) block_first[blockIdx.x] = first[0];
}
