/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <string.h>

#include "eh-frame-record.h"
#include "macros.h"

/* The formats are those of the LSB (.eh_frame) and DWARF 5 section 6.4 (CIE and FDE, and .debug_frame's own). */

int cfi_read_record(const CfiSection *s, size_t off, Record *ret)
{
        Cursor c = { .data = s->data, .pos = off, .end = s->size };
        size_t id_size = 4, id_off;
        uint64_t len, id;
        int r;

        if (off > s->size)
                return -EBADMSG;
        r = read_le(&c, 4, &len);
        if (r < 0)
                return r;
        if (len == 0)
                return -ENODATA;
        if (len == UINT32_MAX) {
                r = read_le(&c, 8, &len);
                if (r < 0)
                        return r;
                /* The id is 4 bytes in .eh_frame even with a 64-bit length; an offset's size in
                 * .debug_frame. */
                if (s->format == CFI_DEBUG_FRAME)
                        id_size = 8;
        }
        if (len < id_size || len > c.end - c.pos)
                return -EBADMSG;
        id_off = c.pos;
        c.end = c.pos + len;
        r = read_le(&c, id_size, &id);
        if (r < 0)
                return r;

        *ret = (Record) { .body = c.pos, .end = c.end };
        if (s->format == CFI_EH_FRAME) {
                /* 0, or the distance back from the id field to the CIE. */
                ret->is_cie = id == 0;
                ret->cie = id <= id_off ? id_off - id : UINT64_MAX;
        } else {
                /* All ones, or the CIE's offset from the section's start. */
                ret->is_cie = id == (id_size == 8 ? UINT64_MAX : UINT32_MAX);
                ret->cie = id;
        }
        return 0;
}

/* The augmentation data of a CIE, as its letters after "z" say, from a cursor bounded by the data's length. */
static int parse_augmentation(Cursor *c, const char *letters, Cie *cie)
{
        uint64_t ignored;
        uint8_t encoding;
        int r = 0;

        for (const char *a = letters; *a; a++) {
                switch (*a) {
                case 'R':
                        r = read_u8(c, &cie->program.fde_encoding);
                        break;
                case 'L':
                        r = read_u8(c, &encoding);
                        break;
                case 'P':
                        r = read_u8(c, &encoding);
                        if (r >= 0)
                                r = read_encoded(c, encoding & PE_FORMAT_MASK, NULL, &ignored);
                        break;
                case 'S': /* a signal frame: the return address is the interrupted instruction, not a call's */
                        cie->program.signal_frame = true;
                        break;
                case 'B': /* AArch64 pointer authentication */
                case 'G': /* memory tagging */
                        break;
                default:
                        /* Data we cannot size: the length skips it, but 'R' must not come after it. */
                        return strchr(a, 'R') ? -EBADMSG : 0;
                }
                if (r < 0)
                        return r;
        }
        return 0;
}

/* .debug_frame's addresses: of the size its version 4 CIEs give, else the file's (8: x86-64 is ELFCLASS64);
 * absolute, so that they read as DW_EH_PE_* pointers of no base. No segment selector before them: another
 * architecture's. */
static int parse_address_size(Cursor *c, Cie *cie)
{
        uint8_t address_size, segment_selector_size;
        int r;

        r = read_u8(c, &address_size);
        if (r >= 0)
                r = read_u8(c, &segment_selector_size);
        if (r < 0)
                return r;
        if (!IN_SET(address_size, 4, 8) || segment_selector_size != 0)
                return -EBADMSG;
        cie->program.fde_encoding = address_size == 4 ? PE_UDATA4 : PE_ABSPTR;
        return 0;
}

static int parse_cie(const CfiSection *s, size_t off, Cie *ret)
{
        Cursor c = { .data = s->data, .vaddr = s->vaddr };
        Cie cie = { .program.fde_encoding = PE_ABSPTR };
        const char *augmentation, *nul;
        uint8_t version;
        Record rec;
        int r;

        r = cfi_read_record(s, off, &rec);
        if (r < 0)
                return r == -ENODATA ? -EBADMSG : r;
        if (!rec.is_cie)
                return -EBADMSG;
        c.pos = rec.body;
        c.end = rec.end;

        r = read_u8(&c, &version);
        if (r < 0)
                return r;
        /* Version 4 is .debug_frame's only. */
        if (!IN_SET(version, 1, 3) && !(version == 4 && s->format == CFI_DEBUG_FRAME))
                return -EBADMSG;
        augmentation = (const char *)c.data + c.pos;
        nul = memchr(augmentation, '\0', c.end - c.pos);
        if (!nul)
                return -EBADMSG;
        c.pos += (size_t)(nul - augmentation) + 1;
        /* Augmentations with data are .eh_frame's: in .debug_frame we could not tell how to size it. */
        if (s->format == CFI_DEBUG_FRAME && augmentation[0] != '\0')
                return -EBADMSG;
        if (version == 4) {
                r = parse_address_size(&c, &cie);
                if (r < 0)
                        return r;
        }
        r = read_uleb128(&c, &cie.program.code_align);
        if (r >= 0)
                r = read_sleb128(&c, &cie.program.data_align);
        if (r >= 0 && version == 1) {
                uint8_t ra;

                r = read_u8(&c, &ra);
                cie.program.ra_register = r >= 0 ? ra : 0;
        } else if (r >= 0)
                r = read_uleb128(&c, &cie.program.ra_register);
        if (r < 0)
                return r;

        if (augmentation[0] == 'z') {
                uint64_t len;
                Cursor data;

                r = read_uleb128(&c, &len);
                if (r < 0)
                        return r;
                if (len > c.end - c.pos)
                        return -EBADMSG;
                data = (Cursor) { .data = c.data, .pos = c.pos, .end = c.pos + len, .vaddr = c.vaddr };
                r = parse_augmentation(&data, augmentation + 1, &cie);
                if (r < 0)
                        return r;
                cie.augmented = true;
                c.pos = data.end;
        } else if (augmentation[0] != '\0')
                return -EBADMSG; /* "eh" and other pre-"z" forms, of which we cannot size the data */

        cie.insns = c;
        *ret = cie;
        return 0;
}

int cfi_parse_fde(const CfiSection *s, size_t off, Fde *ret_fde, Cie *ret_cie)
{
        Cursor c = { .data = s->data, .vaddr = s->vaddr };
        Fde fde = {};
        Record rec;
        Cie cie;
        int r;

        r = cfi_read_record(s, off, &rec);
        if (r < 0)
                return r == -ENODATA ? -EBADMSG : r;
        if (rec.is_cie || rec.cie >= s->size)
                return -EBADMSG;
        r = parse_cie(s, (size_t)rec.cie, &cie);
        if (r < 0)
                return r;

        c.pos = rec.body;
        c.end = rec.end;
        r = read_encoded(&c, cie.program.fde_encoding, NULL, &fde.pc_begin);
        if (r >= 0)
                r = read_encoded(&c, cie.program.fde_encoding & PE_FORMAT_MASK, NULL, &fde.pc_range);
        if (r >= 0 && cie.augmented)
                r = skip_block(&c);
        if (r < 0)
                return r;
        fde.insns = c;

        *ret_fde = fde;
        *ret_cie = cie;
        return 0;
}
