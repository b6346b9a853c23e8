/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <systemd/sd-bus.h>

#include "bus-client.h"

/* ListTargetDetails: each target's PID and a dictionary; keys this client does not know are skipped, and
 * known keys of another type are refused as a bad reply. */
int bus_list_target_details(sd_bus *bus, sd_bus_error *error, TargetList **ret);
