/* The shim's pattern loops (native/src/pattern.h), compiled by gcc for gpu/staging_bench.cu (nvcc's front end
 * does not take target_clones). */
#include "pattern.h"
void sp_fill(uint64_t *buf, size_t words, uint64_t seed) { pattern_fill(buf, words, seed, 0); }
size_t sp_mismatch(const uint64_t *buf, size_t words, uint64_t seed) { return pattern_first_mismatch(buf, words, seed, 0); }
