/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stddef.h>
#include <stdint.h>

/* Between eh-frame.c (the table of functions) and eh-frame-load.c (the sections, from ELF
 * files); nothing else includes this. */

/* The most bytes of a CFI section read from a file (elf-util.h), or inflated from a compressed one: the
 * largest programs have a few tens of MiB. Larger is refused, -EFBIG. */
#define EH_FRAME_MAX (UINT64_C(256) << 20)

/* The address of .eh_frame that the .eh_frame_hdr at hdr_vaddr gives: -EBADMSG when it gives none. */
int eh_frame_hdr_target(const void *hdr, size_t hdr_size, uint64_t hdr_vaddr, uint64_t *ret);
