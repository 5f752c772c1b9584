/* The test pattern both agents compute from a seed: word i (little-endian 64-bit) = splitmix64 of
 * seed + (i + 1) * golden ratio. Cheap, position-dependent (a shifted or stale buffer fails), and
 * different for every seed. Moved through a host staging buffer in chunks so any size works.
 * Shared by the shim (jni_bridge.c) and the benchmark's driver floor (bench/driver_floor.c). */
#ifndef IMEXPROBE_PATTERN_H
#define IMEXPROBE_PATTERN_H

#include <stdint.h>

#define PATTERN_CHUNK ((size_t)4 << 20)

static inline uint64_t pattern_word(uint64_t seed, uint64_t index) {
    uint64_t z = seed + (index + 1) * 0x9E3779B97F4A7C15ULL;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
}

#endif
