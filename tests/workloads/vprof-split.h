/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* vprof-split and its library (vprof-split.c, vprof-split-lib.c): work split in known shares between
 * functions of a program and of a shared library, with recursion through both, and its own truth: the thread
 * CPU time spent in each function, inclusive and exclusive. */
#include <stdint.h>
#include <time.h>

/* No inlining, and no clones either (GCC's split_alpha.constprop.0 would be a name the truth lacks). */
#define SPLIT_NOINLINE __attribute__((noinline, noclone))
#define SPLIT_INLINE static inline __attribute__((always_inline, artificial))

/* The recursion: split_recurse at depths SPLIT_DEPTH..0, split_lib_bounce at SPLIT_DEPTH..1 between them. */
#define SPLIT_DEPTH 4
/* A unit of work: about 0.1 ms, so that a round is some 10 ms and the clock reads around each piece of work
 * (a system call each) stay a small share of it. */
#define SPLIT_ITERATIONS_PER_UNIT 100000

enum split_function {
        SPLIT_ROUND,
        SPLIT_ALPHA,
        SPLIT_LIB_OUTER,
        SPLIT_LIB_INNER,
        SPLIT_RECURSE,
        SPLIT_LIB_BOUNCE,
        SPLIT_BETA,
        _SPLIT_FUNCTION_MAX,
};

/* The truth, in nanoseconds of the thread's CPU time: inclusive from outside the outermost call of a
 * function, exclusive around the loops it spins in itself. The library holds it; both modules add to it. */
struct split_truth {
        uint64_t inclusive_ns[_SPLIT_FUNCTION_MAX];
        uint64_t exclusive_ns[_SPLIT_FUNCTION_MAX];
};
extern struct split_truth split_truth;

typedef uint64_t (*split_callback)(unsigned depth, uint64_t x);

/* The library's functions. */
uint64_t split_lib_outer(uint64_t x);
uint64_t split_lib_bounce(unsigned depth, uint64_t x, split_callback fn);

/* The helpers below are the measure, not the work: artificial, so that a profiler expanding inlined functions
 * (vprof, from DWARF: COUNTING.md) counts their code in the function they are inlined into, as the truth does. */
SPLIT_INLINE uint64_t split_cpu_ns(void)
{
        struct timespec ts;

        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
        return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* units of the same loop: the time of a piece of work is in proportion to its units in every function. */
SPLIT_INLINE uint64_t split_spin(uint64_t x, unsigned units)
{
        for (uint64_t i = 0; i < (uint64_t)units * SPLIT_ITERATIONS_PER_UNIT; i++) {
                x = x * 6364136223846793005ull + 1442695040888963407ull;
                __asm__ volatile("" : "+r"(x));
        }
        return x;
}

/* Work of the calling function itself, timed: its exclusive time. */
SPLIT_INLINE uint64_t split_self(enum split_function f, uint64_t x, unsigned units)
{
        uint64_t t = split_cpu_ns();

        x = split_spin(x, units);
        split_truth.exclusive_ns[f] += split_cpu_ns() - t;
        return x;
}

/* A call timed from outside: the callee's inclusive time (and its exclusive time, for a leaf). */
#define SPLIT_TIMED_CALL(f, call)                                                                           \
        ({                                                                                                  \
                uint64_t t_ = split_cpu_ns(), r_ = (call);                                                  \
                split_truth.inclusive_ns[f] += split_cpu_ns() - t_;                                         \
                r_;                                                                                         \
        })
#define SPLIT_TIMED_LEAF(f, call)                                                                           \
        ({                                                                                                  \
                uint64_t t_ = split_cpu_ns(), r_ = (call), d_;                                              \
                d_ = split_cpu_ns() - t_;                                                                   \
                split_truth.inclusive_ns[f] += d_;                                                          \
                split_truth.exclusive_ns[f] += d_;                                                          \
                r_;                                                                                         \
        })
