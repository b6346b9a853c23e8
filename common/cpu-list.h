/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stdbool.h>
#include <stddef.h>

/* Parse a kernel CPU list such as "0-3,8,10-11\n" into a bitmap of n bools (pure). */
int cpu_list_parse(const char *text, bool *cpus, size_t n);
/* Online CPUs from /sys/devices/system/cpu/online. */
int cpu_list_read_online(bool *cpus, size_t n);
