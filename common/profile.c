/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "hashmap.h"
#include "profile.h"

/* "Distinct per sample" is enforced with a generation stamp: each sample gets a new generation and an entry
 * counts its inclusive sample only if its stamp is older. No per-sample allocation, no set to clear. */

typedef struct Counts {
        uint64_t inclusive;
        uint64_t exclusive;
        uint64_t generation;
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
} Thread;

struct Profile {
        uint64_t total;
        uint64_t generation;

        Function **functions; /* by id */
        size_t n_functions, allocated_functions;
        Hashmap *function_by_key;

        Module **modules;
        size_t n_modules, allocated_modules;
        Hashmap *module_by_name; /* name -> id + 1 */

        Hashmap *threads; /* tid -> Thread */
};

static const char *const sort_names[_PROFILE_SORT_MAX] = {
        [PROFILE_SORT_INCLUSIVE] = "inclusive",
        [PROFILE_SORT_EXCLUSIVE] = "exclusive",
};

ProfileSort profile_sort_from_string(const char *s)
{
        for (size_t i = 0; s && i < _PROFILE_SORT_MAX; i++)
                if (strcmp(s, sort_names[i]) == 0)
                        return (ProfileSort)i;
        return _PROFILE_SORT_INVALID;
}

const char *profile_sort_to_string(ProfileSort s)
{
        return s >= 0 && s < _PROFILE_SORT_MAX ? sort_names[s] : NULL;
}

static uint64_t function_key_hash(const void *k)
{
        const FunctionKey *key = k;
        return hash_bytes(key->name, strlen(key->name), key->module_id);
}

static bool function_key_equal(const void *a, const void *b)
{
        const FunctionKey *x = a, *y = b;
        return x->module_id == y->module_id && strcmp(x->name, y->name) == 0;
}

static const HashOps function_key_hash_ops = { .hash = function_key_hash, .equal = function_key_equal };

int profile_new(Profile **ret)
{
        _cleanup_(profile_freep) Profile *p = calloc(1, sizeof(*p));

        if (!p)
                return -ENOMEM;
        p->function_by_key = hashmap_new(&function_key_hash_ops);
        p->module_by_name = hashmap_new(&string_hash_ops);
        p->threads = hashmap_new(&uint64_hash_ops);
        if (!p->function_by_key || !p->module_by_name || !p->threads)
                return -ENOMEM;
        *ret = TAKE_PTR(p);
        return 0;
}

Profile *profile_free(Profile *p)
{
        Thread *t;

        if (!p)
                return NULL;
        for (size_t i = 0; i < p->n_functions; i++) {
                free(p->functions[i]->name);
                free(p->functions[i]);
        }
        free(p->functions);
        for (size_t i = 0; i < p->n_modules; i++) {
                free(p->modules[i]->name);
                free(p->modules[i]);
        }
        free(p->modules);
        HASHMAP_FOREACH(t, p->threads) {
                free(t->name);
                free(t);
        }
        hashmap_free(p->threads);
        hashmap_free(p->function_by_key);
        hashmap_free(p->module_by_name);
        free(p);
        return NULL;
}

static int grow(void **array, size_t *allocated, size_t needed)
{
        void **a;
        size_t n;

        if (needed <= *allocated)
                return 0;
        n = MAX(*allocated * 2, (size_t)64);
        a = realloc(*array, n * sizeof(void *));
        if (!a)
                return -ENOMEM;
        *array = a;
        *allocated = n;
        return 0;
}

static int intern_module(Profile *p, const char *name, uint32_t *ret_id)
{
        _cleanup_free_ Module *m = NULL;
        void *v = hashmap_get(p->module_by_name, name);
        int r;

        if (v) {
                *ret_id = (uint32_t)(PTR_TO_UINT64(v) - 1);
                return 0;
        }
        r = grow((void **)&p->modules, &p->allocated_modules, p->n_modules + 1);
        if (r < 0)
                return r;
        m = calloc(1, sizeof(*m));
        if (!m)
                return -ENOMEM;
        m->name = strdup(name);
        if (!m->name)
                return -ENOMEM;
        r = hashmap_put(p->module_by_name, m->name, UINT64_TO_PTR(p->n_modules + 1));
        if (r < 0) {
                free(m->name);
                return r;
        }
        *ret_id = (uint32_t)p->n_modules;
        p->modules[p->n_modules++] = TAKE_PTR(m);
        return 0;
}

int profile_intern_function(Profile *p, const char *module, const char *function, uint32_t *ret_id)
{
        _cleanup_free_ Function *f = NULL;
        FunctionKey key;
        Function *existing;
        uint32_t module_id;
        int r;

        r = intern_module(p, module, &module_id);
        if (r < 0)
                return r;
        key = (FunctionKey){ .module_id = module_id, .name = function };
        existing = hashmap_get(p->function_by_key, &key);
        if (existing) {
                *ret_id = existing->id;
                return 0;
        }

        r = grow((void **)&p->functions, &p->allocated_functions, p->n_functions + 1);
        if (r < 0)
                return r;
        f = calloc(1, sizeof(*f));
        if (!f)
                return -ENOMEM;
        f->name = strdup(function);
        if (!f->name)
                return -ENOMEM;
        f->key = (FunctionKey){ .module_id = module_id, .name = f->name };
        f->id = (uint32_t)p->n_functions;
        r = hashmap_put(p->function_by_key, &f->key, f);
        if (r < 0) {
                free(f->name);
                return r;
        }
        *ret_id = f->id;
        p->functions[p->n_functions++] = TAKE_PTR(f);
        return 0;
}

static int count_thread(Profile *p, uint32_t tid, const char *name)
{
        Thread *t = hashmap_get(p->threads, UINT64_TO_PTR(tid));
        int r;

        if (!t) {
                _cleanup_free_ Thread *n = calloc(1, sizeof(*n));
                if (!n)
                        return -ENOMEM;
                n->tid = tid;
                r = hashmap_put(p->threads, UINT64_TO_PTR(tid), n);
                if (r < 0)
                        return r;
                t = TAKE_PTR(n);
        }
        /* Threads rename themselves (pthread_setname_np); the table shows the latest name. */
        if (name && (!t->name || strcmp(t->name, name) != 0)) {
                char *copy = strdup(name);
                if (!copy)
                        return -ENOMEM;
                free(t->name);
                t->name = copy;
        }
        t->samples++;
        return 0;
}

static void count_inclusive(Counts *c, uint64_t generation)
{
        if (c->generation == generation)
                return;
        c->generation = generation;
        c->inclusive++;
}

int profile_add_sample(Profile *p, const ProfileSample *s)
{
        uint64_t gen;
        int r;

        for (size_t i = 0; i < s->n_frames; i++)
                if (s->frames[i] >= p->n_functions)
                        return -EINVAL;

        /* The thread first: it is the only step that can fail, so a sample counts wholly or not at all. */
        r = count_thread(p, s->tid, s->thread_name);
        if (r < 0)
                return r;

        gen = ++p->generation;
        p->total++;
        for (size_t i = 0; i < s->n_frames; i++) {
                Function *f = p->functions[s->frames[i]];
                count_inclusive(&f->counts, gen);
                count_inclusive(&p->modules[f->key.module_id]->counts, gen);
        }
        if (s->n_frames > 0) {
                Function *leaf = p->functions[s->frames[0]];
                leaf->counts.exclusive++;
                p->modules[leaf->key.module_id]->counts.exclusive++;
        }
        return 0;
}

uint64_t profile_total(const Profile *p)
{
        return p->total;
}

size_t profile_n_functions(const Profile *p)
{
        return p->n_functions;
}

static int compare_rows(const ProfileRow *a, const ProfileRow *b, ProfileSort sort)
{
        uint64_t ka = sort == PROFILE_SORT_INCLUSIVE ? a->inclusive : a->exclusive;
        uint64_t kb = sort == PROFILE_SORT_INCLUSIVE ? b->inclusive : b->exclusive;
        uint64_t oa = sort == PROFILE_SORT_INCLUSIVE ? a->exclusive : a->inclusive;
        uint64_t ob = sort == PROFILE_SORT_INCLUSIVE ? b->exclusive : b->inclusive;
        int c;

        if (ka != kb)
                return ka > kb ? -1 : 1;
        if (oa != ob)
                return oa > ob ? -1 : 1;
        c = strcmp(a->name ? a->name : "", b->name ? b->name : "");
        if (c != 0)
                return c;
        if (a->module && b->module)
                return strcmp(a->module, b->module);
        return a->tid < b->tid ? -1 : a->tid > b->tid;
}

static int compare_inclusive(const void *a, const void *b)
{
        return compare_rows(a, b, PROFILE_SORT_INCLUSIVE);
}

static int compare_exclusive(const void *a, const void *b)
{
        return compare_rows(a, b, PROFILE_SORT_EXCLUSIVE);
}

static void sort_rows(ProfileRow *rows, size_t n, ProfileSort sort)
{
        qsort(rows, n, sizeof(ProfileRow), sort == PROFILE_SORT_INCLUSIVE ? compare_inclusive : compare_exclusive);
}

int profile_functions(const Profile *p, ProfileSort sort, size_t limit, ProfileRow **ret, size_t *ret_n)
{
        ProfileRow *rows;
        size_t n = 0;

        if (sort < 0 || sort >= _PROFILE_SORT_MAX)
                return -EINVAL;
        rows = calloc(MAX(p->n_functions, (size_t)1), sizeof(ProfileRow));
        if (!rows)
                return -ENOMEM;
        for (size_t i = 0; i < p->n_functions; i++) {
                const Function *f = p->functions[i];
                if (f->counts.inclusive == 0)
                        continue; /* interned, then the sample failed: not part of the profile */
                rows[n++] = (ProfileRow){
                        .name = f->name,
                        .module = p->modules[f->key.module_id]->name,
                        .inclusive = f->counts.inclusive,
                        .exclusive = f->counts.exclusive,
                };
        }
        sort_rows(rows, n, sort);
        *ret = rows;
        *ret_n = limit > 0 && limit < n ? limit : n;
        return 0;
}

int profile_modules(const Profile *p, ProfileRow **ret, size_t *ret_n)
{
        ProfileRow *rows;
        size_t n = 0;

        rows = calloc(MAX(p->n_modules, (size_t)1), sizeof(ProfileRow));
        if (!rows)
                return -ENOMEM;
        for (size_t i = 0; i < p->n_modules; i++) {
                const Module *m = p->modules[i];
                if (m->counts.inclusive == 0)
                        continue;
                rows[n++] = (ProfileRow){
                        .name = m->name,
                        .inclusive = m->counts.inclusive,
                        .exclusive = m->counts.exclusive,
                };
        }
        sort_rows(rows, n, PROFILE_SORT_INCLUSIVE);
        *ret = rows;
        *ret_n = n;
        return 0;
}

int profile_threads(const Profile *p, ProfileRow **ret, size_t *ret_n)
{
        ProfileRow *rows;
        const Thread *t;
        size_t n = 0;

        rows = calloc(MAX(hashmap_size(p->threads), (size_t)1), sizeof(ProfileRow));
        if (!rows)
                return -ENOMEM;
        HASHMAP_FOREACH(t, p->threads)
                rows[n++] = (ProfileRow){
                        .name = t->name ? t->name : "",
                        .tid = t->tid,
                        .inclusive = t->samples,
                        .exclusive = t->samples,
                };
        sort_rows(rows, n, PROFILE_SORT_INCLUSIVE);
        *ret = rows;
        *ret_n = n;
        return 0;
}
