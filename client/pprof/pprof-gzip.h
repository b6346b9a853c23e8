/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stddef.h>
#include <stdint.h>

/* data compressed with zlib in the gzip format (what pprof files are), into a new buffer: -EFBIG when the result
 * would pass max_bytes (0: no bound), -ENOMEM, -EIO for a zlib failure. The caller frees *ret. */
int pprof_gzip(const uint8_t *data, size_t size, size_t max_bytes, void **ret, size_t *ret_size);
/* The reverse, for a file of the gzip format: -EFBIG when the data inflates past max_bytes (which must be above
 * 0), -EBADMSG when it is no gzip stream or is cut short, -ENOMEM. The caller frees *ret. */
int pprof_gunzip(const uint8_t *data, size_t size, size_t max_bytes, void **ret, size_t *ret_size);
