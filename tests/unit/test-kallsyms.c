/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <check.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "test-util.h"
#include "check-main.h"
#include "kallsyms.h"
#include "macros.h"
#include "symbolizer.h"

/* Out of order (as with modules), aliases at one address, a data symbol, a weak one, module symbols. */
static const char kallsyms_text[] =
        "ffffffff81000000 T _text\n"
        "ffffffff81000000 T _stext\n"
        "ffffffff81000100 t secondary_startup\n"
        "ffffffff81000200 D some_data\n"
        "ffffffff81000300 W weak_fn\n"
        "ffffffff81000380 T __pi___x86_indirect_thunk_rax\n"
        "ffffffff81000380 T __x86_indirect_thunk_rax\n"
        "ffffffff81000400 T _etext\n"
        "0000000000000000 A fixed_percpu_data\n"
        "ffffffffc0a01100 t bar\t[ext4]\n"
        "ffffffffc0a01000 t foo\t[ext4]\n"
        "ffffffffc0b00000 T baz\t[xfs]\n"
        "ffffffffc0c00000 b bss_thing\t[xfs]\n";

static const char restricted_text[] =
        "0000000000000000 T _stext\n"
        "0000000000000000 t secondary_startup\n"
        "0000000000000000 t foo\t[ext4]\n";

static void check_lookup(const Kallsyms *k, uint64_t addr, const char *name, const char *module,
                         uint64_t offset)
{
        const char *m = NULL, *n;
        uint64_t o = UINT64_MAX;

        n = kallsyms_lookup(k, addr, &m, &o);
        ck_assert_msg(n && strcmp(n, name) == 0, "0x%" PRIx64 ": expected %s, got %s", addr, name,
                      n ?: "(null)");
        ck_assert_str_eq(m, module);
        ck_assert_uint_eq(o, offset);
}

START_TEST(test_fixture)
{
        _cleanup_(kallsyms_freep) Kallsyms *k = NULL;
        _cleanup_free_ char *path = test_write_temp(kallsyms_text);

        ck_assert_int_eq(kallsyms_load(path, &k), 0);
        unlink(path);
        ck_assert(!kallsyms_restricted(k));
        /* Text symbols only, one per address: _stext (or _text), secondary_startup, weak_fn, the thunk, _etext,
         * foo, bar, baz. */
        ck_assert_uint_eq(kallsyms_count(k), 8);
        /* Its memory: an address and a name each at least (the kept names alone are 76 bytes with their NULs), the
         * three modules' names. */
        ck_assert_uint_ge(kallsyms_memory(k), 8 * sizeof(uint64_t) + 76 + strlen("kernelext4xfs") + 3);
        ck_assert_uint_eq(kallsyms_memory(NULL), 0);
        /* Not the kernel's "__pi_" copy of a name, although it sorts first. */
        check_lookup(k, UINT64_C(0xffffffff81000381), "__x86_indirect_thunk_rax", "kernel", 1);

        /* Of two aliases, the same one whatever the order of the file. */
        check_lookup(k, UINT64_C(0xffffffff81000000), "_stext", "kernel", 0);
        check_lookup(k, UINT64_C(0xffffffff810000ff), "_stext", "kernel", 0xff);
        check_lookup(k, UINT64_C(0xffffffff81000100), "secondary_startup", "kernel", 0);
        /* The data symbol is not a boundary. */
        check_lookup(k, UINT64_C(0xffffffff81000250), "secondary_startup", "kernel", 0x150);
        check_lookup(k, UINT64_C(0xffffffff81000301), "weak_fn", "kernel", 1);
        check_lookup(k, UINT64_C(0xffffffffc0a01000), "foo", "ext4", 0);
        check_lookup(k, UINT64_C(0xffffffffc0a010ff), "foo", "ext4", 0xff);
        check_lookup(k, UINT64_C(0xffffffffc0a01180), "bar", "ext4", 0x80);
        check_lookup(k, UINT64_C(0xffffffffc0b00010), "baz", "xfs", 0x10);

        /* Below the first symbol; and far past the last symbol of the core text or of a module, where no
         * function is that long, an address is unknown rather than _etext+32M. */
        ck_assert_ptr_null(kallsyms_lookup(k, UINT64_C(0xffffffff80ffffff), NULL, NULL));
        ck_assert_ptr_null(kallsyms_lookup(k, 0x1000, NULL, NULL));
        check_lookup(k, UINT64_C(0xffffffff81000410), "_etext", "kernel", 0x10);
        ck_assert_ptr_null(kallsyms_lookup(k, UINT64_C(0xffffffff81000400) + 32 * 1024 * 1024, NULL, NULL));
        ck_assert_ptr_null(kallsyms_lookup(k, UINT64_C(0xffffffffc0b00000) + 16 * 1024 * 1024, NULL, NULL));
        ck_assert_ptr_null(kallsyms_lookup(k, UINT64_MAX, NULL, NULL));
}
END_TEST

START_TEST(test_restricted)
{
        _cleanup_(kallsyms_freep) Kallsyms *k = NULL;
        _cleanup_free_ char *path = test_write_temp(restricted_text);

        ck_assert_int_eq(kallsyms_load(path, &k), 0);
        unlink(path);
        ck_assert(kallsyms_restricted(k));
        ck_assert_uint_eq(kallsyms_count(k), 0);
        ck_assert_ptr_null(kallsyms_lookup(k, 0, NULL, NULL));
        ck_assert_ptr_null(kallsyms_lookup(k, UINT64_C(0xffffffff81000000), NULL, NULL));
}
END_TEST

START_TEST(test_errors)
{
        Kallsyms *sentinel = (Kallsyms *)0x1, *k = sentinel;
        _cleanup_free_ char *path = test_write_temp("ffffffff81000000 T _stext\nnot a line\n");

        ck_assert_int_eq(kallsyms_load(path, &k), -EINVAL);
        unlink(path);
        ck_assert_ptr_eq(k, sentinel);
        ck_assert_int_eq(kallsyms_load("/nonexistent/kallsyms", &k), -ENOENT);
        ck_assert_ptr_eq(k, sentinel);
        ck_assert_ptr_null(kallsyms_lookup(NULL, 1, NULL, NULL));
}
END_TEST

START_TEST(test_proc_kallsyms)
{
        _cleanup_(kallsyms_freep) Kallsyms *k = NULL;
        static const char *const names[] = { "schedule", "do_syscall_64", "vfs_read" };
        size_t found = 0;
        int r;

        r = kallsyms_load("/proc/kallsyms", &k);
        if (r < 0 || kallsyms_restricted(k)) {
                /* Nothing to compare with: only the absence of names can be checked. */
                fprintf(stderr, "/proc/kallsyms unreadable or restricted, skipping the live check\n");
                if (r >= 0)
                        ck_assert_uint_eq(kallsyms_count(k), 0);
                return;
        }
        ck_assert_uint_gt(kallsyms_count(k), 1000);

        for (size_t i = 0; i < ELEMENTSOF(names); i++) {
                uint64_t addr = test_kernel_symbol(names[i]);

                if (addr == 0)
                        continue;
                found++;
                check_lookup(k, addr, names[i], "kernel", 0);
                check_lookup(k, addr + 2, names[i], "kernel", 2);
        }
        ck_assert_uint_gt(found, 0);
}
END_TEST

static void write_file(const char *path, const char *text)
{
        FILE *f = fopen(path, "we");

        ck_assert_ptr_nonnull(f);
        ck_assert_int_ge(fputs(text, f), 0);
        ck_assert_int_eq(fclose(f), 0);
}

/* Through the symbolizer, as vprofd names kernel frames: a hiding kallsyms gives [kernel] for every address. */
START_TEST(test_symbolizer_restricted)
{
        _cleanup_(symbolizer_freep) Symbolizer *s = NULL;
        _cleanup_free_ char *path = test_write_temp(restricted_text);
        Symbol sym;

        uint64_t generation;

        ck_assert_int_eq(symbolizer_new(&s), 0);
        ck_assert_int_eq(symbolizer_set_kallsyms(s, path, 0), 0);
        for (int i = 0; i < 3; i++) {
                ck_assert_int_eq(symbolizer_resolve_kernel(s, UINT64_C(0xffffffff81000100) + i, &sym), 0);
                ck_assert_str_eq(sym.module, "kernel");
                ck_assert_str_eq(sym.function, "[kernel]");
                ck_assert(sym.code);
                /* Cacheable: with kptr_restrict every kernel frame is one of these. Until the next read of
                 * kallsyms (here each miss reads it again, the interval being 0), which the generation says. */
                ck_assert(!sym.transient);
        }
        generation = symbolizer_kallsyms_generation(s);
        ck_assert_uint_ge(generation, 1);
        ck_assert_int_eq(symbolizer_resolve_kernel(s, UINT64_C(0xffffffff81000200), &sym), 0);
        ck_assert_uint_gt(symbolizer_kallsyms_generation(s), generation);
        unlink(path);
}
END_TEST

/* A module loaded after the first read: its address is unknown until kallsyms is read again, which happens
 * on a miss once the interval has passed, and not before. */
START_TEST(test_symbolizer_reread)
{
        _cleanup_(symbolizer_freep) Symbolizer *s = NULL, *slow = NULL;
        _cleanup_free_ char *path = test_write_temp("ffffffff81000000 T _stext\n"
                                                    "ffffffff81000100 t schedule\n");
        const uint64_t foo = UINT64_C(0xffffffffc0a01010);
        Symbol sym;

        ck_assert_int_eq(symbolizer_new(&s), 0);
        ck_assert_int_eq(symbolizer_new(&slow), 0);
        ck_assert_int_eq(symbolizer_set_kallsyms(s, path, 0), 0);
        ck_assert_int_eq(symbolizer_set_kallsyms(slow, path, UINT64_C(3600) * 1000000), 0);

        ck_assert_int_eq(symbolizer_resolve_kernel(s, UINT64_C(0xffffffff81000104), &sym), 0);
        ck_assert_str_eq(sym.function, "schedule");
        ck_assert_str_eq(sym.module, "kernel");
        ck_assert(!sym.transient);
        ck_assert_int_eq(symbolizer_resolve_kernel(s, foo, &sym), 0);
        ck_assert_ptr_null(sym.function);
        ck_assert(sym.transient);
        ck_assert_int_eq(symbolizer_resolve_kernel(slow, foo, &sym), 0);
        ck_assert_ptr_null(sym.function);

        write_file(path, kallsyms_text);
        ck_assert_int_eq(symbolizer_resolve_kernel(s, foo, &sym), 0);
        ck_assert_str_eq(sym.function, "foo");
        ck_assert_str_eq(sym.module, "ext4");
        ck_assert_uint_eq(sym.offset, 0x10);
        /* Rate-limited: the same miss within the interval does not read the file again. */
        ck_assert_int_eq(symbolizer_resolve_kernel(slow, foo, &sym), 0);
        ck_assert_ptr_null(sym.function);
        unlink(path);
}
END_TEST

int main(void)
{
        Suite *s = suite_create("kallsyms");
        TCase *tc = tcase_create("core");

        tcase_add_test(tc, test_fixture);
        tcase_add_test(tc, test_restricted);
        tcase_add_test(tc, test_errors);
        tcase_add_test(tc, test_proc_kallsyms);
        tcase_add_test(tc, test_symbolizer_restricted);
        tcase_add_test(tc, test_symbolizer_reread);
        suite_add_tcase(s, tc);
        return run_suite(s);
}
