/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stdint.h>

/* Strict decimal parsing: no sign, no spaces, no trailing junk; -EINVAL or -ERANGE on failure. */
int parse_u32(const char *s, uint32_t min, uint32_t max, uint32_t *ret);
int parse_u64(const char *s, uint64_t *ret);
/* A process ID: 1 .. 2^22 (PID_MAX_LIMIT). */
int parse_pid(const char *s, uint32_t *ret);
