/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* vprofctl --help: the commands and options, on standard output. */
void vprofctl_help(void);
