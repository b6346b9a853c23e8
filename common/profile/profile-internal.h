/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* The Profile's layout, for the code that counts (profile.c) and the code that saves and loads it; nothing
 * else includes this. */

#include "hashmap.h"
#include "profile.h"

/* "Distinct per sample" is enforced with a generation stamp: each sample gets a new generation and an entry
 * counts its inclusive sample only if its stamp is older. No per-sample allocation, no set to clear. The
 * sampling pass (every frame) and the values pass (user frames) each have their own stamp. */

/* What every frame of a sample touches comes first, in 32 bytes (generation, inclusive, values_generation,
 * inclusive_values.user_samples): with a Function's counted pointer before them, one cache line a frame. */
typedef struct Counts {
        uint64_t generation;
        uint64_t inclusive;
        uint64_t values_generation;
        ProfileValues inclusive_values;
        uint64_t exclusive;
        ProfileValues exclusive_values;
} Counts;

typedef struct Module {
        char *name;
        Counts counts;
} Module;

typedef struct FunctionKey {
        uint32_t module_id;
        const char *name;
        /* A function as an inlined frame, inlined into the frame after it in every stack (profile.h): a row of
         * its own, apart from the function called. */
        bool inlined;
        /* A line of the function (a Python frame's, from its instruction): a frame of its own in the stacks, so
         * that pprof can place samples on lines, counted in the whole function's row (line 0). */
        uint32_t line;
} FunctionKey;

typedef struct Function Function;
struct Function {
        /* Where its samples are counted: itself, or for a line of a function the whole function. First, with the
         * hot start of Counts after it in one cache line (FUNCTION_ALIGN). */
        Function *counted;
        Counts counts;
        FunctionKey key; /* key.name points to name */
        char *name;
        char *mangled; /* the symbol's name when name is its demangled form, else NULL */
        char *source;  /* FILE:LINE of the function's entry, NULL when unknown; not saved */
        uint64_t address; /* the run-time address of the symbol's start, 0 when unknown; not saved */
        uint32_t id;
};

/* Functions are allocated at this alignment, so that counted and the hot start of Counts share a cache line. */
#define FUNCTION_ALIGN 64

typedef struct Thread {
        uint32_t tid;
        char *name;
        uint64_t samples;
        ProfileValues values;
} Thread;

/* One distinct stack: the frames of a sample, innermost first, kernel ones included. */
typedef struct StackKey {
        const uint32_t *frames;
        uint32_t n_frames;
} StackKey;

typedef struct Stack {
        StackKey key; /* key.frames points to frames */
        uint32_t n_kernel_frames; /* the first ones: a kernel function id never names user code */
        uint32_t id;              /* insertion order: the stack's place in Profile.stack_by_id */
        uint64_t samples;      /* on-CPU samples */
        ProfileValues values;  /* every interval, off-CPU ones too */
        uint32_t frames[];
} Stack;

struct Profile {
        uint32_t frequency;
        uint64_t total;
        ProfileValues total_values;
        uint64_t generation;
        uint32_t unknown_id; /* "[unknown]", for intervals without a user stack; UINT32_MAX until needed */

        Function **functions; /* by id */
        size_t n_functions, allocated_functions;
        size_t n_lines; /* of them lines of a function (profile_intern_line()) */
        Hashmap *function_by_key;

        Module **modules;
        size_t n_modules, allocated_modules;
        Hashmap *module_by_name; /* name -> id + 1 */

        Hashmap *threads; /* tid -> Thread */
        Thread *last_thread; /* of the last sample: the next one is often of the same thread */

        Hashmap *stacks; /* StackKey* -> Stack* */
        /* The same stacks by id. Ids are handed out in insertion order and kept (the state file lists stacks in
         * that order), so that a per-second delta (profile-delta.h) can name a stack by a number that means
         * the same thing after a restart. */
        Stack **stack_by_id;
        size_t n_stacks, allocated_stacks;

        /* The ids of the functions that got a mangled name, in the order they got it: the deltas take their
         * slice of it (a function may get its mangled name after the second that defined it). */
        uint32_t *mangled_log;
        size_t n_mangled_log, allocated_mangled_log;

        /* Memory bounds (0: none). Past them the totals keep counting: a new function becomes "[other]" and
         * a new stack is counted in other_stack. */
        size_t max_functions;
        size_t max_stacks;
        uint32_t other_id; /* "[other]"; UINT32_MAX until needed */
        /* The bytes asked of malloc() for the functions, modules and stacks (with their names and frames), kept
         * as they are made: profile_memory() adds the arrays, maps and threads. */
        size_t entry_bytes;
        uint64_t other_stack_samples;
        ProfileValues other_stack_values;
};

/* A new stack of frames, counts zero, with the next id; -EEXIST when the profile has it. */
int profile_stack_insert(Profile *p, const uint32_t *frames, uint32_t n_frames, uint32_t n_kernel_frames,
                         Stack **ret);

/* A new function with the next id, whatever the limits: the deltas replay definitions as they were made.
 * -EEXIST when the profile has it. line > 0: a line of the function (module, function, inlined), which must
 * exist already (-ENOENT): it is counted there. */
int profile_function_append(Profile *p, const char *module, const char *function, bool inlined, uint32_t line,
                            uint32_t *ret_id);

/* The thread's name, as profile_add_sample() renames it; -ENOENT when the profile has no such thread. NULL
 * leaves the name as it is. */
int profile_thread_rename(Profile *p, uint32_t tid, const char *name);
/* The thread's name, NULL when it has none; -ENOENT when there is no such thread. */
int profile_thread_name(const Profile *p, uint32_t tid, const char **ret);

/* The id of module name, created on first use. */
int profile_intern_module(Profile *p, const char *name, uint32_t *ret_id);
/* Whether a new function would pass max_functions (the reserved rows do not count). */
bool profile_functions_full(const Profile *p);
/* The function (module, function, inlined) or its line (line > 0), NULL when the profile has none. */
Function *profile_find_function(const Profile *p, const char *module, const char *function, bool inlined,
                                uint32_t line);
/* The thread tid, created on first use and renamed to name unless NULL (the last thread is remembered for the
 * next lookup); NULL with *ret_error set on failure. */
Thread *profile_count_thread(Profile *p, uint32_t tid, const char *name, int *ret_error);
void profile_values_add(ProfileValues *v, const ProfileValues *add);

/* One profile's ids (src) in another (dst), by name: functions by module and name, stacks by their translated
 * frames. What dst does not have is created there, whatever dst's limits: folding two functions of src into
 * one "[other]" would count a sample twice in a sum of inclusive counts. The reserved rows stay reserved, and a
 * function's mangled name comes along. Shared by profile_merge() and profile_window_count(); src must not
 * change while a translation of it is in use. */
typedef struct ProfileTranslation {
        const Profile *src;
        Profile *dst;
        uint32_t *functions; /* src function id -> dst id + 1; 0: not translated yet */
        uint32_t *stacks;    /* src stack id -> dst stack id + 1 */
        uint32_t *frames;    /* one stack's translated frames */
        size_t allocated_frames;
} ProfileTranslation;

/* -EINVAL when the two count at different frequencies (their sample counts would not weigh the same). */
int profile_translation_init(ProfileTranslation *t, const Profile *src, Profile *dst);
void profile_translation_done(ProfileTranslation *t);
int profile_translate_function(ProfileTranslation *t, uint32_t id, uint32_t *ret_id);
/* n frames of src (function ids below src's count) as dst's, in *ret (the translation's buffer, valid until the
 * next call); -EINVAL for an id src does not have. */
int profile_translate_frames(ProfileTranslation *t, const uint32_t *frames, size_t n, const uint32_t **ret);
/* The stack of dst with the frames of src's stack_id, created if new; -EINVAL for an id src does not have. */
int profile_translate_stack(ProfileTranslation *t, uint32_t stack_id, Stack **ret);
/* Every thread of src that dst has gets src's name, when src has one. */
int profile_translate_thread_names(ProfileTranslation *t);
