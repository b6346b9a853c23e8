/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "macros.h"

/* The drain's cache of sampled addresses and the function ids they resolved to: looked up for every frame of
 * every sample, so it is a flat open-addressing table of integers, with no call through a pointer and no
 * allocation per entry. It holds at most a fixed number of entries and starts over when full (it only saves
 * lookups). */

/* Key and value side by side: a lookup costs one cache line, not two. */
typedef struct FrameSlot {
        uint64_t key;   /* address + 1; 0: an empty slot */
        uint32_t value; /* function id */
} FrameSlot;

/* A value with this bit is no function id but a chain of them (an address in inlined code: the inlined functions,
 * innermost first, then the function they were inlined into): frame_cache_chain() reads it. */
#define FRAME_CACHE_CHAIN UINT32_C(0x80000000)

typedef struct FrameCache {
        FrameSlot *slots;
        /* The chains, one after the other: their length, then their ids. Emptied with the slots. */
        uint32_t *chains;
        size_t n_chain_words, allocated_chain_words;
        size_t mask;      /* slots - 1: a power of two, at least twice n_entries; grows up to twice max_entries */
        size_t n_entries;
        size_t max_entries;
} FrameCache;

int frame_cache_new(size_t max_entries, FrameCache **ret);
FrameCache *frame_cache_free(FrameCache *c);
DEFINE_TRIVIAL_CLEANUP_FUNC(FrameCache *, frame_cache_free);

void frame_cache_clear(FrameCache *c);
/* Replaces the value of an address cached already; -ENOMEM (the cache is then cleared, still usable). */
int frame_cache_put(FrameCache *c, uint64_t addr, uint32_t id);
/* Caches the function ids of an address in inlined code, n (2 to 255) of them, innermost first: frame_cache_get()
 * then gives a value with FRAME_CACHE_CHAIN. -EINVAL for a bad n, -ENOMEM (the cache is then cleared). */
int frame_cache_put_chain(FrameCache *c, uint64_t addr, const uint32_t *ids, size_t n);
size_t frame_cache_size(const FrameCache *c);
/* The memory the cache holds, slots and chains, in bytes. */
size_t frame_cache_memory(const FrameCache *c);

/* The ids of the chain of a value with FRAME_CACHE_CHAIN, and their number. */
static inline const uint32_t *frame_cache_chain(const FrameCache *c, uint32_t value, size_t *ret_n)
{
        const uint32_t *chain = c->chains + (value & ~FRAME_CACHE_CHAIN);

        *ret_n = chain[0];
        return chain + 1;
}

static inline size_t frame_cache_slot(const FrameCache *c, uint64_t key)
{
        /* Fibonacci hashing: the high bits of the product depend on every bit of the address. */
        return (size_t)((key * UINT64_C(0x9e3779b97f4a7c15)) >> 32) & c->mask;
}

/* Inline: the one call of the drain's hot path. */
static inline bool frame_cache_get(const FrameCache *c, uint64_t addr, uint32_t *ret_id)
{
        uint64_t key = addr + 1;

        /* At most half full, so a probe ends at an empty slot soon. */
        for (size_t i = frame_cache_slot(c, key);; i = (i + 1) & c->mask) {
                /* Empty first: address UINT64_MAX has key 0, which is never stored. */
                if (c->slots[i].key == 0)
                        return false;
                if (c->slots[i].key == key) {
                        *ret_id = c->slots[i].value;
                        return true;
                }
        }
}
