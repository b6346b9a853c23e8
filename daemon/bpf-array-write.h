/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stddef.h>

/* Writes into a BPF array map created with BPF_F_MMAPABLE through a mapping made for the write and undone after
 * it. A BPF array's mapping puts every page of it in the process's RSS at mmap() time (the kernel maps its
 * vmalloc'ed pages all at once), so a map kept mapped costs its whole size in RSS even where nothing was ever
 * written; mapped only around a write, it costs the written pages for the duration of the write, in slices of at
 * most BPF_ARRAY_WRITE_SLICE bytes. The BPF side reads the map from the kernel and sees no difference. */

#define BPF_ARRAY_WRITE_SLICE (256u << 10)

/* n bytes of src at byte offset of the array's values (map_bytes: their whole size, page-rounded or not); 0 or
 * -errno of mmap() (-ERANGE past the end). */
int bpf_array_write(int map_fd, size_t map_bytes, size_t offset, const void *src, size_t n);
