/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <stdio.h>

#include "table-schema.h"

/* The table schema as text, for man/check-columns.py: one line per column, tab-separated: kind (functions...),
 * part (columns: a sampling table's; names: a value table's name part; values: the ten values; view-elapsed,
 * view-application, view-all: the values a view shows), name, heading, heading in ms (or -), JSON key (or -),
 * and the flags (text: a column of the text table; json-only, optional, symbols, exclusive). */

static void dump_column(const char *kind, const char *part, const TableColumn *c)
{
        printf("%s\t%s\t%s\t%s\t%s\t%s\t%s%s%s%s%s\n", kind, part, c->name, c->heading, c->heading_ms ?: "-",
               c->json_key ?: "-", c->flags & TABLE_COLUMN_JSON_ONLY ? "json-only" : "text",
               c->flags & TABLE_COLUMN_OPTIONAL ? ",optional" : "", c->flags & TABLE_COLUMN_SYMBOLS ? ",symbols" : "",
               c->flags & TABLE_COLUMN_EXCLUSIVE ? ",exclusive" : "", c->flags & TABLE_COLUMN_TEXT_ONLY ? ",text-only" : "");
}

int main(void)
{
        static const char *const views[_TABLE_VIEW_MAX] = {"view-elapsed", "view-application", "view-all"};
        const TableColumn *c, *values;
        size_t n, n_values;

        for (TableKind k = 0; k < _TABLE_KIND_MAX; k++) {
                c = table_schema_columns(k, &n);
                for (size_t i = 0; i < n; i++)
                        dump_column(table_kind_to_string(k), "columns", &c[i]);
                c = table_schema_name_columns(k, &n);
                for (size_t i = 0; i < n; i++)
                        dump_column(table_kind_to_string(k), "names", &c[i]);
        }
        values = table_schema_value_columns(&n_values);
        for (size_t i = 0; i < n_values; i++)
                dump_column("values", "values", &values[i]);
        for (TableView v = 0; v < _TABLE_VIEW_MAX; v++) {
                const unsigned *shown = table_schema_view_values(v, &n);

                for (size_t i = 0; i < n; i++)
                        dump_column("values", views[v], &values[shown[i]]);
        }
        return fflush(stdout) == 0 ? 0 : 1;
}
