/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include "manager.h"

/* Connect to the system bus (DBUS_SYSTEM_BUS_ADDRESS if set), publish the object and take the name. */
int bus_setup(Manager *m);
