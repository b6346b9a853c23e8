/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <string.h>

#include "macros.h"
#include "python-debug-offsets.h"
#include "python-elf.h"
#include "python-version.h"
#include "python-versions.h"

/* 3.13's _Py_DebugOffsets: char cookie[8]; uint64_t version, free_threaded; then the groups below, every
 * member a uint64_t. 584 bytes. */
#define DEBUG_OFFSETS_SIZE 584
#define DEBUG_OFFSETS_COOKIE "xdebugpy"
#define OFF_VERSION 8
#define OFF_FREE_THREADED 16

/* Where each group's size is, and the offsets vprof takes: byte positions in the table. */
enum {
        RUNTIME_SIZE = 24,
        INTERP_SIZE = 48,
        TSTATE_SIZE = 152,
        FRAME_SIZE = 224,
        CODE_SIZE = 272,
        OBJECT_SIZE = 352,
        BYTES_SIZE = 512,
        UNICODE_SIZE = 536,
};

static const struct {
        const char *field;
        unsigned at;   /* the offset's position in the table */
        unsigned size; /* its group's size's position */
} entries[] = {
        {"runtime_interpreters_head", 40, RUNTIME_SIZE},
        {"interp_threads_head", 72, INTERP_SIZE},
        {"tstate_next", 168, TSTATE_SIZE},
        {"cframe_current_frame", 184, TSTATE_SIZE},
        {"tstate_native_thread_id", 200, TSTATE_SIZE},
        {"frame_previous", 232, FRAME_SIZE},
        {"frame_code", 240, FRAME_SIZE},
        {"frame_instr", 248, FRAME_SIZE},
        {"frame_owner", 264, FRAME_SIZE},
        {"code_filename", 280, CODE_SIZE},
        {"code_name", 288, CODE_SIZE},
        {"code_qualname", 296, CODE_SIZE},
        {"code_linetable", 304, CODE_SIZE},
        {"code_firstlineno", 312, CODE_SIZE},
        {"code_bytecode", 344, CODE_SIZE},
        {"object_type", 360, OBJECT_SIZE},
        {"bytes_size", 520, BYTES_SIZE},
        {"bytes_data", 528, BYTES_SIZE},
        {"unicode_state", 544, UNICODE_SIZE},
        {"unicode_length", 552, UNICODE_SIZE},
        /* asciiobject_size: a size, where a compact ASCII string's characters start. */
        {"unicode_ascii_data", 560, UNICODE_SIZE},
};

/* A structure larger than this (PyInterpreterState is the largest, some 100 KiB) is not believed. */
#define STRUCT_SIZE_MAX (UINT64_C(16) << 20)

static uint64_t u64_at(const uint8_t *table, unsigned at)
{
        uint64_t v = 0;

        for (unsigned i = 0; i < 8; i++)
                v |= (uint64_t)table[at + i] << (8 * i);
        return v;
}

int python_debug_offsets_read(ElfFile *f, const PythonInterpreter *p, PythonLayout *ret, bool *found)
{
        uint8_t table[DEBUG_OFFSETS_SIZE];
        uint64_t version;
        int r, n = 0;

        if (PYTHON_VERSION_MAJOR(p->version_hex) != 3 || PYTHON_VERSION_MINOR(p->version_hex) != 13 ||
            p->runtime == 0 || p->runtime_size < DEBUG_OFFSETS_SIZE ||
            f->ehdr.e_ident[EI_DATA] != ELFDATA2LSB)
                return -ENOENT;
        r = python_elf_read(f, p->runtime, table, sizeof(table));
        if (r < 0)
                return r;
        if (memcmp(table, DEBUG_OFFSETS_COOKIE, 8) != 0)
                return -ENOENT;
        version = u64_at(table, OFF_VERSION);
        if (version > UINT32_MAX || !python_version_valid((uint32_t)version) ||
            PYTHON_VERSION_MINOR(version) != PYTHON_VERSION_MINOR(p->version_hex))
                return -EBADMSG;
        if (u64_at(table, OFF_FREE_THREADED) != 0)
                return -EOPNOTSUPP;

        /* Checked whole before any is taken: a table with one impossible number is not believed at all. */
        for (size_t e = 0; e < ELEMENTSOF(entries); e++) {
                uint64_t size = u64_at(table, entries[e].size), off = u64_at(table, entries[e].at);

                if (size == 0 || size > STRUCT_SIZE_MAX || off > size ||
                    python_layout_field_index(entries[e].field) < 0)
                        return -EBADMSG;
        }
        for (size_t e = 0; e < ELEMENTSOF(entries); e++) {
                size_t i = (size_t)python_layout_field_index(entries[e].field);

                *python_layout_field(ret, i) = (uint32_t)u64_at(table, entries[e].at);
                found[i] = true;
                n++;
        }
        return n;
}
