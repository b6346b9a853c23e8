/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Inlined functions for the inline reader (common/symbols/inline-frames.c): built by GCC with -O2 -g and without
 * frame pointers, run_batch() holds two always_inline stages, and stage_hash() holds mix_round(), so an address
 * of run_batch() expands into up to three functions (mix_round, stage_hash, run_batch). Spins for argv[1]
 * seconds (default 1) and prints a checksum, so that the work cannot be dropped. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static inline __attribute__((always_inline)) uint64_t mix_round(uint64_t h, uint64_t v)
{
        h ^= v + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2);
        return h * 0xff51afd7ed558ccdull;
}

static inline __attribute__((always_inline)) uint64_t stage_hash(uint64_t seed, unsigned n)
{
        uint64_t h = seed;

        for (unsigned i = 0; i < n; i++)
                h = mix_round(h, i);
        return h;
}

static inline __attribute__((always_inline)) uint64_t stage_sum(uint64_t seed, unsigned n)
{
        uint64_t s = seed;

        for (unsigned i = 0; i < n; i++)
                s += (s >> 3) ^ i;
        return s;
}

__attribute__((noinline)) uint64_t run_batch(uint64_t seed);
__attribute__((noinline)) uint64_t run_batch(uint64_t seed)
{
        uint64_t h = stage_hash(seed, 20000);

        return stage_sum(h, 10000);
}

static double now(void)
{
        struct timespec ts;

        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
        double seconds = argc > 1 ? atof(argv[1]) : 1.0, end = now() + seconds;
        uint64_t sum = 0;

        do
                sum = run_batch(sum);
        while (now() < end);
        printf("%llu\n", (unsigned long long)sum);
        return 0;
}
