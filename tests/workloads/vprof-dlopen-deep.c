/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* A library that vprof-dlopen loads again and again (tests/integration/test_dlopen_first_samples.py): built by GCC,
 * -O2, without frame pointers, with call frame information. Its work spins at the bottom of a chain of DEEP_DEPTH
 * calls, each frame with some stack of its own: a frame-pointer walk from the spin loses the chain's callers (and
 * the stack window's few words cannot give them back), so only a walk by the library's CFI reaches main and
 * _start. Each load is a new mapping whose unwind table the BPF walk does not have at once. */
#include <stdint.h>

#define DEEP_DEPTH 24

__attribute__((noinline)) static uint64_t deep_spin(uint64_t x, unsigned n)
{
        for (unsigned i = 0; i < n; i++) {
                x = x * 6364136223846793005ull + 1442695040888963407ull;
                __asm__ volatile("" : "+r"(x));
        }
        return x;
}

__attribute__((noinline)) static uint64_t deep_call(unsigned level, uint64_t x, unsigned n)
{
        volatile uint64_t pad[6]; /* a frame of its own size: no caller is a fixed distance away */
        uint64_t r;

        pad[level % 6] = x;
        r = level == 0 ? deep_spin(x, n) : deep_call(level - 1, x + level, n);
        __asm__ volatile("" : "+r"(r)); /* not a tail call */
        return r ^ pad[level % 6];
}

uint64_t dlopen_plugin_work(uint64_t x, unsigned n)
{
        uint64_t r = deep_call(DEEP_DEPTH, x, n);

        __asm__ volatile("" : "+r"(r));
        return r ^ (r >> 7);
}
