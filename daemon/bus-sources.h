/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <systemd/sd-bus.h>

/* GetFunctionSources, for the vtable in bus.c; userdata is the Manager. Documented in org.vprof.Profiler1.xml. */
int method_get_function_sources(sd_bus_message *msg, void *userdata, sd_bus_error *error);
