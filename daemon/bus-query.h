/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stddef.h>
#include <stdint.h>
#include <systemd/sd-bus.h>

#include "manager.h"

/* The methods that read targets and their tables, for the vtable in bus.c; userdata is the Manager. Each is
 * documented in org.vprof.Profiler1.xml. */

int method_list_targets(sd_bus_message *msg, void *userdata, sd_bus_error *error);
int method_get_functions(sd_bus_message *msg, void *userdata, sd_bus_error *error);
int method_get_modules(sd_bus_message *msg, void *userdata, sd_bus_error *error);
int method_get_threads(sd_bus_message *msg, void *userdata, sd_bus_error *error);
int method_get_processes(sd_bus_message *msg, void *userdata, sd_bus_error *error);
int method_get_stacks(sd_bus_message *msg, void *userdata, sd_bus_error *error);
int method_get_module_symbols(sd_bus_message *msg, void *userdata, sd_bus_error *error);
int method_get_symbol_names(sd_bus_message *msg, void *userdata, sd_bus_error *error);
int method_get_function_values(sd_bus_message *msg, void *userdata, sd_bus_error *error);
int method_get_module_values(sd_bus_message *msg, void *userdata, sd_bus_error *error);
int method_get_thread_values(sd_bus_message *msg, void *userdata, sd_bus_error *error);
int method_get_process_values(sd_bus_message *msg, void *userdata, sd_bus_error *error);
int method_get_profile(sd_bus_message *msg, void *userdata, sd_bus_error *error); /* bus-profile.c */

/* The parts of a query that bus-profile.c shares. The targets of a spec, if the caller may see them: a process
 * (with the children it is followed with) or a group's members; 1 with *ret_targets set (the caller frees the
 * array); 0 when polkit was asked (the handler returns 1, unanswered); negative with error set. */
int spec_targets(Manager *m, sd_bus_message *msg, const char *spec_text, Target ***ret_targets, size_t *ret_n,
                 sd_bus_error *error);
/* A window the daemon keeps: none asked (0), or whole seconds up to WindowSeconds=; else error set. */
int check_window(const Manager *m, uint64_t window_usec, sd_bus_error *error);
/* What query_view_build() and query_view_totals() refuse, as the bus says it. */
int view_error(int r, sd_bus_error *error);
