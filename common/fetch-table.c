/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <assert.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "fetch-table.h"
#include "hashmap.h"

typedef struct FetchEntry {
        char *key; /* the map's key points here */
        char *label;
        char *path;
        FetchState state;
} FetchEntry;

struct FetchTable {
        Hashmap *entries; /* key -> FetchEntry* */
        size_t max_pending;
        size_t n_pending;
};

static void fetch_entry_free(FetchEntry *e)
{
        if (!e)
                return;
        free(e->key);
        free(e->label);
        free(e->path);
        free(e);
}

int fetch_table_new(size_t max_pending, FetchTable **ret)
{
        FetchTable *t;

        assert(ret);

        if (max_pending == 0)
                return -EINVAL;
        t = calloc(1, sizeof(*t));
        if (!t)
                return -ENOMEM;
        t->entries = hashmap_new(&string_hash_ops);
        if (!t->entries) {
                free(t);
                return -ENOMEM;
        }
        t->max_pending = max_pending;
        *ret = t;
        return 0;
}

FetchTable *fetch_table_free(FetchTable *t)
{
        FetchEntry *e;

        if (!t)
                return NULL;
        HASHMAP_FOREACH(e, t->entries)
                fetch_entry_free(e);
        hashmap_free(t->entries);
        free(t);
        return NULL;
}

int fetch_table_request(FetchTable *t, const char *key, const char *label)
{
        FetchEntry *e;
        int r;

        assert(t);
        assert(key);

        if (hashmap_contains(t->entries, key))
                return 0;
        if (t->n_pending >= t->max_pending)
                return -ENOSPC;
        e = calloc(1, sizeof(*e));
        if (!e)
                return -ENOMEM;
        e->key = strdup(key);
        e->label = label ? strdup(label) : NULL;
        if (!e->key || (label && !e->label)) {
                fetch_entry_free(e);
                return -ENOMEM;
        }
        e->state = FETCH_PENDING;
        r = hashmap_put(t->entries, e->key, e);
        if (r < 0) {
                fetch_entry_free(e);
                return r;
        }
        t->n_pending++;
        return 1;
}

int fetch_table_complete(FetchTable *t, const char *key, const char *path)
{
        FetchEntry *e;
        char *copy = NULL;

        assert(t);
        assert(key);

        e = hashmap_get(t->entries, key);
        if (!e || e->state != FETCH_PENDING)
                return -ENOENT;
        if (path) {
                copy = strdup(path);
                if (!copy)
                        return -ENOMEM;
        }
        e->path = copy;
        e->state = path ? FETCH_DONE : FETCH_FAILED;
        t->n_pending--;
        return 0;
}

FetchState fetch_table_state(const FetchTable *t, const char *key, const char **ret_path)
{
        const FetchEntry *e = t && key ? hashmap_get(t->entries, key) : NULL;

        if (ret_path)
                *ret_path = e ? e->path : NULL;
        return e ? e->state : FETCH_UNKNOWN;
}

const char *fetch_table_label(const FetchTable *t, const char *key)
{
        const FetchEntry *e = t && key ? hashmap_get(t->entries, key) : NULL;

        return e ? e->label : NULL;
}

size_t fetch_table_pending(const FetchTable *t)
{
        return t ? t->n_pending : 0;
}

const char *fetch_state_to_string(FetchState state)
{
        static const char *const table[] = {
                [FETCH_UNKNOWN] = "unknown",
                [FETCH_PENDING] = "pending",
                [FETCH_DONE] = "done",
                [FETCH_FAILED] = "failed",
        };

        return state >= 0 && (size_t)state < ELEMENTSOF(table) ? table[state] : NULL;
}
