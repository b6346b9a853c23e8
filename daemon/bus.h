/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include "manager.h"

/* Serve org.vprof.Profiler1 on m->bus, a started connection: the object at VPROF_BUS_PATH, and a filter that
 * keeps sd-bus's own error messages short. The unit tests serve a socketpair() this way. */
int bus_add_profiler(Manager *m);

/* Connect to the system bus (DBUS_SYSTEM_BUS_ADDRESS if set), serve the object from m->event and take the name.
 * Logs its failures. */
int bus_setup(Manager *m);

/* The calls that the bus layer keeps waiting (an Attach waiting for systemd), dropped unanswered: the daemon is
 * going. Before manager_free(), which closes the bus. */
void bus_done(Manager *m);
