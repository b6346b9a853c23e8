/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stdbool.h>

/* /etc/vprofd.conf: "Key=Value" lines, optionally under a "[Daemon]" section; blank lines and lines starting
 * with '#' or ';' are ignored, spaces around the key and the value too. */

/* Called for every assignment; returns 0, or a negative errno after logging why. */
typedef int (*config_assign_fn)(const char *key, const char *value, const char *where, void *userdata);

/* must_exist: a missing file is an error (a path given on the command line) rather than no settings. Syntax
 * errors are logged as "PATH:LINE: ..." and return -EINVAL; where in fn is "PATH:LINE". */
int config_file_parse(const char *path, bool must_exist, config_assign_fn fn, void *userdata);
