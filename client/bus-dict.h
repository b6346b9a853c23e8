/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <systemd/sd-bus.h>

/* Reads an a{sv} at the message's position: fn reads each entry's variant after its key (or skips it), and
 * returns a negative errno to stop. */
typedef int (*bus_dict_entry_fn)(sd_bus_message *m, const char *key, void *userdata);
int bus_read_dict(sd_bus_message *m, bus_dict_entry_fn fn, void *userdata);
