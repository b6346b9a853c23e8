/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Two libraries from this file that vprof-dlopen loads in turn at the same address (tests/integration/
 * test_maps_change.py), built without frame pointers, with call frame information: A (-DPAIR_A) has its hot
 * function first and a decoy that never runs second; B the decoy first and its hot function second. The two
 * functions have the same code but for a constant, so each one's hot loop lies where the other library has its
 * decoy: a sample named after the library that is not mapped any more is named after a decoy. */
#include <stdint.h>

#define LOOP(name, k)                                                          \
        __attribute__((noinline, used)) uint64_t name(uint64_t x, unsigned n) \
        {                                                                      \
                for (unsigned i = 0; i < n; i++) {                             \
                        x = x * 6364136223846793005ull + (k);                  \
                        __asm__ volatile("" : "+r"(x));                        \
                }                                                              \
                return x;                                                      \
        }

#ifdef PAIR_A
LOOP(pair_spin_a, 1442695040888963407ull)
LOOP(pair_decoy_a, 1442695040888963409ull)
#define SPIN pair_spin_a
#else
LOOP(pair_decoy_b, 1442695040888963411ull)
LOOP(pair_spin_b, 1442695040888963413ull)
#define SPIN pair_spin_b
#endif

uint64_t dlopen_plugin_work(uint64_t x, unsigned n)
{
        uint64_t r = SPIN(x, n);

        __asm__ volatile("" : "+r"(r)); /* not a tail call */
        return r ^ (r >> 9);
}
