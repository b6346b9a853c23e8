/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stddef.h>

/* report --format FORMAT -o FILE: the file written whole or not at all (a temporary file renamed over it), so
 * that a reader never sees half a profile. Logs nothing. */
int report_write_file(const char *path, const void *data, size_t size);
