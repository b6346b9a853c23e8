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
int method_get_window_tables(sd_bus_message *msg, void *userdata, sd_bus_error *error); /* bus-window.c */
