/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "duration.h"
#include "output-util.h"
#include "time-util.h"

int table_new(const ColumnSpec *columns, size_t n_columns, OutputFlags flags, struct libscols_table **ret)
{
        _cleanup_(scols_unref_tablep) struct libscols_table *tb = NULL;
        int r;

        tb = scols_new_table();
        if (!tb)
                return -ENOMEM;
        r = scols_table_enable_noheadings(tb, !!(flags & OUTPUT_NO_HEADINGS));
        if (r < 0)
                return r;
        for (size_t i = 0; i < n_columns; i++) {
                struct libscols_column *cl =
                        scols_table_new_column(tb, columns[i].name, columns[i].whint, columns[i].flags);

                if (!cl)
                        return -ENOMEM;
                /* vprofd sends names escaped once, as \xNN (org.vprof.Profiler1(5)): libsmartcols' own escape
                 * of a backslash would show x\xff as x\x5cxff, an escape of the escape. */
                r = scols_column_set_safechars(cl, "\\");
                if (r < 0)
                        return r;
        }

        *ret = TAKE_PTR(tb);
        return 0;
}

ColumnSpec column_spec_from_schema(const TableColumn *c, bool unit_ms)
{
        const char *heading = unit_ms && c->heading_ms ? c->heading_ms : c->heading;

        switch (c->width) {
        case TABLE_WIDTH_NAME:
                return (ColumnSpec){heading, 0.5, SCOLS_FL_TRUNC};
        case TABLE_WIDTH_SUBNAME:
                return (ColumnSpec){heading, 0.2, SCOLS_FL_TRUNC};
        case TABLE_WIDTH_TEXT:
                return (ColumnSpec){heading, 1, 0};
        default:
                return (ColumnSpec){heading, 1, SCOLS_FL_RIGHT};
        }
}

size_t table_text_columns(const TableColumn *columns, size_t n, OutputFlags flags, bool with_symbols,
                          const TableColumn **ret)
{
        size_t k = 0;

        for (size_t i = 0; i < n; i++) {
                const TableColumn *c = &columns[i];

                if (c->flags & TABLE_COLUMN_JSON_ONLY)
                        continue;
                if ((c->flags & TABLE_COLUMN_OPTIONAL) && !(strcmp(c->name, "source") == 0 && (flags & OUTPUT_SOURCE)))
                        continue;
                if ((c->flags & TABLE_COLUMN_SYMBOLS) && !with_symbols)
                        continue;
                ret[k++] = c;
        }
        return k;
}

int table_add_line(struct libscols_table *tb, size_t n_cells, const char *const *cells)
{
        struct libscols_line *ln;
        int r;

        ln = scols_table_new_line(tb, NULL);
        if (!ln)
                return -ENOMEM;
        for (size_t i = 0; i < n_cells; i++) {
                r = scols_line_set_data(ln, i, cells[i]);
                if (r < 0)
                        return r;
        }
        return 0;
}

int print_json(json_object *o, OutputFlags flags)
{
        int f = JSON_C_TO_STRING_NOSLASHESCAPE;
        const char *s;

        f |= flags & OUTPUT_JSON_ONE_LINE ? JSON_C_TO_STRING_PLAIN
                                          : JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_SPACED;
        s = json_object_to_json_string_ext(o, f);
        if (!s)
                return -ENOMEM;
        if (puts(s) == EOF)
                return -EIO;
        return 0;
}

int json_add(json_object *o, const char *key, json_object *v)
{
        if (!v)
                return -ENOMEM;
        if (json_object_object_add(o, key, v) < 0) {
                json_object_put(v);
                return -ENOMEM;
        }
        return 0;
}

int json_add_string(json_object *o, const char *key, const char *s)
{
        if (!s)
                return json_object_object_add(o, key, NULL) < 0 ? -ENOMEM : 0;
        return json_add(o, key, json_object_new_string(s));
}

int json_add_u64(json_object *o, const char *key, uint64_t v)
{
        return json_add(o, key, json_object_new_uint64(v));
}

int json_add_double(json_object *o, const char *key, double v)
{
        return json_add(o, key, json_object_new_double(v));
}

int json_add_bool(json_object *o, const char *key, bool v)
{
        return json_add(o, key, json_object_new_boolean(v));
}

void format_timestamp(char *buf, size_t size, uint64_t usec)
{
        time_t sec = (time_t)(usec / USEC_PER_SEC);
        struct tm tm;

        if (usec == 0 || !localtime_r(&sec, &tm) || strftime(buf, size, "%Y-%m-%d %H:%M:%S", &tm) == 0)
                snprintf(buf, size, "n/a");
}

int json_append(json_object *a, json_object *v)
{
        if (!v)
                return -ENOMEM;
        if (json_object_array_add(a, v) < 0) {
                json_object_put(v);
                return -ENOMEM;
        }
        return 0;
}

json_object *report_symbols_to_json(const ReportSymbols *s)
{
        _cleanup_json_ json_object *o = json_object_new_object();
        int r;

        if (!o)
                return NULL;
        r = json_add_string(o, "source", s->source);
        if (r >= 0)
                r = json_add_string(o, "debug_file", s->debug_file);
        if (r >= 0)
                r = json_add_string(o, "build_id", s->build_id);
        if (r >= 0)
                r = json_add_string(o, "debuginfod", s->debuginfod);
        if (r >= 0)
                r = json_add_u64(o, "symbols", s->symbols);
        if (r >= 0)
                r = json_add_u64(o, "unnamed_functions", s->unnamed_functions);
        if (r >= 0)
                r = json_add_u64(o, "unnamed_samples", s->unnamed_samples);
        if (r >= 0)
                r = json_add_u64(o, "samples", s->samples);
        if (r >= 0)
                r = json_add_u64(o, "load_usec", s->load_usec);
        return r < 0 ? NULL : TAKE_PTR(o);
}

static void format_clock(char *buf, size_t size, uint64_t usec)
{
        time_t sec = (time_t)(usec / 1000000);
        struct tm tm;

        if (!localtime_r(&sec, &tm) || strftime(buf, size, "%H:%M:%S", &tm) == 0)
                snprintf(buf, size, "?");
}

void format_window(char *buf, size_t size, const ReportTable *t)
{
        char start[32], end[32];

        buf[0] = '\0';
        if (t->window_usec == 0)
                return;
        if (t->window_end_usec <= t->window_start_usec) {
                snprintf(buf, size, " in the last 0 s: no second of the window has ended yet");
                return;
        }
        format_clock(start, sizeof(start), t->window_start_usec);
        format_clock(end, sizeof(end), t->window_end_usec);
        snprintf(buf, size, " in the last %.2f s (%s to %s)",
                 (double)(t->window_end_usec - t->window_start_usec) / 1e6, start, end);
}

int json_add_window(json_object *o, const ReportTable *t)
{
        char asked[32];
        json_object *w;
        int r;

        if (t->window_end_usec == 0)
                return 0;
        w = json_object_new_object();
        r = json_add(o, "window", w);
        if (r < 0)
                return r;
        duration_format(asked, sizeof(asked), t->window_usec);
        r = json_add_string(w, "asked", asked);
        if (r >= 0)
                r = json_add_u64(w, "asked_usec", t->window_usec);
        if (r >= 0)
                r = json_add_u64(w, "start_usec", t->window_start_usec);
        if (r >= 0)
                r = json_add_u64(w, "end_usec", t->window_end_usec);
        if (r >= 0)
                r = json_add_double(w, "seconds",
                                    t->window_end_usec > t->window_start_usec
                                            ? (double)(t->window_end_usec - t->window_start_usec) / 1e6
                                            : 0.0);
        return r;
}

int json_add_cell(json_object *o, const TableColumn *c, const ReportRow *row)
{
        const char *text;

        switch (c->type) {
        case TABLE_TYPE_STRING:
                text = table_cell_string(c, row);
                if ((c->flags & TABLE_COLUMN_OPTIONAL) && (!text || !text[0]))
                        return 0;
                return json_add_string(o, c->json_key, text);
        case TABLE_TYPE_U32:
        case TABLE_TYPE_U64:
                return json_add_u64(o, c->json_key, table_cell_u64(c, row));
        case TABLE_TYPE_DOUBLE:
                return json_add_double(o, c->json_key, table_cell_double(c, row));
        case TABLE_TYPE_BOOL:
                return json_add_bool(o, c->json_key, *(const bool *)((const uint8_t *)row + c->offset));
        case TABLE_TYPE_OBJECT:
                /* The one object column: a module's symbols (GetModuleSymbols). */
                if (!row->symbols)
                        return 0;
                return json_add(o, c->json_key, report_symbols_to_json(row->symbols));
        default:
                return -EINVAL;
        }
}

int json_add_row_name(json_object *o, ReportKind kind, const ReportRow *row)
{
        const TableColumn *c;
        size_t n;
        int r = 0;

        c = table_schema_name_columns((TableKind)kind, &n);
        if (!c)
                return -EINVAL;
        for (size_t i = 0; r >= 0 && i < n; i++)
                r = json_add_cell(o, &c[i], row);
        return r;
}
