/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stdbool.h>

#include "output.h"
#include "top-fetch.h"

/* top's refreshes on standard output, for scripts and logs (--batch, or standard output not a terminal): a
 * block of header lines and the table, refreshes separated by an empty line; or, with OUTPUT_JSON, one JSON
 * document on one line per refresh. target is the one of the command line, NULL for every target. first: the
 * first refresh, which no empty line precedes. A negative errno when writing fails; logs nothing. */
int top_batch_print(const char *target, const TopView *v, OutputFlags flags, bool first);
