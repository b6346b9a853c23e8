/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <check.h>
#include <elf.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check-main.h"
#include "macros.h"
#include "vdso-symbols.h"

/* Our own [vdso] mapping, from /proc/self/maps; false when there is none. */
static bool find_vdso(uint64_t *start, uint64_t *end)
{
        _cleanup_fclose_ FILE *f = fopen("/proc/self/maps", "re");
        char line[512];

        ck_assert_ptr_nonnull(f);
        while (fgets(line, sizeof(line), f))
                if (strstr(line, "[vdso]") && sscanf(line, "%" SCNx64 "-%" SCNx64, start, end) == 2)
                        return true;
        return false;
}

START_TEST(test_own_vdso)
{
        _cleanup_(vdso_symbols_freep) VdsoSymbols *v = NULL;
        uint64_t start, end, off;
        bool clock_gettime_found = false;
        const char *prev = NULL;

        if (!find_vdso(&start, &end)) {
                fprintf(stderr, "no vDSO here, skipping\n");
                return;
        }
        /* Through /proc/PID/mem, as vprofd reads a target's. */
        ck_assert_int_eq(vdso_symbols_read(getpid(), start, end, &v), 0);
        ck_assert_uint_gt(vdso_symbols_count(v), 0);
        for (uint64_t o = 0; o < end - start; o++) {
                const char *name = vdso_symbols_lookup(v, o, &off);

                if (!name)
                        continue;
                /* Of the aliases, the plain name: clock_gettime rather than __vdso_clock_gettime. */
                if (strcmp(name, "clock_gettime") == 0)
                        clock_gettime_found = true;
                if (name != prev)
                        ck_assert_uint_eq(off, 0);
                prev = name;
        }
        ck_assert(clock_gettime_found);
        /* The image itself, parsed in place, gives the same table. */
        {
                _cleanup_(vdso_symbols_freep) VdsoSymbols *w = NULL;

                ck_assert_int_eq(vdso_symbols_parse((const void *)(uintptr_t)start, end - start, &w), 0);
                ck_assert_uint_eq(vdso_symbols_count(w), vdso_symbols_count(v));
        }
}
END_TEST

START_TEST(test_errors)
{
        static const char junk[64] = "not an ELF image";
        VdsoSymbols *sentinel = (VdsoSymbols *)0x1, *v = sentinel;

        ck_assert_int_eq(vdso_symbols_parse(junk, sizeof(junk), &v), -ENOEXEC);
        ck_assert_int_eq(vdso_symbols_parse(NULL, 0, &v), -EINVAL);
        ck_assert_int_eq(vdso_symbols_read(getpid(), 0x2000, 0x1000, &v), -EINVAL);
        ck_assert_int_eq(vdso_symbols_read(getpid(), 0, UINT64_C(1) << 30, &v), -EINVAL);
        ck_assert_ptr_eq(v, sentinel);
        ck_assert_ptr_null(vdso_symbols_lookup(NULL, 0, NULL));
}
END_TEST

/* A vDSO rewritten by its process so that its string table claims to be compressed: refused, rather than
 * inflated by libelf to whatever size its header claims. */
START_TEST(test_compressed_strings_refused)
{
        _cleanup_(vdso_symbols_freep) VdsoSymbols *v = NULL;
        _cleanup_free_ uint8_t *image = NULL;
        uint64_t start, end;
        Elf64_Ehdr ehdr;
        bool patched = false;

        if (!find_vdso(&start, &end)) {
                fprintf(stderr, "no vDSO here, skipping\n");
                return;
        }
        image = malloc(end - start);
        ck_assert_ptr_nonnull(image);
        memcpy(image, (const void *)(uintptr_t)start, end - start);
        memcpy(&ehdr, image, sizeof(ehdr));
        for (unsigned i = 0; i < ehdr.e_shnum; i++) {
                Elf64_Shdr *sh = (Elf64_Shdr *)(image + ehdr.e_shoff) + i;

                if (sh->sh_type == SHT_DYNSYM) {
                        ((Elf64_Shdr *)(image + ehdr.e_shoff))[sh->sh_link].sh_flags |= SHF_COMPRESSED;
                        patched = true;
                }
        }
        ck_assert(patched);
        ck_assert_int_eq(vdso_symbols_parse(image, end - start, &v), -ENOEXEC);
        ck_assert_ptr_null(v);
}
END_TEST

int main(void)
{
        Suite *s = suite_create("vdso-symbols");
        TCase *tc = tcase_create("core");

        tcase_add_test(tc, test_own_vdso);
        tcase_add_test(tc, test_errors);
        tcase_add_test(tc, test_compressed_strings_refused);
        suite_add_tcase(s, tc);
        return run_suite(s);
}
