/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stdint.h>

#include <systemd/sd-bus.h>

/* The worker threads' connections to the system bus: one per thread, since sd-bus objects are not thread-safe,
 * opened on a thread's first request and kept; a connection that broke is dropped and opened again on the next
 * request. */

/* Once, before the HTTP threads start: every call on the connections times out after timeout_usec. */
int exporter_bus_setup(uint64_t timeout_usec);

/* The calling thread's connection, opened if need be, which the thread keeps (the caller does not unref it); a
 * negative errno when the bus cannot be reached. */
int exporter_bus_get(sd_bus **ret);

/* After a failed call: drops the thread's connection if r says that it broke. */
void exporter_bus_check(int r);
