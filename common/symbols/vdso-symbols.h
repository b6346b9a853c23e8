/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "macros.h"

/* The functions of a vDSO, from the image the kernel mapped into a process: the vDSO is a small ELF shared
 * object with a .dynsym and no file, so it is parsed from memory. */
typedef struct VdsoSymbols VdsoSymbols;

/* Parses an ELF image (the whole [vdso] mapping). -ENOEXEC when it is not ELF or has no .dynsym. */
int vdso_symbols_parse(const void *image, size_t size, VdsoSymbols **ret);
/* Reads the mapping [start, end) of process pid through /proc/PID/mem (ptrace access needed) and parses it. */
int vdso_symbols_read(pid_t pid, uint64_t start, uint64_t end, VdsoSymbols **ret);
/* The function at offset (from the start of the mapping) and the offset into it; NULL when none. */
const char *vdso_symbols_lookup(const VdsoSymbols *v, uint64_t offset, uint64_t *ret_offset);
size_t vdso_symbols_count(const VdsoSymbols *v);
/* Another holder of v (NULL stays NULL); vdso_symbols_free() drops a holder, the last one frees it. */
VdsoSymbols *vdso_symbols_ref(VdsoSymbols *v);
VdsoSymbols *vdso_symbols_free(VdsoSymbols *v);
DEFINE_TRIVIAL_CLEANUP_FUNC(VdsoSymbols *, vdso_symbols_free);
