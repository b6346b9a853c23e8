/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <systemd/sd-bus.h>

/* GetStacks(u pid, u limit) -> (t total_samples, t other_samples, a(ss) functions, a(auut) stacks): a target's
 * distinct stacks, most samples first, for flame graphs. Each stack holds indices into functions, outermost
 * first, how many of them at the end are kernel frames, and its samples. */
int bus_method_get_stacks(sd_bus_message *msg, void *userdata, sd_bus_error *error);

/* The most a reply carries, in bytes of frames: a message near the bus's size limit (32 MiB on the system bus)
 * would make dbus-daemon drop the daemon's connection. Stacks past it are left out, largest count first kept. */
#define BUS_STACKS_MAX_BYTES (UINT32_C(8) << 20)
