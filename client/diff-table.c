/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "array-util.h"
#include "diff-table.h"
#include "hashmap.h"

static const char *const by_names[_DIFF_BY_MAX] = {
        [DIFF_BY_FUNCTION] = "function",
        [DIFF_BY_MODULE] = "module",
        [DIFF_BY_THREAD] = "thread",
        [DIFF_BY_STACK] = "stack",
};

DiffBy diff_by_from_string(const char *s)
{
        for (int i = 0; i < _DIFF_BY_MAX; i++)
                if (strcmp(s, by_names[i]) == 0)
                        return (DiffBy)i;
        return _DIFF_BY_INVALID;
}

const char *diff_by_to_string(DiffBy by)
{
        return by >= 0 && by < _DIFF_BY_MAX ? by_names[by] : NULL;
}

DiffTable *diff_table_free(DiffTable *t)
{
        if (!t)
                return NULL;
        for (size_t i = 0; i < t->n_strings; i++)
                free(t->strings[i]);
        free(t->strings);
        free(t->rows);
        free(t);
        return NULL;
}

/* The building state: the rows by their keys ("\x1f"-separated names), the keys owned here. */
typedef struct Builder {
        DiffTable *t;
        size_t allocated_rows, allocated_strings;
        Hashmap *by_key; /* key -> row index + 1 */
        char **keys;
        size_t n_keys, allocated_keys;
} Builder;

static void builder_done(Builder *b)
{
        for (size_t i = 0; i < b->n_keys; i++)
                free(b->keys[i]);
        free(b->keys);
        hashmap_free(b->by_key);
}

/* A string the table keeps (a folded stack). */
static int keep_string(Builder *b, char *s, const char **ret)
{
        int r;

        if (!s)
                return -ENOMEM;
        r = array_grow_one(&b->t->strings, &b->allocated_strings, b->t->n_strings, sizeof(char *));
        if (r < 0) {
                free(s);
                return r;
        }
        b->t->strings[b->t->n_strings++] = s;
        *ret = s;
        return 0;
}

/* The row of key, made with the names given when new. */
static int row_for(Builder *b, char *key, const char *name, const char *module, bool inlined, uint32_t tid,
                   DiffRow **ret)
{
        void *found;
        int r;

        if (!key)
                return -ENOMEM;
        found = hashmap_get(b->by_key, key);
        if (found) {
                free(key);
                *ret = &b->t->rows[PTR_TO_UINT64(found) - 1];
                return 0;
        }
        r = array_grow_one(&b->keys, &b->allocated_keys, b->n_keys, sizeof(char *));
        if (r >= 0)
                r = array_grow_one(&b->t->rows, &b->allocated_rows, b->t->n_rows, sizeof(DiffRow));
        if (r < 0) {
                free(key);
                return r;
        }
        b->keys[b->n_keys++] = key;
        r = hashmap_put(b->by_key, key, UINT64_TO_PTR(b->t->n_rows + 1));
        if (r < 0)
                return r;
        b->t->rows[b->t->n_rows] = (DiffRow){ .name = name, .module = module, .inlined = inlined, .tid = tid };
        *ret = &b->t->rows[b->t->n_rows++];
        return 0;
}

static char *key_of(const char *a, const char *b, unsigned n)
{
        char *key;

        return asprintf(&key, "%s\x1f%s\x1f%u", a, b ?: "", n) < 0 ? NULL : key;
}

static int add_table_rows(Builder *b, const ReportTable *t, bool is_new, bool thread_by_name)
{
        for (size_t i = 0; i < t->n_rows; i++) {
                const ReportRow *row = &t->rows[i];
                uint32_t tid = b->t->by == DIFF_BY_THREAD && !thread_by_name ? row->id : 0;
                DiffRow *d;
                DiffSide *side;
                int r;

                r = row_for(b, key_of(row->name ?: "", row->module, row->inlined ? UINT32_MAX : tid), row->name ?: "",
                            row->module, row->inlined, tid, &d);
                if (r < 0)
                        return r;
                side = is_new ? &d->new : &d->base;
                /* Two threads of one name in a process, matched by name: summed. */
                side->inclusive += row->inclusive;
                side->exclusive += row->exclusive;
        }
        return 0;
}

/* A stack as its folded line: the frames outermost first, kernel ones marked "_[k]" and inlined ones "_[i]", as
 * report --by stack prints them. */
static char *folded(const StackTable *t, const StackEntry *s)
{
        char *buf = NULL;
        size_t size = 0;
        FILE *f = open_memstream(&buf, &size);

        if (!f)
                return NULL;
        for (size_t i = 0; i < s->n_frames; i++)
                fprintf(f, "%s%s%s", i > 0 ? ";" : "", t->functions[s->frames[i]].function,
                        stack_entry_is_kernel(s, i) ? "_[k]" : t->functions[s->frames[i]].inlined ? "_[i]" : "");
        if (fclose(f) != 0) {
                free(buf);
                return NULL;
        }
        return buf;
}

static int add_stacks(Builder *b, const StackTable *t, bool is_new)
{
        for (size_t i = 0; i < t->n_stacks; i++) {
                const char *name;
                DiffRow *d;
                DiffSide *side;
                int r;

                r = keep_string(b, folded(t, &t->stacks[i]), &name);
                if (r < 0)
                        return r;
                r = row_for(b, strdup(name), name, NULL, false, 0, &d);
                if (r < 0)
                        return r;
                side = is_new ? &d->new : &d->base;
                side->inclusive += t->stacks[i].samples;
                side->exclusive += t->stacks[i].samples;
        }
        return 0;
}

static int add_side(Builder *b, const WindowTables *w, bool is_new, bool thread_by_name)
{
        switch (b->t->by) {
        case DIFF_BY_FUNCTION:
                return add_table_rows(b, w->functions, is_new, false);
        case DIFF_BY_MODULE:
                return add_table_rows(b, w->modules, is_new, false);
        case DIFF_BY_THREAD:
                return add_table_rows(b, w->threads, is_new, thread_by_name);
        case DIFF_BY_STACK:
                return add_stacks(b, w->stacks, is_new);
        default:
                return -EINVAL;
        }
}

static DiffProfile profile_of(const WindowTables *w)
{
        return (DiffProfile){
                .total = w->functions->total_samples,
                .frequency = w->frequency,
                .start_usec = w->functions->window_start_usec,
                .end_usec = w->functions->window_end_usec,
        };
}

/* A side's share and rate: its count in its profile's samples, and in CPU milliseconds per second of its span. */
static void side_values(DiffSide *s, const DiffProfile *p)
{
        double seconds = p->end_usec > p->start_usec ? (double)(p->end_usec - p->start_usec) / 1e6 : 0.0;

        s->percent = p->total > 0 ? 100.0 * (double)s->inclusive / (double)p->total : 0.0;
        s->ms_per_second = seconds > 0 && p->frequency > 0 ? 1000.0 * (double)s->inclusive / p->frequency / seconds
                                                             : 0.0;
}

/* The variance of a share estimated from n samples, in points squared: each sample is in the row or not. */
static double share_variance(double percent, uint64_t n)
{
        double p = percent / 100.0;

        return n > 0 ? 1e4 * p * (1.0 - p) / (double)n : 0.0;
}

static void row_values(DiffRow *d, const DiffTable *t)
{
        side_values(&d->base, &t->base);
        side_values(&d->new, &t->new);
        d->points = d->new.percent - d->base.percent;
        d->ms_per_second = d->new.ms_per_second - d->base.ms_per_second;
        d->se_points = sqrt(share_variance(d->base.percent, t->base.total) +
                            share_variance(d->new.percent, t->new.total));
        d->is_new = d->base.inclusive == 0 && d->new.inclusive > 0;
        d->gone = d->base.inclusive > 0 && d->new.inclusive == 0;
        /* A share seen as 0 or 100% has no spread of its own: one sample's worth stands for it. */
        if (d->is_new || d->gone)
                d->se_points = MAX(d->se_points, 100.0 / (double)MAX(MIN(t->base.total, t->new.total), (uint64_t)1));
        d->noise = fabs(d->points) <= 2.0 * d->se_points;
}

static int compare_rows(const void *x, const void *y)
{
        const DiffRow *a = x, *b = y;
        double pa = fabs(a->points), pb = fabs(b->points), ra = fabs(a->ms_per_second), rb = fabs(b->ms_per_second);
        int c;

        if (pa != pb)
                return pa > pb ? -1 : 1;
        if (ra != rb)
                return ra > rb ? -1 : 1;
        c = strcmp(a->name, b->name);
        if (c != 0)
                return c;
        c = strcmp(a->module ?: "", b->module ?: "");
        if (c != 0)
                return c;
        return a->tid < b->tid ? -1 : a->tid > b->tid;
}

int diff_tables(const WindowTables *base, const WindowTables *new, DiffBy by, bool thread_by_name, DiffTable **ret)
{
        _cleanup_(diff_table_freep) DiffTable *t = calloc(1, sizeof(DiffTable));
        _cleanup_(builder_done) Builder b = { .t = t };
        int r;

        if (!t)
                return -ENOMEM;
        if (by < 0 || by >= _DIFF_BY_MAX)
                return -EINVAL;
        b.by_key = hashmap_new(&string_hash_ops);
        if (!b.by_key)
                return -ENOMEM;
        t->by = by;
        t->base = profile_of(base);
        t->new = profile_of(new);
        r = add_side(&b, base, false, thread_by_name);
        if (r >= 0)
                r = add_side(&b, new, true, thread_by_name);
        if (r < 0)
                return r;
        for (size_t i = 0; i < t->n_rows; i++)
                row_values(&t->rows[i], t);
        if (t->n_rows > 0)
                qsort(t->rows, t->n_rows, sizeof(DiffRow), compare_rows);
        *ret = TAKE_PTR(t);
        return 0;
}
