/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stdint.h>

#include <systemd/sd-bus.h>

#include "profile.h"

/* The stacks of a view as GetStacks and GetWindowTables send them: "a(ss)a(auut)au", every function of the
 * tables (module, function) by id, the stacks with on-CPU samples (frames OUTERMOST first, kernel frames, samples),
 * most samples first, at most limit (0: all) and no more than a reply can carry, then the ids of the inlined
 * functions. */
int bus_append_stacks(sd_bus_message *reply, const Profile *p, uint32_t limit);
