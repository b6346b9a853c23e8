/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>

#include "diff-output.h"
#include "output-util.h"

static const ColumnSpec columns[] = {
        { "NAME", 0.4, SCOLS_FL_TRUNC },  { "MODULE", 0.2, SCOLS_FL_TRUNC }, { "BASE%", 1, SCOLS_FL_RIGHT },
        { "NEW%", 1, SCOLS_FL_RIGHT },    { "DIFF", 1, SCOLS_FL_RIGHT },     { "BASE-MS/S", 1, SCOLS_FL_RIGHT },
        { "NEW-MS/S", 1, SCOLS_FL_RIGHT }, { "DIFF-MS/S", 1, SCOLS_FL_RIGHT }, { "MARK", 1, 0 },
};
enum { COL_NAME, COL_MODULE, COL_BASE, COL_NEW, COL_DIFF, COL_BASE_RATE, COL_NEW_RATE, COL_DIFF_RATE, COL_MARK,
       N_COLUMNS };

static const char *const name_headings[_DIFF_BY_MAX] = {
        [DIFF_BY_FUNCTION] = "FUNCTION",
        [DIFF_BY_MODULE] = "MODULE",
        [DIFF_BY_THREAD] = "THREAD",
        [DIFF_BY_STACK] = "STACK",
};

static double seconds_of(const DiffProfile *p)
{
        return p->end_usec > p->start_usec ? (double)(p->end_usec - p->start_usec) / 1e6 : 0.0;
}

/* "base: 6012 samples at 99 Hz in 60.00 s (12:00:01 to 12:01:01)" on stderr, which the rows' readers skip. */
static void print_profile(const char *what, const DiffProfile *p)
{
        char start[32], end[32];

        format_timestamp(start, sizeof(start), p->start_usec);
        format_timestamp(end, sizeof(end), p->end_usec);
        fprintf(stderr, "%s: %" PRIu64 " samples at %" PRIu32 " Hz in %.2f s (%s to %s)\n", what, p->total,
                p->frequency, seconds_of(p), start, end);
}

static const char *mark(const DiffRow *d, char *buf, size_t size)
{
        snprintf(buf, size, "%s%s%s", d->is_new ? "NEW" : d->gone ? "GONE" : "", (d->is_new || d->gone) && d->noise ? " " : "",
                 d->noise ? "noise" : "");
        return buf;
}

static int print_text(const DiffTable *t, size_t n, OutputFlags flags)
{
        _cleanup_(scols_unref_tablep) struct libscols_table *tb = NULL;
        ColumnSpec specs[N_COLUMNS];
        size_t n_columns = 0;
        int r;

        for (size_t i = 0; i < N_COLUMNS; i++) {
                if (i == COL_MODULE && t->by != DIFF_BY_FUNCTION)
                        continue;
                specs[n_columns] = columns[i];
                if (i == COL_NAME)
                        specs[n_columns].name = name_headings[t->by];
                n_columns++;
        }
        r = table_new(specs, n_columns, flags, &tb);
        if (r < 0)
                return r;
        for (size_t i = 0; i < n; i++) {
                const DiffRow *d = &t->rows[i];
                char cells[N_COLUMNS][64], name[320];
                const char *line[N_COLUMNS];
                size_t k = 0;

                if (t->by == DIFF_BY_THREAD && d->tid > 0)
                        snprintf(name, sizeof(name), "%s (%" PRIu32 ")", d->name, d->tid);
                else
                        snprintf(name, sizeof(name), "%s%s", d->name, d->inlined ? " (inlined)" : "");
                line[k++] = name;
                if (t->by == DIFF_BY_FUNCTION)
                        line[k++] = d->module ?: "";
                snprintf(cells[0], 64, "%.2f", d->base.percent);
                snprintf(cells[1], 64, "%.2f", d->new.percent);
                snprintf(cells[2], 64, "%+.2f", d->points);
                snprintf(cells[3], 64, "%.1f", d->base.ms_per_second);
                snprintf(cells[4], 64, "%.1f", d->new.ms_per_second);
                snprintf(cells[5], 64, "%+.1f", d->ms_per_second);
                for (size_t c = 0; c < 6; c++)
                        line[k++] = cells[c];
                line[k++] = mark(d, cells[6], 64);
                r = table_add_line(tb, k, line);
                if (r < 0)
                        return r;
        }
        if (!(flags & OUTPUT_NO_HEADINGS)) {
                print_profile("base", &t->base);
                print_profile("new", &t->new);
        }
        return scols_print_table(tb);
}

static json_object *profile_to_json(const DiffProfile *p)
{
        json_object *o = json_object_new_object();

        if (o && (json_add_u64(o, "total_samples", p->total) < 0 || json_add_u64(o, "frequency", p->frequency) < 0 ||
                  json_add_u64(o, "start_usec", p->start_usec) < 0 || json_add_u64(o, "end_usec", p->end_usec) < 0 ||
                  json_add_double(o, "seconds", seconds_of(p)) < 0)) {
                json_object_put(o);
                return NULL;
        }
        return o;
}

static int side_to_json(json_object *o, const char *prefix, const DiffSide *s)
{
        char key[64];
        int r;

        snprintf(key, sizeof(key), "%s_inclusive", prefix);
        r = json_add_u64(o, key, s->inclusive);
        snprintf(key, sizeof(key), "%s_exclusive", prefix);
        if (r >= 0)
                r = json_add_u64(o, key, s->exclusive);
        snprintf(key, sizeof(key), "%s_percent", prefix);
        if (r >= 0)
                r = json_add_double(o, key, s->percent);
        snprintf(key, sizeof(key), "%s_ms_per_second", prefix);
        if (r >= 0)
                r = json_add_double(o, key, s->ms_per_second);
        return r;
}

static int row_to_json(const DiffTable *t, const DiffRow *d, json_object **ret)
{
        _cleanup_json_ json_object *o = json_object_new_object();
        int r;

        if (!o)
                return -ENOMEM;
        r = json_add_string(o, diff_by_to_string(t->by), d->name);
        if (r >= 0 && t->by == DIFF_BY_FUNCTION) {
                r = json_add_string(o, "module", d->module);
                if (r >= 0)
                        r = json_add_bool(o, "inlined", d->inlined);
        }
        if (r >= 0 && t->by == DIFF_BY_THREAD && d->tid > 0)
                r = json_add_u64(o, "tid", d->tid);
        if (r >= 0)
                r = side_to_json(o, "base", &d->base);
        if (r >= 0)
                r = side_to_json(o, "new", &d->new);
        if (r >= 0)
                r = json_add_double(o, "diff_points", d->points);
        if (r >= 0)
                r = json_add_double(o, "diff_ms_per_second", d->ms_per_second);
        if (r >= 0)
                r = json_add_double(o, "standard_error_points", d->se_points);
        if (r >= 0)
                r = json_add_bool(o, "new", d->is_new);
        if (r >= 0)
                r = json_add_bool(o, "gone", d->gone);
        if (r >= 0)
                r = json_add_bool(o, "noise", d->noise);
        if (r < 0)
                return r;
        *ret = TAKE_PTR(o);
        return 0;
}

static int print_json_diff(const DiffTable *t, size_t n, OutputFlags flags)
{
        _cleanup_json_ json_object *o = json_object_new_object(), *rows = json_object_new_array();
        int r;

        if (!o || !rows)
                return -ENOMEM;
        r = json_add_string(o, "by", diff_by_to_string(t->by));
        if (r >= 0)
                r = json_add(o, "base", profile_to_json(&t->base));
        if (r >= 0)
                r = json_add(o, "new", profile_to_json(&t->new));
        for (size_t i = 0; r >= 0 && i < n; i++) {
                json_object *row;

                r = row_to_json(t, &t->rows[i], &row);
                if (r >= 0)
                        r = json_append(rows, row);
        }
        if (r >= 0)
                r = json_add(o, "rows", TAKE_PTR(rows));
        if (r < 0)
                return r;
        return print_json(o, flags);
}

int output_diff(const DiffTable *t, size_t limit, OutputFlags flags)
{
        size_t n = limit > 0 && limit < t->n_rows ? limit : t->n_rows;

        return flags & OUTPUT_JSON ? print_json_diff(t, n, flags) : print_text(t, n, flags);
}
