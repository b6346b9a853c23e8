/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "array-util.h"
#include "diff-base-pprof.h"
#include "file-util.h"
#include "hashmap.h"
#include "open-util.h"
#include "pprof-read.h"

/* A pprof file is a few MiB compressed; a bound keeps a wrong path (a disk image) from being read whole. */
#define PPROF_FILE_MAX_BYTES ((size_t)64 * 1024 * 1024)

static int stacks_of(const PprofRead *p, StackTable **ret)
{
        _cleanup_(stack_table_freep) StackTable *t = calloc(1, sizeof(StackTable));

        if (!t)
                return -ENOMEM;
        t->functions = calloc(MAX(p->n_functions, (size_t)1), sizeof(StackFunction));
        t->stacks = calloc(MAX(p->n_stacks, (size_t)1), sizeof(StackEntry));
        if (!t->functions || !t->stacks)
                return -ENOMEM;
        /* Counted from the start, so that what a failure leaves half made is freed with the rest. */
        t->n_functions = p->n_functions;
        t->n_stacks = p->n_stacks;
        for (size_t i = 0; i < p->n_functions; i++) {
                StackFunction *f = &t->functions[i];

                f->module = strdup(p->functions[i].module);
                f->function = strdup(p->functions[i].name);
                if (!f->module || !f->function)
                        return -ENOMEM;
                f->inlined = p->functions[i].inlined;
                f->python = stack_module_is_python(f->module);
        }
        for (size_t i = 0; i < p->n_stacks; i++) {
                const PprofReadStack *s = &p->stacks[i];
                StackEntry *e = &t->stacks[i];

                e->frames = malloc(MAX(s->n_frames, (size_t)1) * sizeof(uint32_t));
                if (!e->frames)
                        return -ENOMEM;
                memcpy(e->frames, s->frames, s->n_frames * sizeof(uint32_t));
                e->n_frames = s->n_frames;
                e->n_kernel = s->n_kernel;
                e->samples = s->samples;
        }
        t->total_samples = t->listed_samples = p->total_samples;
        t->window_start_usec = p->start_usec;
        t->window_end_usec = p->end_usec;
        t->window_usec = p->end_usec - p->start_usec;
        *ret = TAKE_PTR(t);
        return 0;
}

/* Counts of the rows of one table: inclusive once per stack, exclusive at the leaf. */
typedef struct Tally {
        uint64_t *inclusive, *exclusive;
        size_t *stamp; /* the stack (+1) that counted the row last */
} Tally;

static void tally_done(Tally *t)
{
        free(t->inclusive);
        free(t->exclusive);
        free(t->stamp);
}

static int tally_new(Tally *t, size_t n)
{
        t->inclusive = calloc(MAX(n, (size_t)1), sizeof(uint64_t));
        t->exclusive = calloc(MAX(n, (size_t)1), sizeof(uint64_t));
        t->stamp = calloc(MAX(n, (size_t)1), sizeof(size_t));
        return t->inclusive && t->exclusive && t->stamp ? 0 : -ENOMEM;
}

static void tally_add(Tally *t, size_t row, size_t stack, uint64_t samples, bool leaf)
{
        if (t->stamp[row] != stack + 1) {
                t->stamp[row] = stack + 1;
                t->inclusive[row] += samples;
        }
        if (leaf)
                t->exclusive[row] += samples;
}

static int table_new(ReportKind kind, const PprofRead *p, ReportTable **ret)
{
        int r = report_table_new(kind, ret);

        if (r < 0)
                return r;
        (*ret)->total_samples = p->total_samples;
        (*ret)->window_start_usec = p->start_usec;
        (*ret)->window_end_usec = p->end_usec;
        (*ret)->window_usec = p->end_usec - p->start_usec;
        return 0;
}

static int append(ReportTable *t, const Tally *c, size_t i, uint32_t id, const char *name, const char *module,
                  bool inlined)
{
        double total = t->total_samples ? (double)t->total_samples : 1.0;
        ReportRow row = {
                .id = id,
                .name = (char *)name,
                .module = (char *)module,
                .inlined = inlined,
                .inclusive = c->inclusive[i],
                .exclusive = c->exclusive[i],
        };

        if (row.inclusive == 0)
                return 0;
        row.inclusive_percent = 100.0 * (double)row.inclusive / total;
        row.exclusive_percent = 100.0 * (double)row.exclusive / total;
        return report_table_append_row(t, &row);
}

static int functions_of(const PprofRead *p, ReportTable **ret)
{
        _cleanup_(report_table_freep) ReportTable *t = NULL;
        _cleanup_(tally_done) Tally c = {};
        int r;

        r = table_new(REPORT_FUNCTIONS, p, &t);
        if (r >= 0)
                r = tally_new(&c, p->n_functions);
        if (r < 0)
                return r;
        for (size_t s = 0; s < p->n_stacks; s++)
                for (size_t i = 0; i < p->stacks[s].n_frames; i++)
                        tally_add(&c, p->stacks[s].frames[i], s, p->stacks[s].samples, i + 1 == p->stacks[s].n_frames);
        for (size_t i = 0; i < p->n_functions && r >= 0; i++)
                r = append(t, &c, i, 0, p->functions[i].name, p->functions[i].module, p->functions[i].inlined);
        if (r < 0)
                return r;
        report_table_sort(t, PROFILE_SORT_INCLUSIVE);
        *ret = TAKE_PTR(t);
        return 0;
}

/* Rows by a name: the index of each distinct name, in the order met. */
typedef struct Names {
        Hashmap *index; /* name -> index + 1 */
        const char **names;
        uint32_t *ids;
        size_t n, allocated;
} Names;

static void names_done(Names *n)
{
        hashmap_free(n->index);
        free(n->names);
        free(n->ids);
}

static int name_index(Names *n, const char *name, uint32_t id, size_t *ret)
{
        void *found = hashmap_get(n->index, name);
        uint32_t *ids;
        int r;

        if (found) {
                *ret = PTR_TO_UINT64(found) - 1;
                return 0;
        }
        r = array_grow_one(&n->names, &n->allocated, n->n, sizeof(const char *));
        if (r < 0)
                return r;
        ids = reallocarray(n->ids, n->allocated, sizeof(uint32_t));
        if (!ids)
                return -ENOMEM;
        n->ids = ids;
        r = hashmap_put(n->index, name, UINT64_TO_PTR(n->n + 1));
        if (r < 0)
                return r;
        n->names[n->n] = name;
        n->ids[n->n] = id;
        *ret = n->n++;
        return 0;
}

/* The modules' table, or the threads' (by name: the file's TIDs name threads of another time). */
static int named_rows_of(const PprofRead *p, ReportKind kind, ReportTable **ret)
{
        _cleanup_(report_table_freep) ReportTable *t = NULL;
        _cleanup_(names_done) Names names = { .index = hashmap_new(&string_hash_ops) };
        _cleanup_(tally_done) Tally c = {};
        size_t rows = kind == REPORT_MODULES ? p->n_functions : p->n_stacks;
        int r;

        if (!names.index)
                return -ENOMEM;
        r = table_new(kind, p, &t);
        if (r >= 0)
                r = tally_new(&c, rows); /* at most a row per function, or per stack */
        for (size_t s = 0; s < p->n_stacks && r >= 0; s++) {
                const PprofReadStack *st = &p->stacks[s];
                size_t row;

                if (kind == REPORT_THREADS) {
                        if (!st->thread)
                                continue; /* a file without threads has no thread rows */
                        r = name_index(&names, st->thread, st->tid, &row);
                        if (r >= 0)
                                tally_add(&c, row, s, st->samples, true);
                        continue;
                }
                for (size_t i = 0; i < st->n_frames && r >= 0; i++) {
                        r = name_index(&names, p->functions[st->frames[i]].module, 0, &row);
                        if (r >= 0)
                                tally_add(&c, row, s, st->samples, i + 1 == st->n_frames);
                }
        }
        for (size_t i = 0; i < names.n && r >= 0; i++)
                r = append(t, &c, i, names.ids[i], names.names[i], NULL, false);
        if (r < 0)
                return r;
        report_table_sort(t, PROFILE_SORT_INCLUSIVE);
        *ret = TAKE_PTR(t);
        return 0;
}

int window_tables_from_pprof(const uint8_t *data, size_t size, WindowTables *ret)
{
        _cleanup_(pprof_read_freep) PprofRead *p = NULL;
        _cleanup_(window_tables_done) WindowTables w = {};
        int r;

        r = pprof_read(data, size, &p);
        if (r < 0)
                return r;
        w.frequency = p->frequency;
        w.window_usec = p->end_usec - p->start_usec;
        w.until_usec = p->end_usec;
        r = functions_of(p, &w.functions);
        if (r >= 0)
                r = named_rows_of(p, REPORT_MODULES, &w.modules);
        if (r >= 0)
                r = named_rows_of(p, REPORT_THREADS, &w.threads);
        if (r >= 0)
                r = stacks_of(p, &w.stacks);
        if (r < 0)
                return r;
        *ret = w;
        w = (WindowTables){};
        return 0;
}

int window_tables_from_pprof_file(const char *path, WindowTables *ret)
{
        _cleanup_close_ int fd = -1;
        _cleanup_free_ void *data = NULL;
        size_t size;
        int r;

        /* Opened as open_regular() opens what a target names: a FIFO or a device behind the path is refused, not
         * opened. Read, never mapped: a file truncated under a mapping is a SIGBUS. */
        fd = open_regular(path, 0);
        if (fd < 0)
                return fd;
        r = read_fd_full(fd, PPROF_FILE_MAX_BYTES, &data, &size);
        if (r < 0)
                return r;
        return window_tables_from_pprof(data, size, ret);
}
