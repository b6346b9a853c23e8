/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stddef.h>

#include <json-c/json.h>

#include "bus-client-memory.h"

/* `vprofctl status`'s memory line: the RSS, its parts and the peak, in MiB; "n/a" without the property. */
void status_memory_format(const StatusMemory *mem, char *buf, size_t size);
/* Its JSON: a "memory" object of bytes by key, as the property has them; nothing without the property. */
int status_memory_json(json_object *o, const StatusMemory *mem);
