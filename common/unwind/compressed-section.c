/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <assert.h>
#include <errno.h>
#include <string.h>

#include "compressed-section.h"
#include "log.h"

/* The GNU form's header: "ZLIB", then the inflated size, 8 bytes big-endian. */
#define GNU_MAGIC "ZLIB"
#define GNU_HEADER_SIZE 12

/* The size the GNU header claims; -EBADMSG without one. */
static int gnu_size(const Elf_Data *data, uint64_t *ret)
{
        const uint8_t *p = data->d_buf;
        uint64_t size = 0;

        if (data->d_size < GNU_HEADER_SIZE || memcmp(p, GNU_MAGIC, 4) != 0)
                return -EBADMSG;
        for (size_t i = 4; i < GNU_HEADER_SIZE; i++)
                size = size << 8 | p[i];
        *ret = size;
        return 0;
}

int compressed_section_read(ElfFile *f, Elf_Scn *scn, bool gnu, uint64_t max, Elf_Data **ret)
{
        GElf_Shdr shdr;
        GElf_Chdr chdr;
        Elf_Data *data;
        uint64_t size;
        int r;

        assert(f);
        assert(ret);

        if (!scn || !gelf_getshdr(scn, &shdr))
                return -EBADMSG;
        if (!gnu && !(shdr.sh_flags & SHF_COMPRESSED))
                return elf_file_section(f, scn, max, true, ret);

        /* The compressed bytes into the image, as any section's. */
        r = elf_file_section(f, scn, max, true, &data);
        if (r < 0)
                return r;
        if (gnu)
                r = gnu_size(data, &size);
        else if (!gelf_getchdr(scn, &chdr))
                r = -EBADMSG;
        else
                size = chdr.ch_size;
        if (r < 0)
                return r;
        /* libelf allocates what the header says, before it inflates a byte. */
        if (size > max)
                return -EFBIG;
        if ((gnu ? elf_compress_gnu(scn, 0, 0) : elf_compress(scn, 0, 0)) != 1) {
                log_debug("Cannot inflate a compressed ELF section: %s", elf_errmsg(-1));
                return -EBADMSG;
        }
        data = elf_getdata(scn, NULL);
        if (!data || (!data->d_buf && data->d_size > 0) || data->d_size != size) {
                log_debug("Cannot read an inflated ELF section: %s", elf_errmsg(-1));
                return -EBADMSG;
        }
        *ret = data;
        return 0;
}
