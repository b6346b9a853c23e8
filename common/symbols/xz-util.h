/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stddef.h>
#include <stdint.h>

/* Decompress the whole .xz stream in[0..in_size) into a new buffer of at most max_out bytes: -EFBIG when the
 * output would be larger, -EBADMSG when the input is not a valid .xz stream, -ENOMEM. The caller frees *ret.
 * The output is bounded because the input comes from the files of the processes we profile. */
int xz_decompress(const void *in, size_t in_size, size_t max_out, void **ret, size_t *ret_size);

/* CRC-32 (the IEEE polynomial of zlib and of .gnu_debuglink) of the file open at fd, read from its start. */
int file_crc32(int fd, uint32_t *ret);
