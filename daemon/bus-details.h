/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <systemd/sd-bus.h>

/* ListTargets() -> a(ua{sv}): the targets the caller may see, each its PID and a dictionary of what is known
 * of it, which later versions may extend: command, state, samples, attached_usec, flags, ns_pid (the PID in the
 * target's own PID namespace), uid (its real user), start_time (clock ticks since boot). */
int bus_method_list_targets(sd_bus_message *msg, void *userdata, sd_bus_error *error);
