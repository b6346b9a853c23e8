/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* Random sample streams for the profile tests: what a target's drain feeds a Profile, in every shape the counting
 * rules tell apart (user and kernel samples, kernel-only stacks, frameless samples, blocked and preempted time,
 * recursion, lines of functions, threads that rename themselves, functions that get their mangled name late or
 * never get samples),
 * with stacks that repeat, as real ones do. Repeatable: the state is the caller's. */

#include <check.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "profile.h"

#define RANDOM_USER_FUNCTIONS 60
#define RANDOM_KERNEL_FUNCTIONS 12
#define RANDOM_POOL 40
#define RANDOM_MAX_FRAMES 24

typedef struct RandomStream {
        uint64_t state;
        bool off_cpu; /* also blocked and preempted intervals */
        /* Stacks drawn again and again, as names: function indices, kernel ones first. */
        struct {
                uint32_t n, n_kernel;
                uint32_t fn[RANDOM_MAX_FRAMES];
        } pool[RANDOM_POOL];
} RandomStream;

static inline uint64_t random_next(RandomStream *r)
{
        /* xorshift64* */
        r->state ^= r->state >> 12;
        r->state ^= r->state << 25;
        r->state ^= r->state >> 27;
        return r->state * 0x2545f4914f6cdd1du;
}

static inline uint32_t random_below(RandomStream *r, uint32_t n)
{
        return (uint32_t)(random_next(r) >> 33) % n;
}

/* A stack of function indices: kernel ones are RANDOM_USER_FUNCTIONS.., innermost first. */
static inline void random_stack(RandomStream *r, uint32_t *fn, uint32_t *ret_n, uint32_t *ret_n_kernel)
{
        uint32_t n_kernel = random_below(r, 4) == 0 ? 1 + random_below(r, 3) : 0;
        uint32_t n_user = random_below(r, 12) == 0 ? 0 : 1 + random_below(r, RANDOM_MAX_FRAMES - 4);

        for (uint32_t i = 0; i < n_kernel; i++)
                fn[i] = RANDOM_USER_FUNCTIONS + random_below(r, RANDOM_KERNEL_FUNCTIONS);
        for (uint32_t i = 0; i < n_user; i++)
                /* Few distinct functions deep down: recursion. */
                fn[n_kernel + i] = random_below(r, i > 4 ? 8 : RANDOM_USER_FUNCTIONS);
        *ret_n = n_kernel + n_user;
        *ret_n_kernel = n_kernel;
}

static inline void random_stream_init(RandomStream *r, uint64_t seed, bool off_cpu)
{
        *r = (RandomStream){ .state = seed * 0x9e3779b97f4a7c15u + 1, .off_cpu = off_cpu };
        for (size_t i = 0; i < RANDOM_POOL; i++)
                random_stack(r, r->pool[i].fn, &r->pool[i].n, &r->pool[i].n_kernel);
}

static inline void random_function_name(uint32_t index, char module[32], char function[32])
{
        if (index >= RANDOM_USER_FUNCTIONS) {
                snprintf(module, 32, "[kernel]");
                snprintf(function, 32, "k%u", index - RANDOM_USER_FUNCTIONS);
        } else {
                snprintf(module, 32, "lib%u.so", index % 5);
                snprintf(function, 32, "f%u", index);
        }
}

/* One sample, counted in p; with ret_stack_id, through profile_add_sample_stack(). The frames go to
 * frames[RANDOM_MAX_FRAMES], which *ret points into. */
static inline void random_sample(RandomStream *r, Profile *p, uint32_t frames[RANDOM_MAX_FRAMES], ProfileSample *ret,
                                 uint32_t *ret_stack_id)
{
        static const char *const thread_names[] = { "main", "worker", "io", "renamed" };
        uint32_t fn[RANDOM_MAX_FRAMES], n, n_kernel, kind_draw;
        char module[32], function[32];
        ProfileSample s = { .frames = frames };

        if (random_below(r, 5) == 0)
                random_stack(r, fn, &n, &n_kernel);
        else {
                uint32_t i = random_below(r, random_below(r, 2) ? 6 : RANDOM_POOL);
                memcpy(fn, r->pool[i].fn, sizeof(fn));
                n = r->pool[i].n;
                n_kernel = r->pool[i].n_kernel;
        }
        for (uint32_t i = 0; i < n; i++) {
                /* Some user frames inlined into the next one: the same name, a row apart from the called one. */
                bool inlined = i >= n_kernel && i + 1 < n && fn[i] % 5 == 1 && fn[i + 1] % 2 == 0;

                /* Some at a line of their function, as Python frames are: counted in the function. */
                bool line = i >= n_kernel && !inlined && fn[i] % 6 == 4;

                random_function_name(fn[i], module, function);
                if (line)
                        ck_assert_int_eq(profile_intern_line(p, module, function, 1 + random_below(r, 3), &frames[i]),
                                         0);
                else
                        ck_assert_int_eq(profile_intern_frame(p, module, function, inlined, &frames[i]), 0);
                /* Some functions get their symbol's name, now or later. */
                if (fn[i] % 7 == 3 && random_below(r, 3) == 0) {
                        char mangled[48];
                        snprintf(mangled, sizeof(mangled), "_Z%zu%s", strlen(function), function);
                        ck_assert_int_eq(profile_set_mangled(p, frames[i], mangled), 0);
                }
        }
        /* A function interned for nothing now and then: its sample failed, or its frame was cut. */
        if (random_below(r, 50) == 0) {
                uint32_t unused;
                snprintf(function, sizeof(function), "unused%u", random_below(r, 1000));
                ck_assert_int_eq(profile_intern_function(p, "libunused.so", function, &unused), 0);
        }
        s.n_frames = n;
        s.n_kernel_frames = n_kernel;
        s.tid = 100 + random_below(r, 5);
        s.thread_name = random_below(r, 8) == 0 ? NULL : thread_names[(s.tid + random_below(r, 40) / 39) % 4];
        kind_draw = random_below(r, 10);
        if (r->off_cpu && kind_draw < 3) {
                s.kind = kind_draw == 0 ? PROFILE_SAMPLE_PREEMPTED : PROFILE_SAMPLE_BLOCKED;
                s.duration_ns = 1 + random_next(r) % 50000000;
        } else
                s.kind = n_kernel > 0 ? PROFILE_SAMPLE_KERNEL : PROFILE_SAMPLE_USER;
        if (ret_stack_id)
                ck_assert_int_eq(profile_add_sample_stack(p, &s, ret_stack_id), 0);
        else
                ck_assert_int_eq(profile_add_sample(p, &s), 0);
        *ret = s;
}
