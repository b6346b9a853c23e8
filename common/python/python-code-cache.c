/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <stdlib.h>

#include "hashmap.h"
#include "python-code-cache.h"

typedef struct CacheEntry {
        PythonCode *code;
        uint64_t generation; /* the generation it was last read or checked in */
} CacheEntry;

struct PythonCodeCache {
        Hashmap *by_address; /* address -> CacheEntry */
        size_t max_entries;
        size_t max_bytes;
        size_t bytes;        /* python_code_memory() of the kept objects */
        size_t evict_next;   /* where the eviction's sweep goes on: oldest slots first, roughly, as a clock */
        uint64_t generation;
        PythonCodeCacheStats stats;
};

PythonCodeCache *python_code_cache_new(size_t max_entries, size_t max_bytes)
{
        PythonCodeCache *cache = calloc(1, sizeof(PythonCodeCache));

        if (!cache)
                return NULL;
        cache->by_address = hashmap_new(&uint64_hash_ops);
        if (!cache->by_address) {
                free(cache);
                return NULL;
        }
        cache->max_entries = MAX(max_entries, 1u);
        cache->max_bytes = MAX(max_bytes, 1u);
        return cache;
}

static void entry_free(CacheEntry *e)
{
        python_code_free(e->code);
        free(e);
}

PythonCodeCache *python_code_cache_free(PythonCodeCache *cache)
{
        CacheEntry *e;

        if (!cache)
                return NULL;
        HASHMAP_FOREACH(e, cache->by_address)
                entry_free(e);
        hashmap_free(cache->by_address);
        free(cache);
        return NULL;
}

static void drop(PythonCodeCache *cache, uint64_t address)
{
        CacheEntry *e = hashmap_remove(cache->by_address, UINT64_TO_PTR(address));

        if (e) {
                cache->bytes -= python_code_memory(e->code);
                entry_free(e);
        }
}

/* Makes room for one more object of size bytes: drops kept ones, sweeping the table from where the last sweep
 * stopped, until it fits or nothing is left. */
static void make_room(PythonCodeCache *cache, size_t size)
{
        while (hashmap_size(cache->by_address) > 0 &&
               (hashmap_size(cache->by_address) >= cache->max_entries || cache->bytes + size > cache->max_bytes)) {
                void *key;

                if (!hashmap_iterate(cache->by_address, &cache->evict_next, &key, NULL)) {
                        cache->evict_next = 0;
                        continue;
                }
                drop(cache, PTR_TO_UINT64(key));
                cache->stats.evicted++;
        }
}

static int read_and_keep(PythonCodeCache *cache, const PythonLayout *l, const PythonTypes *types,
                         const PythonMemory *m, uint64_t address, const PythonCode **ret)
{
        _cleanup_(python_code_freep) PythonCode *c = NULL;
        _cleanup_free_ CacheEntry *e = NULL;
        size_t size;
        int r;

        r = python_code_read(l, types, m, address, &c);
        if (r < 0) {
                cache->stats.failed++;
                return r;
        }
        e = malloc(sizeof(CacheEntry));
        if (!e)
                return -ENOMEM;
        size = python_code_memory(c);
        make_room(cache, size);
        r = hashmap_put(cache->by_address, UINT64_TO_PTR(address), e);
        if (r < 0)
                return r;
        cache->bytes += size;
        *e = (CacheEntry){ .code = TAKE_PTR(c), .generation = cache->generation };
        *ret = TAKE_PTR(e)->code;
        return 0;
}

static bool fingerprint_equal(const PythonCodeFingerprint *a, const PythonCodeFingerprint *b)
{
        return a->type == b->type && a->qualname == b->qualname && a->filename == b->filename &&
               a->linetable == b->linetable && a->firstlineno == b->firstlineno;
}

int python_code_cache_get(PythonCodeCache *cache, const PythonLayout *l, const PythonTypes *types,
                          const PythonMemory *m, uint64_t address, const PythonCode **ret)
{
        CacheEntry *kept = hashmap_get(cache->by_address, UINT64_TO_PTR(address));
        PythonCodeFingerprint now;
        int r;

        if (!kept) {
                cache->stats.misses++;
                return read_and_keep(cache, l, types, m, address, ret);
        }
        if (kept->generation == cache->generation) {
                cache->stats.hits++;
                *ret = kept->code;
                return 0;
        }

        /* -ESRCH: the process is gone (its last samples are drained after its exit or exec()): its memory can
         * no longer change, so what was kept is what its frames ran. */
        r = python_code_fingerprint(l, types, m, address, &now);
        if (r == -ESRCH || (r >= 0 && fingerprint_equal(&now, &kept->code->fingerprint))) {
                cache->stats.hits++;
                cache->stats.checks++;
                kept->generation = cache->generation;
                *ret = kept->code;
                return 0;
        }
        cache->stats.stale++;
        drop(cache, address);
        if (r < 0) {
                cache->stats.failed++;
                return r;
        }
        return read_and_keep(cache, l, types, m, address, ret);
}

void python_code_cache_next_generation(PythonCodeCache *cache)
{
        cache->generation++;
}

void python_code_cache_stats(const PythonCodeCache *cache, PythonCodeCacheStats *ret)
{
        *ret = cache->stats;
        ret->entries = hashmap_size(cache->by_address);
        ret->bytes = cache->bytes;
}
