/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stdbool.h>

/* The programs' configuration files (/etc/vprofd.conf, /etc/vprof/exporter.conf): "Key=Value" lines, optionally
 * under the one section the program names ("[Daemon]", "[Exporter]"); blank lines and lines starting with '#' or
 * ';' are ignored, spaces around the key and the value too. */

/* Called for every assignment; returns 0, or a negative errno after logging why. */
typedef int (*config_assign_fn)(const char *key, const char *value, const char *where, void *userdata);

/* section: the name between the brackets, the only section allowed. must_exist: a missing file is an error (a
 * path given on the command line) rather than no settings. Syntax errors are logged as "PATH:LINE: ..." and
 * return -EINVAL; where in fn is "PATH:LINE". The program's own configuration, so errors are logged at error
 * level: they are what the user is told. */
int config_file_parse(const char *path, const char *section, bool must_exist, config_assign_fn fn, void *userdata);
