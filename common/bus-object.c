/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <stdio.h>

#include "bus-names.h"
#include "bus-object.h"

/* Room for VPROF_BUS_USER_PATH "/4294967295". */
static _Thread_local char user_path[sizeof(VPROF_BUS_USER_PATH) + 16];
static _Thread_local const char *object_path;

const char *vprof_bus_object(void)
{
        return object_path ?: VPROF_BUS_PATH;
}

void vprof_bus_object_set_user(uid_t uid)
{
        snprintf(user_path, sizeof(user_path), "%s/%u", VPROF_BUS_USER_PATH, (unsigned)uid);
        object_path = user_path;
}

void vprof_bus_object_reset(void)
{
        object_path = NULL;
}
