/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <systemd/sd-bus.h>

/* GetSymbolNames(u pid) -> a(sss) names: for every function of a target whose name was demangled, its module,
 * the demangled name (as the other tables show it) and the symbol's mangled name. A method of its own so
 * that the existing methods keep their signatures. */
int bus_method_get_symbol_names(sd_bus_message *msg, void *userdata, sd_bus_error *error);
