/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "macros.h"

/* The counting of one target, free of BPF and D-Bus: samples and off-CPU intervals, each with its stack, into
 * the sampling values (seed 004: inclusive and exclusive counts) and the elapsed and application values (seed
 * 003) of every function, module and thread. The rules, and what the percents are against, are
 * docs/COUNTING.md; tests/unit/test-profile.c checks them on hand-computed profiles. Values are exact: sample
 * counts and nanoseconds are kept apart and only combined, in sample periods (1/frequency seconds), when read. */

typedef struct Profile Profile;

typedef enum ProfileSort {
        PROFILE_SORT_INCLUSIVE, /* the sampling values */
        PROFILE_SORT_EXCLUSIVE,
        PROFILE_SORT_ELAPSED_INCLUSIVE,
        PROFILE_SORT_ELAPSED_EXCLUSIVE,
        PROFILE_SORT_APPLICATION_INCLUSIVE,
        PROFILE_SORT_APPLICATION_EXCLUSIVE,
        _PROFILE_SORT_MAX,
        _PROFILE_SORT_INVALID = -1,
} ProfileSort;

ProfileSort profile_sort_from_string(const char *s);
const char *profile_sort_to_string(ProfileSort s);
/* Whether the key sorts a table of elapsed and application values rather than sampling values. */
static inline bool profile_sort_is_values(ProfileSort s)
{
        return s >= PROFILE_SORT_ELAPSED_INCLUSIVE && s < _PROFILE_SORT_MAX;
}

typedef enum ProfileSampleKind {
        PROFILE_SAMPLE_USER,      /* on the CPU in user mode */
        PROFILE_SAMPLE_KERNEL,    /* on the CPU in kernel mode, for the thread (system call, fault...) */
        PROFILE_SAMPLE_BLOCKED,   /* off the CPU, waiting (sleep, I/O, lock): an interval of duration_ns */
        PROFILE_SAMPLE_PREEMPTED, /* off the CPU, runnable but another task ran */
        _PROFILE_SAMPLE_KIND_MAX,
} ProfileSampleKind;

typedef struct ProfileSample {
        uint32_t tid;
        const char *thread_name; /* may be NULL: the thread keeps its previous name */
        const uint32_t *frames;  /* function ids from profile_intern_function(), innermost first */
        size_t n_frames;         /* 0: the sample counts for the totals and the thread only */
        ProfileSampleKind kind;
        size_t n_kernel_frames;  /* the first frames are kernel code (on-CPU samples): not user stack */
        uint64_t duration_ns;    /* off-CPU kinds */
} ProfileSample;

/* The seed-003 values of one function, module, thread or the whole profile, exact: on-CPU samples by mode,
 * off-CPU time by kind. */
typedef struct ProfileValues {
        uint64_t user_samples;   /* application time */
        uint64_t kernel_samples; /* on the CPU in the kernel: elapsed only */
        uint64_t blocked_ns;     /* off the CPU: elapsed only */
        uint64_t preempted_ns;
} ProfileValues;

typedef struct ProfileRow {
        const char *name;   /* function, module or thread name; owned by the profile */
        const char *module; /* module of a function row, else NULL */
        bool inlined;       /* a function row of an inlined frame (profile_intern_frame()) */
        uint32_t tid;       /* thread rows */
        uint64_t inclusive; /* sampling values */
        uint64_t exclusive;
        ProfileValues inclusive_values;
        ProfileValues exclusive_values;
} ProfileRow;

/* frequency: the sampling frequency in Hz, the length of an on-CPU sample's interval. */
int profile_new(uint32_t frequency, Profile **ret);
Profile *profile_free(Profile *p);
DEFINE_TRIVIAL_CLEANUP_FUNC(Profile *, profile_free);

/* The row (module and function name) that stands for what did not fit within the limits. */
#define PROFILE_OTHER "[other]"

/* Bounds on memory, 0 for none: at most max_functions distinct functions and max_stacks distinct stacks. Past
 * them every total stays exact: a new function is counted as PROFILE_OTHER, a new stack in the other stack
 * (profile_other_stack()). */
void profile_set_limits(Profile *p, size_t max_functions, size_t max_stacks);

/* The id of (module, function), created on first use; PROFILE_OTHER's once max_functions are in use. inlined:
 * the function as an inlined frame (from the DWARF of the code: inlined into the frame after it in the stacks),
 * a row apart from the same function called, so that every frame of a stack says whether it was inlined, as
 * pprof's Lines and the JSON outputs want it. */
int profile_intern_frame(Profile *p, const char *module, const char *function, bool inlined, uint32_t *ret_id);
static inline int profile_intern_function(Profile *p, const char *module, const char *function, uint32_t *ret_id)
{
        return profile_intern_frame(p, module, function, false, ret_id);
}
/* Whether the function is an inlined frame (profile_intern_frame()); false for an unknown id. */
bool profile_function_inlined(const Profile *p, uint32_t id);
/* The id of one line of a function (module, function): a frame of its own in the stacks (pprof places samples on
 * lines by it, GetProfile lists it), counted in the function's row, which the tables list alone; the stacks that
 * differ only in lines are one in profile_stacks(). line 0, or past max_functions: the function's own id. */
int profile_intern_line(Profile *p, const char *module, const char *function, uint32_t line, uint32_t *ret_id);
/* The line of a function's line (profile_intern_line()), 0 for a whole function or an unknown id. */
uint32_t profile_function_line(const Profile *p, uint32_t id);
/* The function a line is of, itself for a whole function; id for an unknown id. */
uint32_t profile_function_whole(const Profile *p, uint32_t id);
int profile_add_sample(Profile *p, const ProfileSample *s);

/* The stack id of a sample counted in no stack of its own, past max_stacks (see profile_other_stack_samples()). */
#define PROFILE_STACK_OTHER UINT32_MAX

/* profile_add_sample(), and the id of the stack the sample was counted in (stacks are numbered from 0 in the
 * order they were first seen; the ids stay across a save and load), or PROFILE_STACK_OTHER. */
int profile_add_sample_stack(Profile *p, const ProfileSample *s, uint32_t *ret_stack_id);

/* What any number of samples of one thread and one stack added, at once: the counting rules are linear, so this
 * counts exactly what profile_add_sample() would for each of them. The on-CPU samples are values.user_samples +
 * values.kernel_samples; the off-CPU intervals are the nanoseconds. */
typedef struct ProfileCounts {
        uint32_t tid;             /* the thread is created if new, without a name */
        uint32_t stack_id;        /* a stack of the profile, or PROFILE_STACK_OTHER with the frames below */
        const uint32_t *frames;   /* for PROFILE_STACK_OTHER: the samples' frames, innermost first */
        size_t n_frames;
        size_t n_kernel_frames;   /* as the samples had it (a stack's own may differ past max_functions) */
        ProfileValues values;
} ProfileCounts;

int profile_add_counts(Profile *p, const ProfileCounts *c);

/* The stack of an id: its frames (owned by the profile), innermost first; -ENOENT for an unknown id. */
int profile_stack_frames(const Profile *p, uint32_t stack_id, const uint32_t **ret_frames, size_t *ret_n_frames,
                         size_t *ret_n_kernel_frames);

uint64_t profile_total(const Profile *p); /* on-CPU samples: the sampling values' denominator */
/* The session's values: elapsed and application totals, the denominators of the seed-003 percents. */
const ProfileValues *profile_total_values(const Profile *p);
uint32_t profile_frequency(const Profile *p);
size_t profile_n_functions(const Profile *p);

/* Values in sample periods (1/frequency seconds); multiply by 1000/frequency for milliseconds. */
double profile_ns_to_samples(uint64_t ns, uint32_t frequency);
double profile_elapsed(const ProfileValues *v, uint32_t frequency);
double profile_application(const ProfileValues *v);

/* Tables, sorted descending by the sort key, then by the other value of its kind, then by name. A sampling
 * key lists the rows with samples, a values key the rows with elapsed time. limit 0: every row. The caller
 * frees *ret (not the strings). A thread's exclusive values are its inclusive ones. */
int profile_functions(const Profile *p, ProfileSort sort, size_t limit, ProfileRow **ret, size_t *ret_n);
int profile_modules(const Profile *p, ProfileSort sort, ProfileRow **ret, size_t *ret_n);
int profile_threads(const Profile *p, ProfileSort sort, ProfileRow **ret, size_t *ret_n);

/* The distinct stacks: frames innermost first as given to profile_add_sample(), kernel ones included. */
typedef struct ProfileStackRow {
        const uint32_t *frames; /* owned by the profile */
        size_t n_frames;
        size_t n_kernel_frames; /* the innermost ones */
        uint64_t samples;       /* on-CPU samples */
        ProfileValues values;
} ProfileStackRow;

/* The stacks with on-CPU samples, most samples first (then by frames, for a stable order). limit 0: all. The
 * lines of functions are their functions there (profile_intern_line()): stacks that differ only in lines are one
 * row. profile_stack_frames() gives a stack's own frames, lines and all. */
int profile_stacks(const Profile *p, size_t limit, ProfileStackRow **ret, size_t *ret_n);
size_t profile_n_stacks(const Profile *p);
/* The bytes the tables asked of malloc() (entries, names, frames, arrays, maps), without the allocator's own
 * overhead: a counter kept as entries are made, plus the sizes of the arrays and maps. */
size_t profile_memory(const Profile *p);
/* What was counted past max_stacks, and so in no stack. */
uint64_t profile_other_stack_samples(const Profile *p);
const ProfileValues *profile_other_stack_values(const Profile *p);
/* The counts of one stack, off-CPU ones included (profile_stacks() lists those with on-CPU samples only):
 * -ENOENT for an unknown id. */
int profile_stack_counts(const Profile *p, uint32_t stack_id, uint64_t *ret_samples, ProfileValues *ret_values);
/* The module and function name of an id (strings owned by the profile); -ENOENT for an unknown id. */
int profile_function_name(const Profile *p, uint32_t id, const char **ret_module, const char **ret_function);
/* The symbol name behind a demangled function name, for tools that want the exact symbol: kept once per
 * function (the first one given), not for PROFILE_OTHER. NULL when none was set. Not in the saved state. */
int profile_set_mangled(Profile *p, uint32_t id, const char *mangled);
const char *profile_function_mangled(const Profile *p, uint32_t id);
/* Where a function is written, "FILE:LINE" of its entry (the table schema's SOURCE column, GetFunctionSources):
 * kept once per function (the first one given; "" gives none), not for PROFILE_OTHER, NULL when none was set.
 * Not in the saved state, the deltas nor the windows' tables. */
int profile_set_source(Profile *p, uint32_t id, const char *source);
const char *profile_function_source(const Profile *p, uint32_t id);
/* The run-time address of the function's symbol start in the process counted, for tools that map functions back
 * to code (pprof): kept once per function (the first one given), not for the reserved rows, not in the saved
 * state (0 after a restore). 0 when none was set or the id is unknown. */
int profile_set_function_address(Profile *p, uint32_t id, uint64_t address);
uint64_t profile_function_address(const Profile *p, uint32_t id);
/* Samples with a function folded into PROFILE_OTHER (its inclusive count), 0 when none was folded. */
uint64_t profile_other_function_samples(const Profile *p);

/* Add every count of src into dst, by name: functions by module and name, modules, threads by tid, stacks by their
 * frames' names, the totals and what went past the limits. Exact when the two counted different samples (two
 * processes): the tables of a service, each of its processes a target. dst's limits do not apply (the merged
 * tables hold at most the rows of both). -EINVAL when they count at different frequencies, or src is dst;
 * -ENOMEM leaves dst's counts as they were (it may have new rows without counts). */
int profile_merge(Profile *dst, const Profile *src);

/* The row's value for key, in sample periods for the values keys. */
double profile_row_value(const ProfileRow *row, ProfileSort key, uint32_t frequency);

static inline double profile_percent(uint64_t count, uint64_t total)
{
        return total ? 100.0 * (double)count / (double)total : 0.0;
}
