/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stdint.h>

#include "manager.h"

/* Download missing debug files from the debuginfod servers at urls (space-separated). A missing libdebuginfod
 * is logged and leaves the feature off (returns 0); other errors are logged and returned. */
int manager_enable_debuginfod(Manager *m, const char *urls, uint32_t timeout_sec);
