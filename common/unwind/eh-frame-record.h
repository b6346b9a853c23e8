/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cfa-program.h"
#include "dwarf-cursor.h"

/* The records of a CFI section, CIEs and FDEs, between eh-frame-record.c, which parses them, and eh-frame.c, which
 * makes the table of functions of their FDEs; nothing else includes this. */

/* The two formats differ in their records' ids, their CIEs' versions and what their addresses are. */
typedef enum CfiFormat {
        CFI_EH_FRAME,
        CFI_DEBUG_FRAME,
} CfiFormat;

typedef struct CfiSection {
        uint8_t *data;  /* .eh_frame up to its terminator; .debug_frame whole */
        size_t size;    /* 0: none */
        uint64_t vaddr; /* of data[0], for .eh_frame's pc-relative pointers; 0 for .debug_frame, never loaded
                         */
        CfiFormat format;
} CfiSection;

typedef struct Cie {
        CfaCie program;
        bool augmented; /* "z": FDEs carry augmentation data to skip */
        Cursor insns;   /* the initial instructions, up to the end of the record */
} Cie;

typedef struct Fde {
        uint64_t pc_begin, pc_range;
        Cursor insns;
} Fde;

/* The header of a CIE or an FDE. */
typedef struct Record {
        size_t body; /* past the CIE id or CIE pointer */
        size_t end;
        bool is_cie;
        uint64_t cie; /* an FDE's: the offset of its CIE in the section, unchecked (UINT64_MAX: before it) */
} Record;

/* The header of the CIE or FDE at off. -ENODATA at a zero length: .eh_frame's terminator. */
int cfi_read_record(const CfiSection *s, size_t off, Record *ret);

/* The FDE at off, and its CIE. */
int cfi_parse_fde(const CfiSection *s, size_t off, Fde *ret_fde, Cie *ret_cie);
