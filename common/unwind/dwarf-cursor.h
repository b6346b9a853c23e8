/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stddef.h>
#include <stdint.h>

/* Reading the little-endian fields, LEB128 numbers and DW_EH_PE_* pointers of .eh_frame and .eh_frame_hdr
 * (and of .debug_frame, whose addresses read as absolute DW_EH_PE_* pointers of their size). The bytes come
 * from untrusted processes: every read checks the cursor's end and fails with -EBADMSG past it, leaving its
 * output untouched. */

/* Pointer encodings, DW_EH_PE_*, that callers name: the rest stay with read_encoded(). */
#define PE_ABSPTR 0x00
#define PE_UDATA4 0x03
#define PE_FORMAT_MASK 0x0f
#define PE_OMIT 0xff

/* A bounded reader: every read checks end, which is the end of the record being read, at most the
 * section's. */
typedef struct Cursor {
        const uint8_t *data;
        size_t pos, end;
        uint64_t vaddr; /* of data[0], for pc-relative pointers */
} Cursor;

/* An n-byte little-endian number, n <= 8. */
int read_le(Cursor *c, size_t n, uint64_t *ret);
int read_u8(Cursor *c, uint8_t *ret);
int read_uleb128(Cursor *c, uint64_t *ret);
int read_sleb128(Cursor *c, int64_t *ret);

/* Skip a DWARF block: a ULEB128 length, then that many bytes. */
int skip_block(Cursor *c);
/* The same, giving the block's bytes as a cursor bounded to them. */
int read_block(Cursor *c, Cursor *ret);

/* A pointer in the given DW_EH_PE_* encoding. datarel: the base of DW_EH_PE_datarel, NULL where it has none
 * we know (.eh_frame itself: the GOT). An indirect pointer is given as the address where it is stored: only
 * personality routines use that, and we never need their value. -EOPNOTSUPP for a base we cannot apply. */
int read_encoded(Cursor *c, uint8_t encoding, const uint64_t *datarel, uint64_t *ret);
