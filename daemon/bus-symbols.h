/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <systemd/sd-bus.h>

/* GetModuleSymbols(u pid) -> a(sa{sv}): for each module of pid's tables, where its names come from and how many
 * of its frames stayed unnamed, so that an operator sees why and what to install. Keys (any may be missing):
 * source (s: symtab, dynsym, minidebuginfo, debuglink, build-id, none, kallsyms, vdso, perf-map), path (s),
 * debug_file (s), build_id (s), symbols (t), samples (t: the module's exclusive count), unnamed_functions (u),
 * unnamed_samples (t: the exclusive samples of those functions). */
int bus_method_get_module_symbols(sd_bus_message *msg, void *userdata, sd_bus_error *error);
