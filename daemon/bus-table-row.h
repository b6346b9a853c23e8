/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <systemd/sd-bus.h>

#include "table-schema.h"

/* A table reply's row made from the table schema (common/profile/table-schema.h): the struct of kind and shape,
 * its columns that are on the bus, in order, read from row (table_row_from_profile() makes one of a ProfileRow;
 * a value row's values are the caller's). The signature is table_schema_row_signature()'s, which
 * tests/unit/test-table-schema.c checks against the interface XML: so the bus rows follow the schema. */
int bus_append_table_row(sd_bus_message *m, TableKind kind, TableShape shape, const TableRow *row);
