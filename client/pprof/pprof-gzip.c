/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <stdlib.h>
#include <zlib.h>

#include "macros.h"
#include "pprof-gzip.h"

/* 15 window bits, plus 16: zlib writes the gzip header and trailer rather than its own. */
#define GZIP_WINDOW_BITS (15 + 16)

int pprof_gzip(const uint8_t *data, size_t size, size_t max_bytes, void **ret, size_t *ret_size)
{
        z_stream z = {};
        uint8_t *out;
        size_t bound;
        int r;

        if (size > UINT32_MAX)
                return -EFBIG; /* zlib counts an input in 32 bits */
        if (deflateInit2(&z, Z_DEFAULT_COMPRESSION, Z_DEFLATED, GZIP_WINDOW_BITS, 8, Z_DEFAULT_STRATEGY) != Z_OK)
                return -ENOMEM;
        /* The most the output can take, so that one deflate() call finishes. */
        bound = deflateBound(&z, (uLong)size);
        out = malloc(bound);
        if (!out) {
                deflateEnd(&z);
                return -ENOMEM;
        }
        z.next_in = (Bytef *)data;
        z.avail_in = (uInt)size;
        z.next_out = out;
        z.avail_out = (uInt)MIN(bound, (size_t)UINT32_MAX);
        r = deflate(&z, Z_FINISH);
        deflateEnd(&z);
        if (r != Z_STREAM_END) {
                free(out);
                return -EIO;
        }
        if (max_bytes > 0 && z.total_out > max_bytes) {
                free(out);
                return -EFBIG;
        }
        *ret = out;
        *ret_size = z.total_out;
        return 0;
}
