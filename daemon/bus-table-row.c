/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>

#include "bus-table-row.h"

static int append_columns(sd_bus_message *m, const TableColumn *c, size_t n, const TableRow *row)
{
        int r;

        for (size_t i = 0; i < n; i++) {
                const void *cell = (const uint8_t *)row + c[i].offset;

                if (!c[i].bus_type)
                        continue;
                /* A string cell holds a pointer: sd-bus takes the string itself; the others by their address. */
                if (c[i].bus_type == 's')
                        r = sd_bus_message_append_basic(m, 's', table_cell_string(&c[i], row) ?: "");
                else
                        r = sd_bus_message_append_basic(m, c[i].bus_type, cell);
                if (r < 0)
                        return r;
        }
        return 0;
}

int bus_append_table_row(sd_bus_message *m, TableKind kind, TableShape shape, const TableRow *row)
{
        const TableColumn *c;
        char contents[64];
        size_t n;
        int r;

        r = table_schema_row_signature(kind, shape, true, contents, sizeof(contents));
        if (r < 0)
                return r;
        r = sd_bus_message_open_container(m, 'r', contents);
        if (r < 0)
                return r;
        if (shape == TABLE_SAMPLING) {
                c = table_schema_columns(kind, &n);
                r = append_columns(m, c, n, row);
        } else {
                c = table_schema_name_columns(kind, &n);
                r = append_columns(m, c, n, row);
                if (r >= 0) {
                        c = table_schema_value_columns(&n);
                        r = append_columns(m, c, n, row);
                }
        }
        if (r < 0)
                return r;
        return sd_bus_message_close_container(m);
}
