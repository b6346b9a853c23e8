/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <assert.h>
#include <errno.h>

#include "address-space.h"
#include "eh-frame.h"
#include "unwinder.h"

static int cfi_load(int fd, void **ret_data, size_t *ret_bytes)
{
        EhFrame *e = NULL;
        int r;

        r = eh_frame_load_fd(fd, &e);
        if (r < 0)
                return r;
        *ret_bytes = eh_frame_memory(e);
        *ret_data = e;
        return 0;
}

static void cfi_free(void *data)
{
        eh_frame_free(data);
}

/* Each file's CFI, as the symbolizer's file cache keeps it for us. */
static const FileAttachmentType cfi_attachment = {
        .name = "call frame information",
        .load = cfi_load,
        .free = cfi_free,
};

int unwinder_step(AddressSpace *as, const UnwindRegs *regs, bool return_address, const uint64_t *window,
                  size_t n_words, UnwindRegs *ret_caller)
{
        uint64_t ip, bias;
        const void *cfi;
        int r;

        assert(as);
        assert(regs);
        assert(window || n_words == 0);
        assert(ret_caller);

        /* A caller's frame is at its call instruction, before the return address. */
        ip = regs->ip - (return_address && regs->ip > 0 ? 1 : 0);
        r = address_space_code_attachment(as, ip, &cfi_attachment, &cfi, &bias);
        if (r < 0)
                return r;
        return eh_frame_unwind_step(cfi, bias, &(UnwindRegs) { .ip = ip, .sp = regs->sp, .bp = regs->bp },
                                    window, n_words, ret_caller);
}

int unwinder_leaf(AddressSpace *as, uint64_t ip, uint64_t sp, uint64_t bp, const uint64_t *window,
                  size_t n_words, uint64_t *ret_return_address)
{
        UnwindRegs caller;
        int r;

        assert(ret_return_address);

        r = unwinder_step(as, &(UnwindRegs) { .ip = ip, .sp = sp, .bp = bp }, false, window, n_words,
                          &caller);
        if (r < 0)
                return r;
        *ret_return_address = caller.ip;
        return 0;
}
