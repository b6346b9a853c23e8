/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The library that vprof-dlopen loads and unloads again and again, built without frame pointers: once with
 * call frame information, once without any (tests/workloads/meson.build). */
#include <stdint.h>

__attribute__((noinline)) static uint64_t plugin_spin(uint64_t x, unsigned n)
{
        for (unsigned i = 0; i < n; i++) {
                x = x * 6364136223846793005ull + 1442695040888963407ull;
                __asm__ volatile("" : "+r"(x));
        }
        return x;
}

uint64_t dlopen_plugin_work(uint64_t x, unsigned n)
{
        uint64_t r = plugin_spin(x, n);

        __asm__ volatile("" : "+r"(r)); /* not a tail call */
        return r ^ (r >> 9);
}
