/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stdint.h>

#include <systemd/sd-bus.h>

#include "report-table.h"

/* The seed-003 calls, GetFunctionValues, GetModuleValues, GetThreadValues and GetProcessValues, decoded into
 * tables of values (ReportTable.has_values). Same contract as bus-client.h: a negative errno, *error set
 * when there is a D-Bus error to show. sort is one of the values keys (PROFILE_SORT_ELAPSED_INCLUSIVE...).
 */

int bus_get_function_values(sd_bus *bus, uint32_t pid, ProfileSort sort, uint32_t limit, sd_bus_error *error,
                            ReportTable **ret);
int bus_get_module_values(sd_bus *bus, uint32_t pid, sd_bus_error *error, ReportTable **ret);
int bus_get_thread_values(sd_bus *bus, uint32_t pid, sd_bus_error *error, ReportTable **ret);
int bus_get_process_values(sd_bus *bus, sd_bus_error *error, ReportTable **ret);
