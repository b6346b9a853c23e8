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

int pprof_gunzip(const uint8_t *data, size_t size, size_t max_bytes, void **ret, size_t *ret_size)
{
        z_stream z = {};
        uint8_t *out = NULL;
        size_t allocated = 0;
        int r;

        if (size > UINT32_MAX)
                return -EFBIG;
        if (inflateInit2(&z, GZIP_WINDOW_BITS) != Z_OK)
                return -ENOMEM;
        z.next_in = (Bytef *)data;
        z.avail_in = (uInt)size;
        do {
                /* Doubling, up to the bound: a small file may inflate a thousandfold (a bomb stops at max_bytes). */
                if (z.total_out == allocated) {
                        size_t n = allocated ? MIN(allocated * 2, max_bytes) : MIN((size_t)64 * 1024, max_bytes);
                        uint8_t *p;

                        if (n <= allocated) {
                                r = -EFBIG;
                                break;
                        }
                        p = realloc(out, n);
                        if (!p) {
                                r = -ENOMEM;
                                break;
                        }
                        out = p;
                        allocated = n;
                }
                z.next_out = out + z.total_out;
                z.avail_out = (uInt)MIN(allocated - z.total_out, (size_t)UINT32_MAX);
                r = inflate(&z, Z_NO_FLUSH);
                if (r == Z_STREAM_END)
                        r = 0;
                else if (r == Z_OK)
                        r = z.avail_in == 0 && z.avail_out > 0 ? -EBADMSG : 1; /* input cut short */
                else
                        r = r == Z_MEM_ERROR ? -ENOMEM : -EBADMSG;
        } while (r == 1);
        inflateEnd(&z);
        if (r < 0) {
                free(out);
                return r;
        }
        *ret = out;
        *ret_size = z.total_out;
        return 0;
}
