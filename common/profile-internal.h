/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* The Profile's layout, for the code that counts (profile.c) and the code that saves and loads it; nothing
 * else includes this. */

#include "hashmap.h"
#include "profile.h"

/* "Distinct per sample" is enforced with a generation stamp: each sample gets a new generation and an entry
 * counts its inclusive sample only if its stamp is older. No per-sample allocation, no set to clear. The
 * sampling pass (every frame) and the values pass (user frames) each have their own stamp. */

typedef struct Counts {
        uint64_t inclusive;
        uint64_t exclusive;
        uint64_t generation;
        uint64_t values_generation;
        ProfileValues inclusive_values;
        ProfileValues exclusive_values;
} Counts;

typedef struct Module {
        char *name;
        Counts counts;
} Module;

typedef struct FunctionKey {
        uint32_t module_id;
        const char *name;
} FunctionKey;

typedef struct Function {
        FunctionKey key; /* key.name points to name */
        char *name;
        uint32_t id;
        Counts counts;
} Function;

typedef struct Thread {
        uint32_t tid;
        char *name;
        uint64_t samples;
        ProfileValues values;
} Thread;

struct Profile {
        uint32_t frequency;
        uint64_t total;
        ProfileValues total_values;
        uint64_t generation;
        uint32_t unknown_id; /* "[unknown]", for intervals without a user stack; UINT32_MAX until needed */

        Function **functions; /* by id */
        size_t n_functions, allocated_functions;
        Hashmap *function_by_key;

        Module **modules;
        size_t n_modules, allocated_modules;
        Hashmap *module_by_name; /* name -> id + 1 */

        Hashmap *threads; /* tid -> Thread */
};
