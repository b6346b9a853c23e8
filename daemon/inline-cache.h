/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stddef.h>
#include <stdint.h>

#include "macros.h"

/* The names of the functions inlined at a byte of a file's code, innermost first (the function they are inlined
 * into left out), shared by every target that maps the file: a storm of children of one program, each a target
 * with its own frame cache, looks each address up in the DWARF once, not once a child. Keyed by the file's
 * device and inode and the byte's file offset; an address with nothing inlined is kept too (no names). Bounded:
 * full, it starts over. */
typedef struct InlineCache InlineCache;

typedef struct InlineKey {
        uint32_t dev_major, dev_minor;
        uint64_t inode;
        uint64_t offset; /* in the file */
} InlineKey;

int inline_cache_new(size_t max_entries, InlineCache **ret);
InlineCache *inline_cache_free(InlineCache *c);
DEFINE_TRIVIAL_CLEANUP_FUNC(InlineCache *, inline_cache_free);

/* 1 and the cached names (valid until the next put or clear; *ret_n may be 0), 0 when not cached. */
int inline_cache_get(InlineCache *c, const InlineKey *k, const char *const **ret_names, size_t *ret_n);
/* names[0..n) copied; a NULL name as "[inlined]". 0 or -ENOMEM (the entry left out). */
int inline_cache_put(InlineCache *c, const InlineKey *k, const char *const *names, size_t n);
void inline_cache_clear(InlineCache *c);
size_t inline_cache_size(const InlineCache *c);
size_t inline_cache_memory(const InlineCache *c);
