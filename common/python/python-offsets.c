/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <assert.h>
#include <errno.h>
#include <string.h>

#include "debug-file.h"
#include "elf-util.h"
#include "log.h"
#include "python-debug-offsets.h"
#include "python-dwarf.h"
#include "python-elf.h"
#include "python-offsets.h"
#include "python-version.h"
#include "python-versions.h"

/* PyTypeObject.tp_members on LP64, the same from 3.0 to 3.13; a PyMemberDef is {name, type, offset, flags,
 * doc}: 40 bytes, offset at 16. */
#define TYPE_TP_MEMBERS 240
#define MEMBER_DEF_SIZE 40
#define MEMBER_DEF_OFFSET 16
/* PyCode_Type has 14 members in 3.11; a table is read no further than this. */
#define MEMBERS_MAX 64
/* Larger than any PyCodeObject: an offset beyond is not believed. */
#define CODE_OFFSET_MAX 4096

static const char *const source_names[_PYTHON_LAYOUT_SOURCE_MAX] = {
        [PYTHON_LAYOUT_SOURCE_NONE] = "none",       [PYTHON_LAYOUT_SOURCE_TABLE] = "table",
        [PYTHON_LAYOUT_SOURCE_MEMBERS] = "members", [PYTHON_LAYOUT_SOURCE_DEBUG_OFFSETS] = "debug-offsets",
        [PYTHON_LAYOUT_SOURCE_DWARF] = "dwarf",
};

const char *python_layout_source_to_string(PythonLayoutSource s)
{
        return (unsigned)s < _PYTHON_LAYOUT_SOURCE_MAX ? source_names[s] : NULL;
}

/* A value for field i from a source better than the ones before it. */
static void offer(PythonOffsets *o, size_t i, uint32_t value, PythonLayoutSource source)
{
        uint32_t *field = python_layout_field(&o->layout, i);

        if (*field == value) {
                o->agreed[i] |= 1u << source;
        } else {
                if (*field != PYTHON_LAYOUT_NONE) {
                        log_debug("Python layout: %s is %u by the %s, %u by the %s",
                                  python_layout_fields[i].name, *field, source_names[o->source[i]], value,
                                  source_names[source]);
                        o->conflicts++;
                }
                *field = value;
                o->agreed[i] = 1u << source;
        }
        o->source[i] = source;
}

/* The code object's members by the names PyCode_Type gives them. co_lnotab is a member up to 3.9 only (a
 * getter from 3.10, where co_linetable is the member). */
static const struct {
        const char *member, *field;
} code_members[] = {
        {"co_filename", "code_filename"},   {"co_name", "code_name"},
        {"co_qualname", "code_qualname"},   {"co_firstlineno", "code_firstlineno"},
        {"co_linetable", "code_linetable"}, {"co_lnotab", "code_linetable"},
};

/* PyCode_Type's tp_members, read from the file where its pointers can be resolved without running the
 * loader: the number of fields taken, or why none. */
static int layout_from_members(ElfFile *f, const PythonInterpreter *p, PythonOffsets *o)
{
        uint64_t table;
        int r, n = 0;

        if (p->code_type == 0)
                return -ENOENT;
        r = python_elf_read_pointer(f, p->code_type + TYPE_TP_MEMBERS, &table);
        if (r < 0)
                return r;
        for (unsigned m = 0; m < MEMBERS_MAX && table != 0; m++) {
                uint64_t name_ptr, entry = table + (uint64_t)m * MEMBER_DEF_SIZE;
                int64_t offset;
                char name[16];

                if (entry < table)
                        break;
                r = python_elf_read_pointer(f, entry, &name_ptr);
                if (r < 0)
                        return n > 0 ? n : r;
                if (name_ptr == 0)
                        break; /* the table's end */
                r = python_elf_read(f, entry + MEMBER_DEF_OFFSET, &offset, sizeof(offset));
                if (r < 0)
                        return n > 0 ? n : r;
                /* Names of interest are shorter than 16 bytes; a name at a segment's very end is skipped. */
                if (python_elf_read(f, name_ptr, name, sizeof(name)) < 0 ||
                    !memchr(name, '\0', sizeof(name)))
                        continue;
                if (offset <= 0 || offset >= CODE_OFFSET_MAX)
                        continue;
                for (size_t k = 0; k < ELEMENTSOF(code_members); k++) {
                        ssize_t i;

                        if (strcmp(name, code_members[k].member) != 0)
                                continue;
                        if (strcmp(name, "co_lnotab") == 0 && PYTHON_VERSION_MINOR(p->version_hex) >= 10)
                                continue;
                        i = python_layout_field_index(code_members[k].field);
                        if (i < 0)
                                continue;
                        offer(o, (size_t)i, (uint32_t)offset, PYTHON_LAYOUT_SOURCE_MEMBERS);
                        n++;
                }
        }
        return n;
}

static int layout_from_debug_offsets(ElfFile *f, const PythonInterpreter *p, PythonOffsets *o)
{
        PythonLayout published = o->layout;
        bool found[PYTHON_LAYOUT_FIELDS_MAX] = {};
        int r;

        r = python_debug_offsets_read(f, p, &published, found);
        if (r < 0)
                return r;
        for (size_t i = 0; i < python_layout_n_fields; i++)
                if (found[i])
                        offer(o, i, python_layout_field_get(&published, i),
                              PYTHON_LAYOUT_SOURCE_DEBUG_OFFSETS);
        return r;
}

static int layout_from_dwarf(int fd, const PythonInterpreter *p, const char *root, PythonOffsets *o)
{
        _cleanup_close_ int debug_fd = -1;
        PythonLayout dwarf = o->layout;
        bool found[PYTHON_LAYOUT_FIELDS_MAX] = {};
        int r;

        if (!p->own_dwarf) {
                if (!p->dwarf_path)
                        return -ENOENT;
                debug_fd = debug_file_open(root, p->dwarf_path);
                if (debug_fd < 0)
                        return debug_fd;
                fd = debug_fd;
        }
        r = python_dwarf_layout(fd, p->version_hex, &dwarf, found);
        if (r < 0)
                return r;
        for (size_t i = 0; i < python_layout_n_fields; i++)
                if (found[i])
                        offer(o, i, python_layout_field_get(&dwarf, i), PYTHON_LAYOUT_SOURCE_DWARF);
        return r;
}

int python_offsets_fill(int fd, const PythonInterpreter *p, const char *root, PythonOffsets *ret)
{
        _cleanup_(elf_file_freep) ElfFile *f = NULL;
        const PythonVersionTable *t;
        PythonOffsets o = {};

        assert(p);
        assert(ret);
        assert(python_layout_n_fields <= PYTHON_LAYOUT_FIELDS_MAX);

        t = python_versions_lookup(PYTHON_VERSION_MINOR(p->version_hex));
        if (PYTHON_VERSION_MAJOR(p->version_hex) != 3 || !t)
                return -EPROTONOSUPPORT;
        o.layout = t->layout;
        o.layout.version_hex = p->version_hex;
        o.table_verified = t->verified;
        for (size_t i = 0; i < python_layout_n_fields; i++)
                if (python_layout_field_get(&o.layout, i) != PYTHON_LAYOUT_NONE) {
                        o.source[i] = PYTHON_LAYOUT_SOURCE_TABLE;
                        o.agreed[i] = 1u << PYTHON_LAYOUT_SOURCE_TABLE;
                }

        /* Worst source first, so that each better one may overrule it. */
        o.members_result = elf_file_open(fd, &f);
        o.debug_offsets_result = o.members_result;
        if (o.members_result >= 0) {
                o.members_result = layout_from_members(f, p, &o);
                o.debug_offsets_result = layout_from_debug_offsets(f, p, &o);
        }
        o.dwarf_result = layout_from_dwarf(fd, p, root, &o);
        if (IN_SET(-ENOMEM, o.members_result, o.debug_offsets_result, o.dwarf_result))
                return -ENOMEM;
        *ret = o;
        return 0;
}
