/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stddef.h>

/* Caller input quoted in a message (a D-Bus error): at most QUOTE_MAX bytes of it, cut between two characters
 * and followed by "…" when cut, with control characters and bytes that are not UTF-8 shown as '?'. The message
 * stays one line of valid UTF-8 (a D-Bus string must be) and short, whatever the caller sent: a 16 MiB sort key
 * is not echoed back as a 16 MiB error. */

#define QUOTE_MAX 64
#define QUOTE_SIZE (QUOTE_MAX + sizeof("…"))

/* Writes the quotable prefix of s (NULL: "") to buf and returns buf. */
const char *quote_prefix(const char *s, char buf[static QUOTE_SIZE]);
