/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The files behind an address space's code: opened for their lines and inlined functions, and described for
 * the module tables. */
#include <assert.h>
#include <errno.h>
#include <string.h>

#include "address-space-internal.h"
#include "elf-symbols.h"
#include "macros.h"
#include "open-util.h"

static int code_file(AddressSpace *as, uint64_t addr, bool dwarf, int *ret_fd, uint64_t *ret_vaddr)
{
        char root[64];
        _cleanup_close_ int fd = -1;
        const ProcMap *m;
        FileEntry *entry;
        uint64_t vaddr;
        int r;

        assert(as);
        assert(ret_fd);
        assert(ret_vaddr);

        r = address_space_find(as, addr, &m);
        if (r < 0)
                return r;
        if (!m || !m->executable || !m->path || m->path[0] != '/')
                return -ENOENT;
        r = address_space_file(as, m, NULL, &entry);
        if (r < 0)
                return r;
        if (!entry->elf)
                return -ENOENT;
        r = elf_symbols_offset_to_vaddr(entry->elf, addr - m->start + m->offset, &vaddr);
        if (r < 0)
                return r;
        if (dwarf) {
                /* A separate debug file has the file's addresses; found again as the symbols found it. */
                fd = symbolizer_open_debug_file(as->symbolizer, entry, address_space_root(as, root));
                if (fd == -ENOMEM)
                        return fd;
                if (fd >= 0) {
                        *ret_fd = TAKE_FD(fd);
                        *ret_vaddr = vaddr;
                        return 0;
                }
        }
        fd = address_space_open_mapping(as, m);
        if (fd < 0)
                return fd;
        /* The path may name a newer file by now: its lines would not be this code's. */
        if (!address_space_file_entry_is(entry, fd))
                return -ENOENT;
        *ret_fd = TAKE_FD(fd);
        *ret_vaddr = vaddr;
        return 0;
}

int address_space_code_file(AddressSpace *as, uint64_t addr, int *ret_fd, uint64_t *ret_vaddr)
{
        return code_file(as, addr, false, ret_fd, ret_vaddr);
}

int address_space_dwarf_file(AddressSpace *as, uint64_t addr, int *ret_fd, uint64_t *ret_vaddr)
{
        return code_file(as, addr, true, ret_fd, ret_vaddr);
}

static void file_info_fill(const ProcMap *m, const FileEntry *entry, FileInfo *ret)
{
        *ret = (FileInfo) {
                .module = address_space_mapping_module(m),
                .path = m->name,
                .source = entry->source,
                .debug_file = entry->debug_file,
                .build_id = elf_symbols_build_id(entry->elf),
                .n_symbols = elf_symbols_count(entry->elf),
                .load_usec = entry->load_usec,
        };
}

int address_space_file_info(AddressSpace *as, uint64_t addr, FileInfo *ret)
{
        const ProcMap *m;
        FileEntry *entry;
        int r;

        assert(as);
        assert(ret);

        r = address_space_find(as, addr, &m);
        if (r < 0)
                return r;
        if (!m || !m->path || m->path[0] != '/')
                return -ENOENT;
        r = address_space_file(as, m, NULL, &entry);
        if (r < 0)
                return r;
        file_info_fill(m, entry, ret);
        return 0;
}

int address_space_module_info(AddressSpace *as, const char *module, FileInfo *ret)
{
        assert(as);
        assert(module);
        assert(ret);

        for (size_t i = 0; i < as->maps->n; i++) {
                const ProcMap *m = &as->maps->maps[i];
                FileEntry *entry;
                int r;

                if (!m->path || m->path[0] != '/' || strcmp(address_space_mapping_module(m), module) != 0)
                        continue;
                r = address_space_file(as, m, NULL, &entry);
                if (r < 0)
                        return r;
                file_info_fill(m, entry, ret);
                return 0;
        }
        return -ENOENT;
}
