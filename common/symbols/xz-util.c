/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <assert.h>
#include <errno.h>
#include <lzma.h>
#include <stdlib.h>
#include <unistd.h>

#include "macros.h"
#include "xz-util.h"

/* Enough for any preset's dictionary (xz -9 needs 65 MiB), far less than an unbounded decoder could ask. */
#define XZ_MEMLIMIT (UINT64_C(128) << 20)

static void lzma_endp(lzma_stream *s)
{
        lzma_end(s);
}

int xz_decompress(const void *in, size_t in_size, size_t max_out, void **ret, size_t *ret_size)
{
        _cleanup_(lzma_endp) lzma_stream s = LZMA_STREAM_INIT;
        _cleanup_free_ uint8_t *out = NULL;
        size_t allocated = 0;
        lzma_ret lr;

        assert(ret);
        assert(ret_size);

        if (!in || max_out == 0)
                return -EINVAL;
        lr = lzma_stream_decoder(&s, XZ_MEMLIMIT, 0);
        if (lr != LZMA_OK)
                return lr == LZMA_MEM_ERROR ? -ENOMEM : -EINVAL;

        s.next_in = in;
        s.avail_in = in_size;
        for (;;) {
                if (s.avail_out == 0) {
                        /* One byte past the bound, so that an output of exactly max_out bytes is told from
                         * a bigger one. */
                        size_t a = MIN(MAX(allocated * 2, MAX(in_size * 4, (size_t)4096)), max_out + 1);
                        uint8_t *o;

                        if (a <= allocated)
                                return -EFBIG;
                        o = realloc(out, a);
                        if (!o)
                                return -ENOMEM;
                        out = o;
                        s.next_out = out + allocated;
                        s.avail_out = a - allocated;
                        allocated = a;
                }
                lr = lzma_code(&s, LZMA_FINISH);
                if (lr == LZMA_STREAM_END)
                        break;
                if (lr == LZMA_MEM_ERROR)
                        return -ENOMEM;
                if (lr != LZMA_OK)
                        return -EBADMSG;
                if (s.total_out > max_out)
                        return -EFBIG;
        }
        if (s.total_out > max_out)
                return -EFBIG;

        *ret_size = (size_t)s.total_out;
        *ret = TAKE_PTR(out);
        return 0;
}

int file_crc32(int fd, uint32_t *ret)
{
        uint8_t buf[65536];
        uint32_t crc = 0;
        off_t offset = 0;
        ssize_t n;

        assert(ret);

        if (fd < 0)
                return -EINVAL;
        while ((n = pread(fd, buf, sizeof(buf), offset)) != 0) {
                if (n < 0) {
                        if (errno == EINTR)
                                continue;
                        return negative_errno();
                }
                crc = lzma_crc32(buf, (size_t)n, crc);
                offset += n;
        }
        *ret = crc;
        return 0;
}
