/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <systemd/sd-bus.h>

#include "bus-client.h"

/* The decoding of ListTargets (bus_list_targets()). */
int bus_list_target_details(sd_bus *bus, sd_bus_error *error, TargetList **ret);
