/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stdbool.h>
#include <stdint.h>

#include "macros.h"

/* Kernel text symbols from /proc/kallsyms (types t/T/w/W), sorted by address. */
typedef struct Kallsyms Kallsyms;

/* Parse a kallsyms file (path, so that tests can feed a fixture). When every address reads 0 (kptr_restrict)
 * the result is empty and kallsyms_restricted() says so. */
int kallsyms_load(const char *path, Kallsyms **ret);
/* The symbol containing addr, its module ("kernel" for the core image, else the name in brackets, without
 * brackets) and the offset into it; NULL when none. */
const char *kallsyms_lookup(const Kallsyms *k, uint64_t addr, const char **ret_module, uint64_t *ret_offset);
bool kallsyms_restricted(const Kallsyms *k);
size_t kallsyms_count(const Kallsyms *k);
/* The bytes of the table (symbols, names, modules) as asked of malloc(). */
size_t kallsyms_memory(const Kallsyms *k);

Kallsyms *kallsyms_free(Kallsyms *k);
DEFINE_TRIVIAL_CLEANUP_FUNC(Kallsyms *, kallsyms_free);
