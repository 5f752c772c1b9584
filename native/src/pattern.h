/* The test pattern both agents compute from a seed: word i (little-endian 64-bit) = splitmix64 of
 * seed + (i + 1) * golden ratio. Cheap, position-dependent (a shifted or stale buffer fails), and
 * different for every seed. Moved through a host staging buffer in chunks so any size works.
 * Shared by the shim (jni_bridge.c) and the benchmark's driver floor (bench/driver_floor.c). */
#ifndef IMEXPROBE_PATTERN_H
#define IMEXPROBE_PATTERN_H

#include <stddef.h>
#include <stdint.h>

/* One staging buffer's size: the shim and the floor keep page-locked buffers of this size (jni_bridge.c). */
#define PATTERN_CHUNK ((size_t)2 << 20)

static inline uint64_t pattern_word(uint64_t seed, uint64_t index) {
    uint64_t z = seed + (index + 1) * 0x9E3779B97F4A7C15ULL;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
}

/* The loops over a chunk. Vectorised where the CPU allows: built once per x86-64 level and picked at load time
 * (AVX-512 has the 64-bit multiply the words need; AVX2 emulates it), at -O3 since -O2 does not vectorise them.
 * Measured on a 2 MiB buffer (docs/performance.md): scalar 0.43-0.50 ms, AVX2 0.30 ms on an EPYC. */
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
#define PATTERN_LOOP __attribute__((target_clones("arch=x86-64-v4", "arch=x86-64-v3", "default"), optimize("O3")))
#elif defined(__GNUC__) && !defined(__clang__)
#define PATTERN_LOOP __attribute__((optimize("O3")))
#else
#define PATTERN_LOOP
#endif

PATTERN_LOOP __attribute__((unused)) static void pattern_fill(uint64_t *buf, size_t words, uint64_t seed,
                                                              uint64_t first_index) {
    for (size_t i = 0; i < words; i++) buf[i] = pattern_word(seed, first_index + i);
}

/* Index of the first word that differs, or `words` when all match. The whole chunk is compared without an early
 * exit (that keeps the loop vectorisable); only a mismatch pays for the second, scalar pass that finds it. */
PATTERN_LOOP __attribute__((unused)) static size_t pattern_first_mismatch(const uint64_t *buf, size_t words,
                                                                          uint64_t seed, uint64_t first_index) {
    uint64_t diff = 0;
    for (size_t i = 0; i < words; i++) diff |= buf[i] ^ pattern_word(seed, first_index + i);
    if (diff == 0) return words;
    for (size_t i = 0; i < words; i++)
        if (buf[i] != pattern_word(seed, first_index + i)) return i;
    return words;
}

#endif
