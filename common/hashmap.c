/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <assert.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "hashmap.h"

/* Linear probing with tombstones; the table keeps each key's hash so that growing never rehashes keys. */

enum { SLOT_EMPTY, SLOT_USED, SLOT_DELETED };

typedef struct Slot {
        uint64_t hash;
        const void *key;
        void *value;
} Slot;

struct Hashmap {
        const HashOps *ops;
        Slot *slots;
        uint8_t *state;
        size_t n_slots; /* a power of two, or 0 */
        size_t n_used;
        size_t n_deleted;
};

uint64_t hash_u64(uint64_t x)
{
        /* splitmix64's finalizer: every input bit affects every output bit. */
        x ^= x >> 30;
        x *= UINT64_C(0xbf58476d1ce4e5b9);
        x ^= x >> 27;
        x *= UINT64_C(0x94d049bb133111eb);
        x ^= x >> 31;
        return x;
}

uint64_t hash_bytes(const void *p, size_t n, uint64_t seed)
{
        /* FNV-1a over 8-byte words where possible, finished by the u64 mixer. */
        const uint8_t *b = p;
        uint64_t h = UINT64_C(0xcbf29ce484222325) ^ seed;

        assert(p || n == 0);

        for (; n >= 8; n -= 8, b += 8) {
                uint64_t w;
                memcpy(&w, b, 8);
                h = (h ^ w) * UINT64_C(0x100000001b3);
        }
        for (; n > 0; n--, b++)
                h = (h ^ *b) * UINT64_C(0x100000001b3);
        return hash_u64(h);
}

static uint64_t uint64_hash(const void *key)
{
        return hash_u64(PTR_TO_UINT64(key));
}

static bool uint64_equal(const void *a, const void *b)
{
        return a == b;
}

static uint64_t string_hash(const void *key)
{
        return hash_bytes(key, strlen(key), 0);
}

static bool string_equal(const void *a, const void *b)
{
        return strcmp(a, b) == 0;
}

const HashOps uint64_hash_ops = { .hash = uint64_hash, .equal = uint64_equal };
const HashOps string_hash_ops = { .hash = string_hash, .equal = string_equal };

Hashmap *hashmap_new(const HashOps *ops)
{
        Hashmap *h;

        assert(ops);

        h = calloc(1, sizeof(*h));
        if (!h)
                return NULL;
        h->ops = ops;
        return h;
}

Hashmap *hashmap_free(Hashmap *h)
{
        if (!h)
                return NULL;
        free(h->slots);
        free(h->state);
        free(h);
        return NULL;
}

/* The slot holding key, or the first free slot on its probe sequence when absent (SIZE_MAX if none). */
static size_t find_slot(const Hashmap *h, const void *key, uint64_t hash, bool *ret_found)
{
        size_t mask = h->n_slots - 1, free_slot = SIZE_MAX;

        for (size_t i = hash & mask, n = 0; n < h->n_slots; i = (i + 1) & mask, n++) {
                if (h->state[i] == SLOT_EMPTY) {
                        *ret_found = false;
                        return free_slot != SIZE_MAX ? free_slot : i;
                }
                if (h->state[i] == SLOT_DELETED) {
                        if (free_slot == SIZE_MAX)
                                free_slot = i;
                        continue;
                }
                if (h->slots[i].hash == hash && h->ops->equal(h->slots[i].key, key)) {
                        *ret_found = true;
                        return i;
                }
        }
        *ret_found = false;
        return free_slot;
}

static int resize(Hashmap *h, size_t n_slots)
{
        Slot *slots = calloc(n_slots, sizeof(Slot));
        uint8_t *state = calloc(n_slots, 1);

        if (!slots || !state) {
                free(slots);
                free(state);
                return -ENOMEM;
        }

        for (size_t i = 0; i < h->n_slots; i++) {
                if (h->state[i] != SLOT_USED)
                        continue;
                size_t j = h->slots[i].hash & (n_slots - 1);
                while (state[j] != SLOT_EMPTY)
                        j = (j + 1) & (n_slots - 1);
                slots[j] = h->slots[i];
                state[j] = SLOT_USED;
        }

        free(h->slots);
        free(h->state);
        h->slots = slots;
        h->state = state;
        h->n_slots = n_slots;
        h->n_deleted = 0;
        return 0;
}

int hashmap_put(Hashmap *h, const void *key, void *value)
{
        uint64_t hash;
        bool found;
        size_t i;
        int r;

        assert(h);

        hash = h->ops->hash(key);

        /* Keep the load (used + tombstones) under 3/4 so probe sequences stay short. */
        if ((h->n_used + h->n_deleted + 1) * 4 > h->n_slots * 3) {
                size_t n = h->n_slots ? h->n_slots : 8;
                while ((h->n_used + 1) * 2 > n)
                        n *= 2;
                r = resize(h, n);
                if (r < 0)
                        return r;
        }

        i = find_slot(h, key, hash, &found);
        if (found)
                return -EEXIST;
        if (h->state[i] == SLOT_DELETED)
                h->n_deleted--;
        h->slots[i] = (Slot){ .hash = hash, .key = key, .value = value };
        h->state[i] = SLOT_USED;
        h->n_used++;
        return 0;
}

void *hashmap_get(const Hashmap *h, const void *key)
{
        bool found;
        size_t i;

        assert(h);

        if (h->n_used == 0)
                return NULL;
        i = find_slot(h, key, h->ops->hash(key), &found);
        return found ? h->slots[i].value : NULL;
}

bool hashmap_contains(const Hashmap *h, const void *key)
{
        bool found = false;

        assert(h);

        if (h->n_used > 0)
                (void)find_slot(h, key, h->ops->hash(key), &found);
        return found;
}

void *hashmap_remove(Hashmap *h, const void *key)
{
        bool found;
        size_t i;

        assert(h);

        if (h->n_used == 0)
                return NULL;
        i = find_slot(h, key, h->ops->hash(key), &found);
        if (!found)
                return NULL;
        h->state[i] = SLOT_DELETED;
        h->n_used--;
        h->n_deleted++;
        return h->slots[i].value;
}

size_t hashmap_size(const Hashmap *h)
{
        return h ? h->n_used : 0;
}

size_t hashmap_memory(const Hashmap *h)
{
        return h ? sizeof(*h) + h->n_slots * (sizeof(Slot) + 1) : 0;
}

void hashmap_clear(Hashmap *h)
{
        assert(h);

        if (h->n_slots)
                memset(h->state, SLOT_EMPTY, h->n_slots);
        h->n_used = h->n_deleted = 0;
}

bool hashmap_iterate(const Hashmap *h, size_t *i, void **ret_key, void **ret_value)
{
        assert(i);

        if (!h)
                return false;
        for (; *i < h->n_slots; (*i)++) {
                if (h->state[*i] != SLOT_USED)
                        continue;
                if (ret_key)
                        *ret_key = (void *)h->slots[*i].key;
                if (ret_value)
                        *ret_value = h->slots[*i].value;
                (*i)++;
                return true;
        }
        return false;
}
