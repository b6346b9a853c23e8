/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stdbool.h>
#include <stddef.h>

/* Strings from outside (command and thread names, paths, symbol names, unit names, saved state) made valid
 * where vprofd reads them, once, as systemd's utf8.c does: every string vprofd puts on the bus (which refuses a
 * message with one invalid string), in a file, a log line or an HTTP answer is then valid UTF-8 of one line.
 *
 * The escape: each byte that is not part of a well-formed UTF-8 character (RFC 3629: no overlong forms, no
 * surrogates, nothing past U+10FFFF) and each byte of a control character (C0, DEL, C1) becomes "\xNN" (two
 * lowercase hex digits), but newline, carriage return and tab become "\n", "\r" and "\t". Everything else,
 * a backslash included, is kept: unit names and cgroup paths carry systemd's own "\x2d" escapes and must read
 * as systemd writes them. A name that literally holds "\xff" so reads as one holding the byte 0xff; a user could
 * as well choose any other valid name, so nothing depends on names being told apart (targets are PIDs,
 * functions are addresses of a module). A valid string without control characters is its own escape. */

/* At most 4 bytes out per byte in ("\xNN"). */
#define UTF8_ESCAPED_MAX(n) ((n) * 4)

/* The length of the well-formed UTF-8 character at the start of p, of at most n bytes; 0 if there is none
 * (n == 0, a byte that cannot start one, a truncated, overlong or surrogate sequence). */
size_t utf8_char_length(const char *p, size_t n);

/* C0 and C1 controls and DEL: the well-formed character at p of length bytes. */
bool utf8_char_is_control(const char *p, size_t length);

/* Whether the n bytes at s are well-formed UTF-8 (a NUL counts as a character). */
bool utf8_is_valid(const char *s, size_t n);

/* Whether the n bytes at s are their own escape: well-formed, without control characters. */
bool utf8_is_printable(const char *s, size_t n);

/* The length of the escape of the n bytes at s, without a NUL: n exactly when they are their own escape. */
size_t utf8_escaped_length(const char *s, size_t n);

/* The escape of the n bytes at s, NUL-terminated, in buf of size bytes; cut between two escapes, never inside
 * one, when it does not fit (UTF8_ESCAPED_MAX(n) + 1 always fits). Returns buf. */
char *utf8_escape_buf(const char *s, size_t n, char *buf, size_t size);

/* The escape of the NUL-terminated s, allocated: -ENOMEM. */
int utf8_escape(const char *s, char **ret);

/* A copy of the escape of s (strdup() when it is its own): NULL when out of memory. */
char *utf8_escape_dup(const char *s);

/* s when it is its own escape, else its escape, allocated in *ret_buf for the caller to free: for a lookup by
 * the escaped name without a copy in the common case. -ENOMEM. */
int utf8_escape_or_keep(const char *s, char **ret_buf, const char **ret);

/* Replaces *s (allocated, NUL-terminated) by its escape if it is not its own: 1 when replaced, 0 when kept,
 * -ENOMEM (*s kept). */
int utf8_escape_in_place(char **s);
