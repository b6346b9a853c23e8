/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The tables a query reads: a profile's rows per function, module, thread and stack, sorted by a value. Apart
 * from profile.c, which counts: nothing here runs per sample. */
#include <assert.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "profile-internal.h"
#include "time-util.h"
#include "utf8.h"
static const char *const sort_names[_PROFILE_SORT_MAX] = {
        [PROFILE_SORT_INCLUSIVE] = "inclusive",
        [PROFILE_SORT_EXCLUSIVE] = "exclusive",
        [PROFILE_SORT_ELAPSED_INCLUSIVE] = "elapsed-inclusive",
        [PROFILE_SORT_ELAPSED_EXCLUSIVE] = "elapsed-exclusive",
        [PROFILE_SORT_APPLICATION_INCLUSIVE] = "application-inclusive",
        [PROFILE_SORT_APPLICATION_EXCLUSIVE] = "application-exclusive",
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

double profile_ns_to_samples(uint64_t ns, uint32_t frequency)
{
        return (double)ns * (double)frequency / NSEC_PER_SEC;
}

double profile_elapsed(const ProfileValues *v, uint32_t frequency)
{
        assert(v);

        return (double)(v->user_samples + v->kernel_samples) +
               profile_ns_to_samples(v->blocked_ns + v->preempted_ns, frequency);
}

double profile_application(const ProfileValues *v)
{
        assert(v);

        return (double)v->user_samples;
}

double profile_row_value(const ProfileRow *row, ProfileSort key, uint32_t frequency)
{
        assert(row);

        switch (key) {
        case PROFILE_SORT_INCLUSIVE:
                return (double)row->inclusive;
        case PROFILE_SORT_EXCLUSIVE:
                return (double)row->exclusive;
        case PROFILE_SORT_ELAPSED_INCLUSIVE:
                return profile_elapsed(&row->inclusive_values, frequency);
        case PROFILE_SORT_ELAPSED_EXCLUSIVE:
                return profile_elapsed(&row->exclusive_values, frequency);
        case PROFILE_SORT_APPLICATION_INCLUSIVE:
                return profile_application(&row->inclusive_values);
        case PROFILE_SORT_APPLICATION_EXCLUSIVE:
                return profile_application(&row->exclusive_values);
        default:
                return 0;
        }
}

size_t profile_n_functions(const Profile *p)
{
        return p->n_functions;
}

static ProfileSort other_key(ProfileSort key)
{
        /* The two keys of a kind pair up: inclusive with exclusive. */
        return (ProfileSort)(key ^ 1);
}

typedef struct SortContext {
        ProfileSort key;
        uint32_t frequency;
} SortContext;

static int compare_values(double a, double b)
{
        return a > b ? -1 : a < b ? 1 : 0;
}

static int compare_rows(const void *x, const void *y, void *userdata)
{
        const ProfileRow *a = x, *b = y;
        const SortContext *c = userdata;
        int d;

        d = compare_values(profile_row_value(a, c->key, c->frequency), profile_row_value(b, c->key, c->frequency));
        if (d != 0)
                return d;
        d = compare_values(profile_row_value(a, other_key(c->key), c->frequency),
                           profile_row_value(b, other_key(c->key), c->frequency));
        if (d != 0)
                return d;
        d = strcmp(a->name ? a->name : "", b->name ? b->name : "");
        if (d != 0)
                return d;
        if (a->module && b->module) {
                d = strcmp(a->module, b->module);
                /* The function called before the same one inlined. */
                return d != 0 ? d : (int)a->inlined - (int)b->inlined;
        }
        return a->tid < b->tid ? -1 : a->tid > b->tid;
}

static void sort_rows(const Profile *p, ProfileRow *rows, size_t n, ProfileSort sort)
{
        qsort_r(rows, n, sizeof(ProfileRow), compare_rows, &(SortContext){ .key = sort, .frequency = p->frequency });
}

/* Whether a row belongs to the table of this kind: samples for the sampling values, elapsed time (which
 * holds the application time) for the others. Interned functions whose sample failed have neither. */
static bool row_listed(const Counts *c, ProfileSort sort)
{
        const ProfileValues *v = &c->inclusive_values;

        if (!profile_sort_is_values(sort))
                return c->inclusive > 0;
        return v->user_samples || v->kernel_samples || v->blocked_ns || v->preempted_ns;
}

static bool valid_sort(ProfileSort sort)
{
        return sort >= 0 && sort < _PROFILE_SORT_MAX;
}

int profile_functions(const Profile *p, ProfileSort sort, size_t limit, ProfileRow **ret, size_t *ret_n)
{
        ProfileRow *rows;
        size_t n = 0;

        assert(p);
        assert(ret);
        assert(ret_n);

        if (!valid_sort(sort))
                return -EINVAL;
        rows = calloc(MAX(p->n_functions, (size_t)1), sizeof(ProfileRow));
        if (!rows)
                return -ENOMEM;
        for (size_t i = 0; i < p->n_functions; i++) {
                const Function *f = p->functions[i];
                if (f->counted != f || !row_listed(&f->counts, sort)) /* a line: counted in its function */
                        continue;
                rows[n++] = (ProfileRow){
                        .name = f->name,
                        .module = p->modules[f->key.module_id]->name,
                        .inlined = f->key.inlined,
                        .inclusive = f->counts.inclusive,
                        .exclusive = f->counts.exclusive,
                        .inclusive_values = f->counts.inclusive_values,
                        .exclusive_values = f->counts.exclusive_values,
                };
        }
        sort_rows(p, rows, n, sort);
        *ret = rows;
        *ret_n = limit > 0 && limit < n ? limit : n;
        return 0;
}

int profile_modules(const Profile *p, ProfileSort sort, ProfileRow **ret, size_t *ret_n)
{
        ProfileRow *rows;
        size_t n = 0;

        assert(p);
        assert(ret);
        assert(ret_n);

        if (!valid_sort(sort))
                return -EINVAL;
        rows = calloc(MAX(p->n_modules, (size_t)1), sizeof(ProfileRow));
        if (!rows)
                return -ENOMEM;
        for (size_t i = 0; i < p->n_modules; i++) {
                const Module *m = p->modules[i];
                if (!row_listed(&m->counts, sort))
                        continue;
                rows[n++] = (ProfileRow){
                        .name = m->name,
                        .inclusive = m->counts.inclusive,
                        .exclusive = m->counts.exclusive,
                        .inclusive_values = m->counts.inclusive_values,
                        .exclusive_values = m->counts.exclusive_values,
                };
        }
        sort_rows(p, rows, n, sort);
        *ret = rows;
        *ret_n = n;
        return 0;
}

int profile_threads(const Profile *p, ProfileSort sort, ProfileRow **ret, size_t *ret_n)
{
        ProfileRow *rows;
        const Thread *t;
        size_t n = 0;

        assert(p);
        assert(ret);
        assert(ret_n);

        if (!valid_sort(sort))
                return -EINVAL;
        rows = calloc(MAX(hashmap_size(p->threads), (size_t)1), sizeof(ProfileRow));
        if (!rows)
                return -ENOMEM;
        HASHMAP_FOREACH(t, p->threads) {
                /* A thread seen only off the CPU has no row among the sampling values. */
                if (!profile_sort_is_values(sort) && t->samples == 0)
                        continue;
                rows[n++] = (ProfileRow){
                        .name = t->name ? t->name : "",
                        .tid = t->tid,
                        .inclusive = t->samples,
                        .exclusive = t->samples,
                        .inclusive_values = t->values,
                        .exclusive_values = t->values,
                };
        }
        sort_rows(p, rows, n, sort);
        *ret = rows;
        *ret_n = n;
        return 0;
}

static int compare_stack_rows(const void *x, const void *y)
{
        const ProfileStackRow *a = x, *b = y;

        if (a->samples != b->samples)
                return a->samples > b->samples ? -1 : 1;
        if (a->n_frames != b->n_frames)
                return a->n_frames < b->n_frames ? -1 : 1;
        return memcmp(a->frames, b->frames, a->n_frames * sizeof(uint32_t));
}

static int compare_stack_frames(const void *x, const void *y)
{
        const ProfileStackRow *a = x, *b = y;

        if (a->n_frames != b->n_frames)
                return a->n_frames < b->n_frames ? -1 : 1;
        if (a->n_kernel_frames != b->n_kernel_frames)
                return a->n_kernel_frames < b->n_kernel_frames ? -1 : 1;
        return memcmp(a->frames, b->frames, a->n_frames * sizeof(uint32_t));
}

/* The rows of every stack with the lines of functions (profile_intern_line()) made their functions, those that
 * became one stack merged, and those with on-CPU samples kept: a new block, the rows first and their frames
 * after them, that one free() releases. */
static int rows_without_lines(const Profile *p, ProfileStackRow **rows, size_t *n)
{
        ProfileStackRow *block;
        uint32_t *frames;
        size_t n_frames = 0, m = 0, kept = 0;

        for (size_t i = 0; i < *n; i++)
                n_frames += (*rows)[i].n_frames;
        block = malloc(MAX(*n, (size_t)1) * sizeof(ProfileStackRow) + n_frames * sizeof(uint32_t));
        if (!block)
                return -ENOMEM;
        frames = (uint32_t *)(block + MAX(*n, (size_t)1));
        for (size_t i = 0; i < *n; i++) {
                block[i] = (*rows)[i];
                for (size_t j = 0; j < block[i].n_frames; j++)
                        frames[j] = p->functions[block[i].frames[j]]->counted->id;
                block[i].frames = frames;
                frames += block[i].n_frames;
        }
        qsort(block, *n, sizeof(ProfileStackRow), compare_stack_frames);
        for (size_t i = 0; i < *n; i++) {
                if (m > 0 && compare_stack_frames(&block[m - 1], &block[i]) == 0) {
                        block[m - 1].samples += block[i].samples;
                        profile_values_add(&block[m - 1].values, &block[i].values);
                } else
                        block[m++] = block[i];
        }
        /* The stacks with on-CPU samples only, as without lines. */
        for (size_t i = 0; i < m; i++)
                if (block[i].samples > 0)
                        block[kept++] = block[i];
        free(*rows);
        *rows = block;
        *n = kept;
        return 0;
}

int profile_stacks(const Profile *p, size_t limit, ProfileStackRow **ret, size_t *ret_n)
{
        ProfileStackRow *rows;
        const Stack *stack;
        size_t n = 0;

        assert(p);
        assert(ret);
        assert(ret_n);

        rows = calloc(MAX(hashmap_size(p->stacks), (size_t)1), sizeof(ProfileStackRow));
        if (!rows)
                return -ENOMEM;
        HASHMAP_FOREACH(stack, p->stacks) {
                /* With lines, a stack without samples may add its off-CPU time to one that has some. */
                if (stack->samples == 0 && p->n_lines == 0)
                        continue;
                rows[n++] = (ProfileStackRow){
                        .frames = stack->frames,
                        .n_frames = stack->key.n_frames,
                        .n_kernel_frames = stack->n_kernel_frames,
                        .samples = stack->samples,
                        .values = stack->values,
                };
        }
        if (p->n_lines > 0) {
                int r = rows_without_lines(p, &rows, &n);
                if (r < 0) {
                        free(rows);
                        return r;
                }
        }
        qsort(rows, n, sizeof(ProfileStackRow), compare_stack_rows);
        *ret = rows;
        *ret_n = limit > 0 && limit < n ? limit : n;
        return 0;
}

/* A function's source: a column of its table (table-schema.h), set where names are resolved, never per sample. */
int profile_set_source(Profile *p, uint32_t id, const char *source)
{
        char *copy;

        assert(p);
        assert(source);

        if (id >= p->n_functions)
                return -EINVAL;
        if (p->functions[id]->source || source[0] == '\0' || id == p->other_id || id == p->unknown_id)
                return 0;
        copy = utf8_escape_dup(source);
        if (!copy)
                return -ENOMEM;
        p->functions[id]->source = copy;
        return 0;
}

const char *profile_function_source(const Profile *p, uint32_t id)
{
        return id < p->n_functions ? p->functions[id]->source : NULL;
}
