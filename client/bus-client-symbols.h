/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stdint.h>

#include <systemd/sd-bus.h>

#include "report-table.h"

/* GetModuleSymbols: gives the rows of t (the module table of pid) where their names come from. */
int bus_add_module_symbols(sd_bus *bus, uint32_t pid, ReportTable *t, sd_bus_error *error);
