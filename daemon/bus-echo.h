/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <systemd/sd-bus.h>

/* sd-bus answers some calls itself, with messages that quote what the caller sent, whole: an unknown object
 * path ("Unknown object '...'."), an unknown interface or property given to org.freedesktop.DBus.Properties.
 * Those strings are bounded only by the message size, so a caller could have megabytes echoed back. The filter
 * answers such calls first, with the same errors, quoting a short prefix (quote.h) as the daemon's own
 * messages do. Names that fit are left to sd-bus, whose messages then quote no more than that. */
int bus_add_echo_filter(sd_bus *bus);
