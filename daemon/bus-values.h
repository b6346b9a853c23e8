/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <systemd/sd-bus.h>

/* GetFunctionValues, GetModuleValues, GetThreadValues, GetProcessValues: the seed-003 elapsed and application
 * values. userdata is the Manager. */
int method_get_function_values(sd_bus_message *msg, void *userdata, sd_bus_error *error);
int method_get_module_values(sd_bus_message *msg, void *userdata, sd_bus_error *error);
int method_get_thread_values(sd_bus_message *msg, void *userdata, sd_bus_error *error);
int method_get_process_values(sd_bus_message *msg, void *userdata, sd_bus_error *error);
