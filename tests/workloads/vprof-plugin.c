/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* A library that vprof-demo --plugin loads with dlopen() after it was attached: its code appears in the
 * process only then, so the daemon must re-read the maps to name it. */
#include <stdint.h>

__attribute__((noinline)) uint64_t plugin_hot(uint64_t iterations, uint64_t seed)
{
        uint64_t x = seed;

        for (uint64_t i = 0; i < iterations; i++) {
                x = x * 6364136223846793005ull + 1442695040888963407ull;
                __asm__ volatile("" : "+r"(x));
        }
        return x;
}
