/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <assert.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "address-space.h"
#include "eh-frame.h"
#include "unwinder.h"

/* A file's parsed CFI, shared by the symbolizer's cache entry of the file and the table builds under way, which
 * may outlive the entry (dropped for the budget, or when no process maps the file any more). */
typedef struct Cfi {
        unsigned refs;
        EhFrame *eh_frame;
} Cfi;

static Cfi *cfi_unref(Cfi *c)
{
        if (c && --c->refs == 0) {
                eh_frame_free(c->eh_frame);
                free(c);
        }
        return NULL;
}

/* The file's .eh_frame, and .debug_frame for its code without: its own, else its debug file's. */
static int cfi_load_with_debug(int fd, int debug_fd, void **ret_data, size_t *ret_bytes)
{
        EhFrame *e = NULL;
        Cfi *c;
        int r;

        r = eh_frame_load_fds(fd, debug_fd, &e);
        if (r < 0)
                return r;
        c = malloc(sizeof(*c));
        if (!c) {
                eh_frame_free(e);
                return -ENOMEM;
        }
        *c = (Cfi){ .refs = 1, .eh_frame = e };
        *ret_bytes = eh_frame_memory(e) + sizeof(*c);
        *ret_data = c;
        return 0;
}

static int cfi_load(int fd, void **ret_data, size_t *ret_bytes)
{
        return cfi_load_with_debug(fd, -1, ret_data, ret_bytes);
}

static void cfi_free(void *data)
{
        cfi_unref(data);
}

/* Each file's CFI, as the symbolizer's file cache keeps it for us. */
static const FileAttachmentType cfi_attachment = {
        .name = "call frame information",
        .load = cfi_load,
        .free = cfi_free,
        .load_with_debug = cfi_load_with_debug,
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
        return eh_frame_unwind_step(((const Cfi *)cfi)->eh_frame, bias,
                                    &(UnwindRegs) { .ip = ip, .sp = regs->sp, .bp = regs->bp }, window, n_words,
                                    ret_caller);
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

int unwinder_frame_kind(AddressSpace *as, uint64_t ip, bool return_address, UnwinderFrameKind *ret)
{
        const void *cfi;
        uint64_t bias;
        Row row;
        int r;

        assert(as);
        assert(ret);

        ip -= return_address && ip > 0 ? 1 : 0;
        r = address_space_code_attachment(as, ip, &cfi_attachment, &cfi, &bias);
        if (r < 0)
                return r;
        r = eh_frame_find_row(((const Cfi *)cfi)->eh_frame, ip - bias, &row, NULL);
        if (r == -ENOENT) {
                *ret = UNWINDER_FRAME_NO_FDE;
                return 0;
        }
        if (r < 0)
                return r;
        *ret = row.columns[COLUMN_RA].type == RULE_UNDEFINED ? UNWINDER_FRAME_OUTERMOST : UNWINDER_FRAME_RULE;
        return 0;
}

int unwinder_code_bias(AddressSpace *as, uint64_t addr, uint64_t *ret_bias)
{
        const void *cfi;

        assert(as);
        assert(ret_bias);

        return address_space_code_attachment(as, addr, &cfi_attachment, &cfi, ret_bias);
}

int unwinder_cfi_digest(AddressSpace *as, uint64_t addr, uint8_t ret[static EH_FRAME_DIGEST_SIZE],
                        uint64_t *ret_bias)
{
        const void *cfi;
        uint64_t bias;
        int r;

        assert(as);
        assert(ret);

        r = address_space_code_attachment(as, addr, &cfi_attachment, &cfi, &bias);
        if (r < 0)
                return r;
        memcpy(ret, eh_frame_digest(((const Cfi *)cfi)->eh_frame), EH_FRAME_DIGEST_SIZE);
        if (ret_bias)
                *ret_bias = bias;
        return 0;
}

struct UnwinderTableBuild {
        Cfi *cfi; /* a reference: the builder reads its EhFrame */
        UnwindTableBuilder *builder;
};

int unwinder_table_build_new(AddressSpace *as, uint64_t addr, UnwinderTableBuild **ret)
{
        UnwinderTableBuild *b;
        const void *cfi;
        uint64_t bias;
        int r;

        assert(as);
        assert(ret);

        r = address_space_code_attachment(as, addr, &cfi_attachment, &cfi, &bias);
        if (r < 0)
                return r;
        b = calloc(1, sizeof(*b));
        if (!b)
                return -ENOMEM;
        r = unwind_table_builder_new(((const Cfi *)cfi)->eh_frame, &b->builder);
        if (r < 0) {
                free(b);
                return r;
        }
        /* The cache's entry holds the data as const; the reference count is ours to move. */
        b->cfi = (Cfi *)cfi;
        b->cfi->refs++;
        *ret = b;
        return 0;
}

const uint8_t *unwinder_table_build_digest(const UnwinderTableBuild *b)
{
        assert(b);

        return eh_frame_digest(b->cfi->eh_frame);
}

int unwinder_table_build_step(UnwinderTableBuild *b, size_t max_fdes)
{
        assert(b);

        return unwind_table_builder_step(b->builder, max_fdes);
}

int unwinder_table_build_finish(UnwinderTableBuild *b, UnwindTable **ret)
{
        assert(b);

        return unwind_table_builder_finish(b->builder, ret);
}

UnwinderTableBuild *unwinder_table_build_free(UnwinderTableBuild *b)
{
        if (!b)
                return NULL;
        unwind_table_builder_free(b->builder);
        cfi_unref(b->cfi);
        free(b);
        return NULL;
}
