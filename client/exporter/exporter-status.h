/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stddef.h>

#include <systemd/sd-bus.h>

/* What a failed call to vprofd (r, a negative errno, and its D-Bus error) answers over HTTP: an unknown target
 * 404, a bad argument 400, a refusal 403, no daemon or no answer 503, a profile too big 500, else 500. The
 * reason, one line, goes to buf. */
unsigned exporter_status_from_bus(int r, const sd_bus_error *error, char *buf, size_t size);
