/* SPDX-License-Identifier: LGPL-2.1-or-later */
#if HAVE_LIBDW
#include <dwarf.h>
#include <errno.h>
#include <stdbool.h>
#include <string.h>

#include "inline-frames.h"
#include "macros.h"

/* Bounds of the walk over untrusted DWARF: how deep scopes nest (namespaces, classes, lexical blocks, inlined
 * scopes together) and how many DIEs one lookup may visit (a unit of an LTO build holds a few hundred thousand,
 * most of them types the walk skips without descending). */
#define SCOPE_DEPTH_MAX 128
#define DIES_VISITED_MAX (4u << 20)

typedef struct Walk {
        uint64_t vaddr;
        unsigned visited;
        Dwarf_Files *files; /* the unit's file table, for DW_AT_call_file; NULL when it has none */
        size_t n_files;
        /* The scopes holding vaddr, outermost first, as the walk goes down. */
        Dwarf_Die scopes[INLINE_FRAMES_MAX + 1];
        size_t n_scopes;
        size_t n_inlined_dropped; /* inlined scopes past the chain's bound */
        bool found;                /* a subprogram holds vaddr */
} Walk;

/* Children of a DIE without addresses that may still hold functions: C++ namespaces and classes. */
static bool tag_holds_functions(int tag)
{
        return IN_SET(tag, DW_TAG_namespace, DW_TAG_class_type, DW_TAG_structure_type, DW_TAG_union_type,
                      DW_TAG_module);
}

static bool scope_artificial(Dwarf_Die *die)
{
        Dwarf_Attribute attr;
        bool flag = false;

        return dwarf_formflag(dwarf_attr_integrate(die, DW_AT_artificial, &attr), &flag) == 0 && flag;
}

/* Down from parent to the scopes holding vaddr; 1 when a subprogram below parent holds it, 0 when none does,
 * -E2BIG past the walk's bounds. */
static int walk_children(Walk *w, Dwarf_Die *parent, unsigned depth)
{
        Dwarf_Die child;
        int r;

        if (depth >= SCOPE_DEPTH_MAX)
                return -E2BIG;
        if (dwarf_child(parent, &child) != 0)
                return 0;
        do {
                int tag = dwarf_tag(&child);

                if (++w->visited > DIES_VISITED_MAX)
                        return -E2BIG;
                if (tag == DW_TAG_subprogram || tag == DW_TAG_inlined_subroutine || tag == DW_TAG_lexical_block ||
                    tag == DW_TAG_try_block || tag == DW_TAG_catch_block) {
                        /* A scope with code: descend only into the one holding vaddr. Scopes of one level do not
                         * overlap in sane DWARF; the first one holding vaddr is taken. */
                        if (dwarf_haspc(&child, w->vaddr) <= 0)
                                continue;
                        if (tag == DW_TAG_subprogram) {
                                /* A new subprogram (a nested one of GNU C) restarts the chain. */
                                w->n_scopes = 0;
                                w->n_inlined_dropped = 0;
                                w->found = true;
                        }
                        if (!w->found)
                                continue; /* code in no subprogram: nothing to name */
                        if (IN_SET(tag, DW_TAG_lexical_block, DW_TAG_try_block, DW_TAG_catch_block)) {
                                /* GCC's sibling blocks overlap (Debian's python3.11): the one holding an inlined
                                 * scope at vaddr wins, else the walk goes on to the next. */
                                size_t before = w->n_scopes + w->n_inlined_dropped;

                                r = walk_children(w, &child, depth + 1);
                                if (r < 0 || w->n_scopes + w->n_inlined_dropped > before)
                                        return r < 0 ? r : 1;
                                continue;
                        }
                        /* An artificial function (GCC's __attribute__((artificial)): the intrinsics of
                         * immintrin.h, a program's own measuring helpers) is no frame: its code is its
                         * caller's, as debuggers step it. What it inlined in turn still is. */
                        if (tag == DW_TAG_subprogram || !scope_artificial(&child)) {
                                if (w->n_scopes < ELEMENTSOF(w->scopes))
                                        w->scopes[w->n_scopes++] = child;
                                else
                                        w->n_inlined_dropped++;
                        }
                        r = walk_children(w, &child, depth + 1);
                        return r < 0 ? r : 1;
                }
                if (tag_holds_functions(tag) && dwarf_haschildren(&child) > 0) {
                        r = walk_children(w, &child, depth + 1);
                        if (r != 0)
                                return r;
                }
        } while ((r = dwarf_siblingof(&child, &child)) == 0);
        return r < 0 ? -EINVAL : 0;
}

static const char *scope_name(Dwarf_Die *die)
{
        Dwarf_Attribute attr;
        const char *name;

        name = dwarf_formstring(dwarf_attr_integrate(die, DW_AT_linkage_name, &attr));
        if (!name)
                name = dwarf_formstring(dwarf_attr_integrate(die, DW_AT_MIPS_linkage_name, &attr));
        if (!name)
                name = dwarf_diename(die);
        return name;
}

static void call_site(Walk *w, Dwarf_Die *die, InlineFrame *f)
{
        Dwarf_Attribute attr;
        Dwarf_Word file, line;

        if (dwarf_formudata(dwarf_attr(die, DW_AT_call_file, &attr), &file) == 0 && w->files && file < w->n_files)
                f->call_file = dwarf_filesrc(w->files, file, NULL, NULL);
        if (dwarf_formudata(dwarf_attr(die, DW_AT_call_line, &attr), &line) == 0 && line <= INT32_MAX)
                f->call_line = (int)line;
}

int inline_frames_walk(Dwarf_Die *cu, uint64_t vaddr, InlineFrame *frames, size_t max)
{
        Walk w = {.vaddr = vaddr};
        size_t n = 0, n_kept;
        int r;

        if (max == 0)
                return -ENOBUFS;
        r = walk_children(&w, cu, 0);
        if (r < 0 && !w.found)
                return r;
        if (!w.found || w.n_scopes == 0)
                return 0;
        if (dwarf_getsrcfiles(cu, &w.files, &w.n_files) != 0)
                w.files = NULL;
        /* scopes[] is outermost first: the frames go innermost first, the outermost kept when max cuts. */
        n_kept = MIN(w.n_scopes, max);
        for (size_t k = 0; k < n_kept; k++) {
                /* Frame k, innermost first, of the kept scopes (the outermost ones). */
                Dwarf_Die *die = &w.scopes[n_kept - 1 - k];
                InlineFrame *f = &frames[n++];

                *f = (InlineFrame){
                        .function = scope_name(die),
                        .inlined = dwarf_tag(die) == DW_TAG_inlined_subroutine,
                };
                if (f->inlined)
                        call_site(&w, die, f);
        }
        return (int)n;
}
#endif
