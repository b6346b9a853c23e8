/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <assert.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "frame-cache.h"

/* A new target's cache starts small (1 KiB): most targets never see many addresses (a child of a storm a few
 * dozen), and the cache grows as it fills. */
#define INITIAL_SLOTS 64

static int alloc_slots(FrameCache *c, size_t n)
{
        FrameSlot *slots = calloc(n, sizeof(*slots));

        if (!slots)
                return -ENOMEM;
        free(c->slots);
        c->slots = slots;
        c->mask = n - 1;
        c->n_entries = 0;
        return 0;
}

int frame_cache_new(size_t max_entries, FrameCache **ret)
{
        _cleanup_(frame_cache_freep) FrameCache *c = NULL;
        int r;

        assert(ret);

        if (max_entries == 0 || max_entries > SIZE_MAX / 64)
                return -EINVAL;
        c = calloc(1, sizeof(*c));
        if (!c)
                return -ENOMEM;
        r = alloc_slots(c, INITIAL_SLOTS);
        if (r < 0)
                return r;
        c->max_entries = max_entries;
        *ret = TAKE_PTR(c);
        return 0;
}

FrameCache *frame_cache_free(FrameCache *c)
{
        if (c) {
                free(c->slots);
                free(c->chains);
                free(c);
        }
        return NULL;
}

void frame_cache_clear(FrameCache *c)
{
        assert(c);

        if (c->n_entries == 0)
                return;
        memset(c->slots, 0, (c->mask + 1) * sizeof(*c->slots));
        c->n_entries = 0;
        c->n_chain_words = 0;
}

static void insert(FrameCache *c, uint64_t key, uint32_t id)
{
        size_t i;

        for (i = frame_cache_slot(c, key); c->slots[i].key != 0 && c->slots[i].key != key; i = (i + 1) & c->mask)
                ;
        if (c->slots[i].key == 0) {
                c->slots[i].key = key;
                c->n_entries++;
        }
        c->slots[i].value = id;
}

/* Twice the slots, the entries moved over. */
static int grow(FrameCache *c)
{
        _cleanup_free_ FrameSlot *old = c->slots;
        size_t n_old = c->mask + 1;
        int r;

        c->slots = NULL;
        r = alloc_slots(c, n_old * 2);
        if (r < 0) {
                /* Keep the old table, emptied: a cache may forget. */
                c->slots = TAKE_PTR(old);
                c->mask = n_old - 1;
                c->n_entries = 1;
                frame_cache_clear(c);
                return r;
        }
        for (size_t i = 0; i < n_old; i++)
                if (old[i].key != 0)
                        insert(c, old[i].key, old[i].value);
        return 0;
}

int frame_cache_put(FrameCache *c, uint64_t addr, uint32_t id)
{
        uint64_t key = addr + 1;
        int r;

        assert(c);

        /* The one address that has no key: not cached, looked up each time. */
        if (key == 0)
                return 0;
        /* Full: start over rather than grow with every address a JIT or a huge binary ever ran. */
        if (c->n_entries >= c->max_entries)
                frame_cache_clear(c);
        if (2 * (c->n_entries + 1) > c->mask + 1) {
                r = grow(c);
                if (r < 0)
                        return r;
        }
        insert(c, key, id);
        return 0;
}

int frame_cache_put_chain(FrameCache *c, uint64_t addr, const uint32_t *ids, size_t n)
{
        size_t at;

        assert(c);

        if (n < 2 || n > 255)
                return -EINVAL;
        /* The chains are bounded as the slots are: a few words an entry on average (max_entries * 8 words). A
         * full cache starts over here, not in frame_cache_put(), whose start-over would lose this chain. */
        if (c->n_entries >= c->max_entries || c->n_chain_words + 1 + n > c->max_entries * 8 ||
            c->n_chain_words + 1 + n >= FRAME_CACHE_CHAIN)
                frame_cache_clear(c);
        if (c->n_chain_words + 1 + n > c->allocated_chain_words) {
                size_t a = MAX(c->allocated_chain_words * 2, c->n_chain_words + 1 + n + 256);
                uint32_t *chains = reallocarray(c->chains, a, sizeof(*chains));

                if (!chains) {
                        frame_cache_clear(c);
                        return -ENOMEM;
                }
                c->chains = chains;
                c->allocated_chain_words = a;
        }
        at = c->n_chain_words;
        c->chains[at] = (uint32_t)n;
        memcpy(c->chains + at + 1, ids, n * sizeof(*ids));
        c->n_chain_words += 1 + n;
        return frame_cache_put(c, addr, FRAME_CACHE_CHAIN | (uint32_t)at);
}

size_t frame_cache_memory(const FrameCache *c)
{
        return c ? (c->mask + 1) * sizeof(*c->slots) + c->allocated_chain_words * sizeof(*c->chains) : 0;
}

size_t frame_cache_size(const FrameCache *c)
{
        return c ? c->n_entries : 0;
}
