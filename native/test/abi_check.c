/*
 * Compares our hand-written CUDA/NVML declarations with the vendor headers, entry by entry.
 * Prints one line per entry and exits 1 on any difference (or when the tables do not line up).
 */
#include <stdio.h>
#include <string.h>
#include "abi_entries.h"

extern const struct abi_entry abi_ours_cuda[], abi_real_cuda[], abi_ours_nvml[], abi_real_nvml[];

static int compare(const char *what, const struct abi_entry *ours, const struct abi_entry *real) {
    if (real[0].name == NULL) {
        printf("%s: vendor header not available, skipped\n", what);
        return 0;
    }
    int bad = 0, n = 0;
    for (; ours[n].name; n++) {
        if (!real[n].name || strcmp(ours[n].name, real[n].name) != 0) {
            printf("MISMATCH %s: tables differ at entry %d\n", what, n);
            return 1;
        }
        int same = ours[n].value == real[n].value;
        printf("%s %s %s = %lld%s%lld\n", same ? "ok" : "MISMATCH", what, ours[n].name, ours[n].value,
               same ? " == " : " but vendor header says ", real[n].value);
        bad += !same;
    }
    printf("%s: %d entries, %d mismatches\n", what, n, bad);
    return bad != 0;
}

int main(void) {
    int bad = compare("cuda", abi_ours_cuda, abi_real_cuda);
    bad |= compare("nvml", abi_ours_nvml, abi_real_nvml);
    return bad;
}
