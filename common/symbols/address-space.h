/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "macros.h"
#include "proc-maps.h"
#include "symbolizer.h"

/* One process's view of the symbolizer's files: a snapshot of its /proc/PID/maps that outlives the process
 * (a target that exited stays resolvable) and is re-read when an address falls outside every known mapping
 * (dlopen, exec), with the process's own vDSO and JIT perf map. */
typedef struct AddressSpace AddressSpace;

/* Reads /proc/PID/maps now; -ESRCH when the process is gone. The address space uses s: free it before s. */
int address_space_new(Symbolizer *s, pid_t pid, AddressSpace **ret);
/* The address space of process pid (started at start_time, clock ticks since boot as in /proc/PID/stat; 0:
 * unknown), a child forked by the process of from: a copy of its parent's maps, the files shared, which the child
 * has until it execs or maps more (a miss reads its own maps then, while the process of that start time lives).
 * So the samples of a child that exited before the daemon saw it are named. */
int address_space_clone(const AddressSpace *from, pid_t pid, uint64_t start_time, AddressSpace **ret);
AddressSpace *address_space_free(AddressSpace *as);
DEFINE_TRIVIAL_CLEANUP_FUNC(AddressSpace *, address_space_free);

/* Resolve a user address of the process. Code of a file mapping is named from the file's symbols; the vDSO from
 * the process's own image of it (read through /proc/PID/mem); anonymous executable memory (JIT code) from the
 * process's perf map file, /tmp/perf-NSPID.map under its root (perf-map.h), re-read when it changes, at
 * most every second. return_address: the frame is a caller's return address, so the
 * call instruction is at addr - 1 (this keeps calls at a function's end from landing in the next function).
 * Always fills *ret (an address in no mapping gives module "[unknown]", function NULL); returns 0, or
 * -ENOMEM. */
/* The strings in *ret stay valid until the next call on this address space or on the symbolizer. */
int address_space_resolve(AddressSpace *as, uint64_t addr, bool return_address, Symbol *ret);

/* The process's mappings as last read, sorted by start; valid until the next call on as. *ret_generation
 * (may be NULL) moves with every new reading, so that a copy made from them (the BPF program's, unwind-tables.h)
 * knows when to be made again; no two readings of the same process's maps share one. */
const ProcMaps *address_space_maps(const AddressSpace *as, uint64_t *ret_generation);
/* Read the maps again now, unless they were read less than 100 ms ago or the process is gone: 1 when they were
 * replaced, 0 when not, -ENOMEM. For a caller told that an address is in none of them. */
int address_space_refresh(AddressSpace *as);
/* The same at once, however recent the last reading: for a caller told that the mappings changed. */
int address_space_reload(AddressSpace *as);

/* A change of the process's mappings that the caller saw happen, in the order it happened: [start, end)
 * unmapped, or mapped executable from the file of (dev, inode) at offset. */
typedef struct AddressSpaceChange {
        uint64_t start, end;
        bool mapped;
        uint64_t offset, inode;
        uint32_t dev_major, dev_minor;
} AddressSpaceChange;

/* The change made to the snapshot, without reading /proc, which may show a later state by now: a new mapping
 * is named after a mapping of its file in this snapshot or an earlier one. 0; -ENOENT when none had that file
 * (the caller reads the maps then), -EINVAL for an empty range, -ENOMEM. */
int address_space_apply(AddressSpace *as, const AddressSpaceChange *c);

/* For a layer above that reads more of a file than its symbols (the unwinder): the attachment of type
 * (symbolizer.h) of the file whose code is mapped at addr, loaded on first use, and the bias of the segment
 * holding addr (run-time address - ELF vaddr). -ENOENT when addr is in no executable file mapping (JIT code,
 * the vDSO, no mapping at all) or the file has no such attachment (no ELF symbols, nothing the type found,
 * no room in the budget); -ENOMEM. */
int address_space_code_attachment(AddressSpace *as, uint64_t addr, const FileAttachmentType *type,
                                  const void **ret_data, uint64_t *ret_bias);

/* For a reader of a file's own sections (line-source.h): the file whose code is mapped at addr, opened anew
 * (*ret_fd, the caller's) and checked to be the file the symbols came from, and addr's ELF virtual address in it.
 * -ENOENT when addr is in no executable file mapping, the file is no ELF or is another by now. */
int address_space_code_file(AddressSpace *as, uint64_t addr, int *ret_fd, uint64_t *ret_vaddr);
/* The same for the file's DWARF (inline-frames.h): its separate debug file when it has one (the one its symbols
 * came from, else one by build-id), else the file itself. */
int address_space_dwarf_file(AddressSpace *as, uint64_t addr, int *ret_fd, uint64_t *ret_vaddr);

/* What is known of the file mapped at addr (parsing it if it is new): -ENOENT when addr is in no file
 * mapping. */
int address_space_file_info(AddressSpace *as, uint64_t addr, FileInfo *ret);
/* The same for the first file mapping of the process whose module (basename) is module. */
int address_space_module_info(AddressSpace *as, const char *module, FileInfo *ret);
