/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <stddef.h>
#include <string.h>
#include <sys/types.h>

#include "macros.h"
#include "python-dwarf.h"
#include "python-version.h"
#include "python-versions.h"

#if HAVE_LIBDW
#include <dwarf.h>
#include <elfutils/libdw.h>
#include <libelf.h>

#include "dwarf-strings.h"

/* The structures looked up by name (a struct's tag or a typedef's name, as CPython's headers spell them). */
enum {
        TYPE_RUNTIME, /* struct pyruntimestate */
        TYPE_INTERP,  /* struct _is */
        TYPE_TSTATE,  /* struct _ts */
        TYPE_CFRAME,  /* struct _PyCFrame (3.11, 3.12) */
        TYPE_FRAME,   /* struct _PyInterpreterFrame (3.11+) */
        TYPE_FRAME_OBJECT, /* struct _frame: PyFrameObject, the frames that 3.8 to 3.10 run */
        TYPE_OBJECT,  /* struct _object */
        TYPE_CODE,    /* PyCodeObject */
        TYPE_ASCII,   /* PyASCIIObject */
        TYPE_COMPACT, /* PyCompactUnicodeObject */
        TYPE_BYTES,   /* PyBytesObject */
        _TYPE_MAX,
};

static const char *const type_names[_TYPE_MAX] = {
        [TYPE_RUNTIME] = "pyruntimestate",
        [TYPE_INTERP] = "_is",
        [TYPE_TSTATE] = "_ts",
        [TYPE_CFRAME] = "_PyCFrame",
        [TYPE_FRAME] = "_PyInterpreterFrame",
        [TYPE_FRAME_OBJECT] = "_frame",
        [TYPE_OBJECT] = "_object",
        [TYPE_CODE] = "PyCodeObject",
        [TYPE_ASCII] = "PyASCIIObject",
        [TYPE_COMPACT] = "PyCompactUnicodeObject",
        [TYPE_BYTES] = "PyBytesObject",
};

/* Where a field is in the DWARF: a member path (dots between nested members) in a structure, or, with no
 * path, the structure's size. Alternatives for versions that renamed it; the minor versions it applies to,
 * for a name that meant something else in others (3.10's PyThreadState.cframe is a CFrame without
 * current_frame; before 3.11 the frame fields are PyFrameObject's). */
typedef struct FieldSpec {
        const char *field; /* PythonLayout's name of it */
        unsigned type;
        unsigned min_minor, max_minor;
        const char *paths[3];
} FieldSpec;

#define ANY 0, 99
#define FROM_3_11 11, 99
#define TO_3_10 0, 10

static const FieldSpec specs[] = {
        { "runtime_tss_key", TYPE_RUNTIME, ANY, { "gilstate.autoTSSkey._key", "autoTSSkey._key" } },
        { "runtime_tss_initialized", TYPE_RUNTIME, ANY,
          { "gilstate.autoTSSkey._is_initialized", "autoTSSkey._is_initialized" } },
        { "runtime_interpreters_head", TYPE_RUNTIME, ANY, { "interpreters.head" } },
        { "interp_threads_head", TYPE_INTERP, ANY, { "threads.head", "tstate_head" } },
        { "tstate_next", TYPE_TSTATE, ANY, { "next" } },
        { "tstate_native_thread_id", TYPE_TSTATE, ANY, { "native_thread_id" } },
        { "tstate_cframe", TYPE_TSTATE, 11, 12, { "cframe" } },
        { "cframe_current_frame", TYPE_CFRAME, 11, 12, { "current_frame" } },
        { "cframe_current_frame", TYPE_TSTATE, 13, 99, { "current_frame" } },
        { "cframe_current_frame", TYPE_TSTATE, TO_3_10, { "frame" } },
        { "frame_code", TYPE_FRAME, FROM_3_11, { "f_code", "f_executable" } },
        { "frame_previous", TYPE_FRAME, FROM_3_11, { "previous" } },
        { "frame_instr", TYPE_FRAME, FROM_3_11, { "prev_instr", "instr_ptr" } },
        { "frame_is_entry", TYPE_FRAME, FROM_3_11, { "is_entry" } },
        { "frame_owner", TYPE_FRAME, FROM_3_11, { "owner" } },
        { "frame_code", TYPE_FRAME_OBJECT, TO_3_10, { "f_code" } },
        { "frame_previous", TYPE_FRAME_OBJECT, TO_3_10, { "f_back" } },
        { "frame_instr", TYPE_FRAME_OBJECT, TO_3_10, { "f_lasti" } },
        { "object_type", TYPE_OBJECT, ANY, { "ob_type" } },
        { "code_filename", TYPE_CODE, ANY, { "co_filename" } },
        { "code_name", TYPE_CODE, ANY, { "co_name" } },
        { "code_qualname", TYPE_CODE, ANY, { "co_qualname" } },
        { "code_firstlineno", TYPE_CODE, ANY, { "co_firstlineno" } },
        { "code_linetable", TYPE_CODE, ANY, { "co_linetable", "co_lnotab" } },
        { "code_bytecode", TYPE_CODE, FROM_3_11, { "co_code_adaptive" } },
        { "unicode_length", TYPE_ASCII, ANY, { "length" } },
        { "unicode_state", TYPE_ASCII, ANY, { "state" } },
        { "unicode_ascii_data", TYPE_ASCII, ANY, { NULL } },
        { "unicode_compact_data", TYPE_COMPACT, ANY, { NULL } },
        { "bytes_size", TYPE_BYTES, ANY, { "ob_base.ob_size" } },
        { "bytes_data", TYPE_BYTES, ANY, { "ob_sval" } },
};

/* Follow typedefs and qualifiers to the structure: true and *die, false when it is none. */
static bool resolve_struct(Dwarf_Die *die)
{
        for (unsigned depth = 0; depth < 16; depth++) {
                Dwarf_Attribute attr;

                switch (dwarf_tag(die)) {
                case DW_TAG_structure_type:
                        return !dwarf_hasattr(die, DW_AT_declaration);
                case DW_TAG_typedef:
                case DW_TAG_const_type:
                case DW_TAG_volatile_type:
                        if (!dwarf_attr(die, DW_AT_type, &attr) || !dwarf_formref_die(&attr, die))
                                return false;
                        break;
                default:
                        return false;
                }
        }
        return false;
}

/* The structures named in type_names, from the top level of every unit, until all are found. */
static void find_types(Dwarf *dwarf, Dwarf_Die types[static _TYPE_MAX], bool have[static _TYPE_MAX])
{
        Dwarf_Off off = 0, next;
        size_t header_size, missing = _TYPE_MAX;

        while (missing > 0 && dwarf_nextcu(dwarf, off, &next, &header_size, NULL, NULL, NULL) == 0) {
                Dwarf_Die unit, child;

                if (dwarf_offdie(dwarf, off + header_size, &unit) && dwarf_child(&unit, &child) == 0) {
                        do {
                                int tag = dwarf_tag(&child);
                                const char *name;

                                if (tag != DW_TAG_structure_type && tag != DW_TAG_typedef)
                                        continue;
                                name = dwarf_diename(&child);
                                if (!name)
                                        continue;
                                for (size_t t = 0; t < _TYPE_MAX; t++) {
                                        Dwarf_Die die = child;

                                        if (have[t] || strcmp(name, type_names[t]) != 0 ||
                                            !resolve_struct(&die))
                                                continue;
                                        types[t] = die;
                                        have[t] = true;
                                        missing--;
                                }
                        } while (dwarf_siblingof(&child, &child) == 0);
                }
                off = next;
        }
}

/* The offset of the member path in the structure st: 0 and *ret, -ENOENT. */
static int member_offset(const Dwarf_Die *st, const char *path, uint64_t *ret)
{
        Dwarf_Die cur = *st;
        uint64_t total = 0;

        while (*path) {
                size_t len = strcspn(path, ".");
                Dwarf_Die child;
                bool found = false;

                if (dwarf_child(&cur, &child) != 0)
                        return -ENOENT;
                do {
                        const char *name;
                        Dwarf_Attribute attr;
                        Dwarf_Word loc;

                        if (dwarf_tag(&child) != DW_TAG_member || !(name = dwarf_diename(&child)) ||
                            strlen(name) != len || strncmp(name, path, len) != 0)
                                continue;
                        /* A constant offset (DWARF 3+); an old location expression is not read. */
                        if (!dwarf_attr(&child, DW_AT_data_member_location, &attr) ||
                            dwarf_formudata(&attr, &loc) != 0 || loc > UINT32_MAX)
                                return -ENOENT;
                        total += loc;
                        found = true;
                        break;
                } while (dwarf_siblingof(&child, &child) == 0);
                if (!found)
                        return -ENOENT;
                path += len;
                if (*path == '.') {
                        Dwarf_Attribute attr;

                        path++;
                        if (!dwarf_attr(&child, DW_AT_type, &attr) || !dwarf_formref_die(&attr, &cur) ||
                            !resolve_struct(&cur))
                                return -ENOENT;
                }
        }
        *ret = total;
        return 0;
}

int python_dwarf_layout(int fd, uint32_t version_hex, PythonLayout *ret, bool *found)
{
        Dwarf_Die types[_TYPE_MAX];
        bool have[_TYPE_MAX] = {};
        Elf *elf;
        Dwarf *dwarf;
        int n = 0;

        if (elf_version(EV_CURRENT) == EV_NONE)
                return -EOPNOTSUPP;
        /* ELF_C_READ: a file that its owner truncates while we read gives an error, not SIGBUS. */
        elf = elf_begin(fd, ELF_C_READ, NULL);
        if (!elf)
                return -ENODATA;
        dwarf = dwarf_begin_elf(elf, DWARF_C_READ, NULL);
        if (!dwarf || !dwarf_strings_terminated(elf)) {
                if (dwarf)
                        dwarf_end(dwarf);
                elf_end(elf);
                return -ENODATA;
        }

        find_types(dwarf, types, have);
        for (size_t s = 0; s < ELEMENTSOF(specs); s++) {
                const FieldSpec *spec = &specs[s];
                ssize_t i = python_layout_field_index(spec->field);
                uint64_t size, off = UINT64_MAX;
                int bytes;

                if (i < 0 || !have[spec->type] || PYTHON_VERSION_MINOR(version_hex) < spec->min_minor ||
                    PYTHON_VERSION_MINOR(version_hex) > spec->max_minor)
                        continue;
                bytes = dwarf_bytesize(&types[spec->type]);
                if (bytes < 0)
                        continue;
                size = (uint64_t)bytes;
                if (!spec->paths[0])
                        off = size;
                for (size_t p = 0; p < ELEMENTSOF(spec->paths) && spec->paths[p]; p++)
                        if (member_offset(&types[spec->type], spec->paths[p], &off) == 0)
                                break;
                /* Inside the structure (a flexible array member may start at its end), or not believed. */
                if (off > size || off > UINT32_MAX)
                        continue;
                *python_layout_field(ret, (size_t)i) = (uint32_t)off;
                found[i] = true;
                n++;
        }
        dwarf_end(dwarf);
        elf_end(elf);
        return n;
}

#else

int python_dwarf_layout(int fd, uint32_t version_hex, PythonLayout *ret, bool *found)
{
        (void)fd;
        (void)version_hex;
        (void)ret;
        (void)found;
        return -EOPNOTSUPP;
}

#endif
