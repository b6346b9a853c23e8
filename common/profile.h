/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stddef.h>
#include <stdint.h>

#include "macros.h"

/* The counting rules of one target, free of BPF and D-Bus (seed 004, "sampling data values"):
 *  - every sample adds one exclusive count to the function executing (the innermost frame) and one
 *    inclusive count to every *distinct* function on the stack, so recursion counts once per sample;
 *  - modules likewise: the innermost frame's module gets the exclusive count, every distinct module on the
 *    stack an inclusive count;
 *  - threads and the process count every sample once (their inclusive and exclusive counts are equal);
 *  - percents are against the total number of samples. */

typedef struct Profile Profile;

typedef enum ProfileSort {
        PROFILE_SORT_INCLUSIVE,
        PROFILE_SORT_EXCLUSIVE,
        _PROFILE_SORT_MAX,
        _PROFILE_SORT_INVALID = -1,
} ProfileSort;

ProfileSort profile_sort_from_string(const char *s);
const char *profile_sort_to_string(ProfileSort s);

typedef struct ProfileSample {
        uint32_t tid;
        const char *thread_name; /* may be NULL: the thread keeps its previous name */
        const uint32_t *frames;  /* function ids from profile_intern_function(), innermost first */
        size_t n_frames;         /* 0: the sample counts for the totals and the thread only */
} ProfileSample;

typedef struct ProfileRow {
        const char *name;   /* function, module or thread name; owned by the profile */
        const char *module; /* module of a function row, else NULL */
        uint32_t tid;       /* thread rows */
        uint64_t inclusive;
        uint64_t exclusive;
} ProfileRow;

int profile_new(Profile **ret);
Profile *profile_free(Profile *p);
DEFINE_TRIVIAL_CLEANUP_FUNC(Profile *, profile_free);

/* The id of (module, function), created on first use. */
int profile_intern_function(Profile *p, const char *module, const char *function, uint32_t *ret_id);
int profile_add_sample(Profile *p, const ProfileSample *s);

uint64_t profile_total(const Profile *p);
size_t profile_n_functions(const Profile *p);

/* Tables, sorted descending by the sort key, then by the other count, then by name. limit 0: every row.
 * The caller frees *ret (not the strings). */
int profile_functions(const Profile *p, ProfileSort sort, size_t limit, ProfileRow **ret, size_t *ret_n);
int profile_modules(const Profile *p, ProfileRow **ret, size_t *ret_n);
int profile_threads(const Profile *p, ProfileRow **ret, size_t *ret_n);

static inline double profile_percent(uint64_t count, uint64_t total)
{
        return total ? 100.0 * (double)count / (double)total : 0.0;
}
