/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <assert.h>
#include <errno.h>
#include <libiberty/demangle.h>
#include <stdlib.h>
#include <string.h>

#include "demangle.h"

/* Only names that start like a mangled C++ or Rust name go to the demangler: the rest (C, assembler) are most
 * symbols and need no work. */
static int looks_mangled(const char *name)
{
        return strncmp(name, "_Z", 2) == 0 || strncmp(name, "_R", 2) == 0;
}

int demangle_symbol(const char *name, char **ret)
{
        char *d;

        assert(name);
        assert(ret);

        if (!looks_mangled(name))
                return 0;

        /* libiberty, as binutils and gdb use it: Rust (legacy and v0) first, then the Itanium C++ ABI, with its
         * recursion limit on, so a hostile symbol table cannot exhaust the daemon's stack. Legacy Rust names lose
         * their "::h<hash>" element. errno tells a failed allocation from a name that is not mangled. */
        errno = 0;
        d = cplus_demangle(name, DMGL_PARAMS | DMGL_ANSI | DMGL_AUTO);
        if (!d)
                return errno == ENOMEM ? -ENOMEM : 0;
        *ret = d;
        return 1;
}
