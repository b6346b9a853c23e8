/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* One target's code objects, read once (code-reader.h) and kept by address, bounded in entries and bytes.
 * A code object can be freed and its address reused by another object, another code object included: the
 * first hit of each generation reads the object's head again (one small read) and compares its fingerprint
 * (type, names' and line table's addresses, first line), and a changed one is read anew. What a reuse keeps
 * all of those the same is, by then, the same code as far as a profile can tell. */

#include <stddef.h>
#include <stdint.h>

#include "code-reader.h"
#include "macros.h"

typedef struct PythonCodeCacheStats {
        uint64_t hits;      /* the kept object, its fingerprint unchanged or checked in this generation */
        uint64_t checks;    /* hits that read the fingerprint again (the first of a generation) */
        uint64_t misses;    /* read for the first time */
        uint64_t stale;     /* kept, but its fingerprint changed: read anew (or failed) */
        uint64_t evicted;   /* dropped to stay within the bounds */
        uint64_t failed;    /* reads that failed (not kept) */
        size_t entries;
        size_t bytes;
} PythonCodeCacheStats;

typedef struct PythonCodeCache PythonCodeCache;

/* NULL when out of memory. A bound of 0 is taken as 1 entry or 1 byte: an object larger than max_bytes is
 * still returned, and kept until the next one comes. */
PythonCodeCache *python_code_cache_new(size_t max_entries, size_t max_bytes);
PythonCodeCache *python_code_cache_free(PythonCodeCache *cache);
DEFINE_TRIVIAL_CLEANUP_FUNC(PythonCodeCache *, python_code_cache_free);

/* The code object at address, kept or read: valid until the next call on the cache. The errors of
 * python_code_read(); a kept object that can no longer be read is dropped and its error returned, but for
 * -ESRCH from the read callback (the process is gone: its last records are drained after its exit), which takes
 * the kept object as it is. A kept object
 * is checked once per generation: its first hit after python_code_cache_next_generation() reads its fingerprint
 * again, later hits take it as it is (a read costs a system call, some microseconds; a drain of a busy target
 * meets the same code objects thousands of times a second). */
int python_code_cache_get(PythonCodeCache *cache, const PythonLayout *l, const PythonTypes *types,
                          const PythonMemory *m, uint64_t address, const PythonCode **ret);

/* Starts a generation: every kept object is checked again on its next hit. The daemon starts one per drain of
 * a target's samples, so that an address reused since is read anew before its samples are named. */
void python_code_cache_next_generation(PythonCodeCache *cache);

void python_code_cache_stats(const PythonCodeCache *cache, PythonCodeCacheStats *ret);
