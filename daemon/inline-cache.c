/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hashmap.h"
#include "inline-cache.h"

/* One allocation per address: the names' pointers, then their bytes. */
typedef struct InlineEntry {
        size_t n, bytes;
        const char *names[];
} InlineEntry;

struct InlineCache {
        Hashmap *entries; /* "DEV:DEV:INODE:OFFSET" (owned) -> InlineEntry (owned) */
        size_t max_entries;
        size_t bytes;     /* of the keys and entries */
};

#define KEY_MAX 64

static void key_text(const InlineKey *k, char buf[static KEY_MAX])
{
        snprintf(buf, KEY_MAX, "%" PRIx32 ":%" PRIx32 ":%" PRIu64 ":%" PRIx64, k->dev_major, k->dev_minor, k->inode,
                 k->offset);
}

int inline_cache_new(size_t max_entries, InlineCache **ret)
{
        InlineCache *c;

        if (max_entries == 0)
                return -EINVAL;
        c = calloc(1, sizeof(*c));
        if (!c)
                return -ENOMEM;
        c->entries = hashmap_new(&string_hash_ops);
        if (!c->entries) {
                free(c);
                return -ENOMEM;
        }
        c->max_entries = max_entries;
        *ret = c;
        return 0;
}

void inline_cache_clear(InlineCache *c)
{
        void *key, *value;

        if (!c)
                return;
        for (size_t i = 0; hashmap_iterate(c->entries, &i, &key, &value);) {
                free(key);
                free(value);
        }
        hashmap_clear(c->entries);
        c->bytes = 0;
}

InlineCache *inline_cache_free(InlineCache *c)
{
        if (!c)
                return NULL;
        inline_cache_clear(c);
        hashmap_free(c->entries);
        free(c);
        return NULL;
}

int inline_cache_get(InlineCache *c, const InlineKey *k, const char *const **ret_names, size_t *ret_n)
{
        char key[KEY_MAX];
        InlineEntry *e;

        key_text(k, key);
        e = hashmap_get(c->entries, key);
        if (!e)
                return 0;
        *ret_names = e->names;
        *ret_n = e->n;
        return 1;
}

int inline_cache_put(InlineCache *c, const InlineKey *k, const char *const *names, size_t n)
{
        size_t bytes = sizeof(InlineEntry) + n * sizeof(char *);
        char key[KEY_MAX], *text, *owned_key;
        InlineEntry *e;
        int r;

        for (size_t i = 0; i < n; i++)
                bytes += strlen(names[i] ?: "[inlined]") + 1;
        if (hashmap_size(c->entries) >= c->max_entries)
                inline_cache_clear(c);
        key_text(k, key);
        if (hashmap_contains(c->entries, key))
                return 0;
        e = malloc(bytes);
        owned_key = strdup(key);
        if (!e || !owned_key) {
                free(e);
                free(owned_key);
                return -ENOMEM;
        }
        e->n = n;
        e->bytes = bytes;
        text = (char *)&e->names[n];
        for (size_t i = 0; i < n; i++) {
                const char *name = names[i] ?: "[inlined]";
                size_t len = strlen(name) + 1;

                memcpy(text, name, len);
                e->names[i] = text;
                text += len;
        }
        r = hashmap_put(c->entries, owned_key, e);
        if (r < 0) {
                free(e);
                free(owned_key);
                return r;
        }
        c->bytes += bytes + strlen(owned_key) + 1;
        return 0;
}

size_t inline_cache_size(const InlineCache *c)
{
        return c ? hashmap_size(c->entries) : 0;
}

size_t inline_cache_memory(const InlineCache *c)
{
        return c ? sizeof(*c) + hashmap_memory(c->entries) + c->bytes : 0;
}
