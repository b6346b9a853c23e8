/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The shared library of vprof-split: a function with work of its own and a leaf under it, and the library's
 * half of the recursion, which calls the program back. It keeps the truth that both add to. */
#include "vprof-split.h"

struct split_truth split_truth;

/* Hidden, so that the call from split_lib_outer is direct, not through the PLT. */
__attribute__((visibility("hidden"))) SPLIT_NOINLINE uint64_t split_lib_inner(uint64_t x)
{
        return split_spin(x, 20);
}

SPLIT_NOINLINE uint64_t split_lib_outer(uint64_t x)
{
        uint64_t r;

        x = split_self(SPLIT_LIB_OUTER, x, 10);
        r = SPLIT_TIMED_LEAF(SPLIT_LIB_INNER, split_lib_inner(x));
        __asm__ volatile("" : "+r"(r)); /* not a tail call */
        return r ^ x;
}

SPLIT_NOINLINE uint64_t split_lib_bounce(unsigned depth, uint64_t x, split_callback fn)
{
        uint64_t r;

        x = split_self(SPLIT_LIB_BOUNCE, x, 2);
        r = fn(depth - 1, x);
        __asm__ volatile("" : "+r"(r)); /* not a tail call: every level stays on the stack */
        return r ^ depth;
}
