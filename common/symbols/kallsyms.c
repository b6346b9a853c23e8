/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <assert.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "array-util.h"
#include "kallsyms.h"

/* kallsyms lists starts only. A symbol is taken to end where the next one starts, but never more than this
 * far from its own start: the largest kernel functions are tens of KiB, while the last symbol of the core
 * text (_etext), of the init text or of a module is followed by data or by a gap of megabytes up to the
 * next module, where an address is better left unknown than blamed on that last symbol. */
#define KALLSYMS_MAX_SPAN (UINT64_C(256) * 1024)

/* 16 bytes a symbol: a kernel has more than 100000 text symbols. */
typedef struct KSym {
        uint64_t addr;
        uint32_t name;   /* offset into names */
        uint32_t module; /* index into modules; 0 is the core image */
} KSym;

struct Kallsyms {
        KSym *syms;
        size_t n_syms;
        char *names;
        char **modules;
        size_t n_modules;
        size_t memory; /* bytes asked of malloc(), once loaded */
        bool restricted;
};

static bool is_text_type(char t)
{
        return t == 't' || t == 'T' || t == 'w' || t == 'W';
}

static size_t leading_underscores(const char *s)
{
        size_t n = 0;

        while (s[n] == '_')
                n++;
        return n;
}

/* The kernel's position-independent copies ("__pi_" + the name, Linux 6.x) are aliases of the real name. */
static bool pi_alias(const char *s)
{
        return strncmp(s, "__pi_", 5) == 0;
}

/* By address; at one address the name to keep first: "schedule" rather than "__schedule_alias", so no "__pi_"
 * copy, then by number of leading underscores, then by name so that the choice never depends on the order of
 * the file. */
static int ksym_compare(const void *a, const void *b, void *userdata)
{
        const KSym *x = a, *y = b;
        const char *names = userdata, *nx = names + x->name, *ny = names + y->name;
        size_t ux, uy;

        if (x->addr != y->addr)
                return x->addr < y->addr ? -1 : 1;
        if (pi_alias(nx) != pi_alias(ny))
                return pi_alias(nx) ? 1 : -1;
        ux = leading_underscores(nx);
        uy = leading_underscores(ny);
        if (ux != uy)
                return ux < uy ? -1 : 1;
        return strcmp(nx, ny);
}

static int intern_module(Kallsyms *k, const char *name, size_t len, uint32_t *ret)
{
        char **m, *copy;

        /* A module's symbols come in one run, so the last one looked up is almost always the answer. */
        for (size_t i = k->n_modules; i > 0; i--)
                if (strlen(k->modules[i - 1]) == len && memcmp(k->modules[i - 1], name, len) == 0) {
                        *ret = (uint32_t)(i - 1);
                        return 0;
                }

        copy = strndup(name, len);
        if (!copy)
                return -ENOMEM;
        m = realloc(k->modules, (k->n_modules + 1) * sizeof(char *));
        if (!m) {
                free(copy);
                return -ENOMEM;
        }
        k->modules = m;
        k->modules[k->n_modules] = copy;
        *ret = (uint32_t)k->n_modules++;
        return 0;
}

/* "ffffffff81000000 T _stext" or "ffffffffc0a01000 t foo\t[ext4]": 1 for a text symbol, 0 for another one
 * (its address still told in *ret_addr), -EINVAL for a malformed line. */
static int parse_line(char *line, uint64_t *ret_addr, char **ret_name, char **ret_module,
                      size_t *ret_module_len)
{
        unsigned long long addr;
        char *p, *end, *module = NULL, type;
        size_t module_len = 0;

        if (!((*line >= '0' && *line <= '9') || (*line >= 'a' && *line <= 'f') ||
              (*line >= 'A' && *line <= 'F')))
                return -EINVAL;
        errno = 0;
        addr = strtoull(line, &end, 16);
        if (errno != 0 || end[0] != ' ' || end[1] == '\0' || end[2] != ' ')
                return -EINVAL;
        type = end[1];
        p = end + 3;
        *ret_addr = addr;
        if (!is_text_type(type))
                return 0;

        end = p + strcspn(p, "\t\n");
        if (end == p)
                return -EINVAL;
        if (*end == '\t' && end[1] == '[') {
                module = end + 2;
                module_len = strcspn(module, "]\n");
                if (module[module_len] != ']')
                        return -EINVAL;
        }
        *end = '\0';

        *ret_name = p;
        *ret_module = module;
        *ret_module_len = module_len;
        return 1;
}

int kallsyms_load(const char *path, Kallsyms **ret)
{
        _cleanup_(kallsyms_freep) Kallsyms *k = NULL;
        _cleanup_fclose_ FILE *f = NULL;
        _cleanup_free_ char *line = NULL;
        size_t line_size = 0, allocated = 0, names_used = 0, names_allocated = 0, n_lines = 0, kept = 0;
        bool all_zero = true;
        uint32_t core;
        int r;

        assert(path);
        assert(ret);

        k = calloc(1, sizeof(*k));
        if (!k)
                return -ENOMEM;
        r = intern_module(k, "kernel", strlen("kernel"), &core);
        if (r < 0)
                return r;

        f = fopen(path, "re");
        if (!f)
                return negative_errno();

        for (;;) {
                char *name, *module;
                size_t module_len, name_len;
                uint64_t addr;
                uint32_t m = core;
                ssize_t len;

                len = getline(&line, &line_size, f);
                if (len < 0) {
                        if (ferror(f))
                                return negative_errno();
                        break;
                }
                if (len == 0 || line[0] == '\n')
                        continue;

                r = parse_line(line, &addr, &name, &module, &module_len);
                if (r < 0)
                        return r;
                n_lines++;
                if (addr != 0)
                        all_zero = false;
                if (r == 0 || addr == 0)
                        continue;

                if (module) {
                        r = intern_module(k, module, module_len, &m);
                        if (r < 0)
                                return r;
                }

                name_len = strlen(name);
                if (names_used + name_len + 1 > names_allocated) {
                        size_t a = MAX(names_allocated * 2, names_used + name_len + 1 + 65536);
                        char *nn;

                        if (a > UINT32_MAX)
                                return -E2BIG;
                        nn = realloc(k->names, a);
                        if (!nn)
                                return -ENOMEM;
                        k->names = nn;
                        names_allocated = a;
                }
                if (k->n_syms == allocated) {
                        size_t a = MAX(allocated * 2, (size_t)4096);
                        KSym *ns = realloc(k->syms, a * sizeof(KSym));
                        if (!ns)
                                return -ENOMEM;
                        k->syms = ns;
                        allocated = a;
                }
                memcpy(k->names + names_used, name, name_len + 1);
                k->syms[k->n_syms++] = (KSym) { .addr = addr, .name = (uint32_t)names_used, .module = m };
                names_used += name_len + 1;
        }

        /* With kptr_restrict every address reads 0 and no lookup could succeed. */
        k->restricted = n_lines > 0 && all_zero;

        if (k->n_syms > 0) {
                qsort_r(k->syms, k->n_syms, sizeof(KSym), ksym_compare, k->names);
                /* Aliases at one address: the sort put the one to keep first. */
                for (size_t i = 0; i < k->n_syms; i++)
                        if (kept == 0 || k->syms[i].addr != k->syms[kept - 1].addr)
                                k->syms[kept++] = k->syms[i];
                k->n_syms = kept;
        }
        /* The arrays grew by doubling; the table lives as long as the daemon. Shrinking cannot fail in a way
         * that matters: the old block stays valid. */
        if (k->n_syms > 0) {
                KSym *ns = realloc(k->syms, k->n_syms * sizeof(KSym));
                char *nn = realloc(k->names, names_used);

                if (ns)
                        k->syms = ns;
                if (nn)
                        k->names = nn;
        }
        k->memory = sizeof(*k) + k->n_syms * sizeof(KSym) + names_used + k->n_modules * sizeof(char *);
        for (size_t i = 0; i < k->n_modules; i++)
                k->memory += k->modules[i] ? strlen(k->modules[i]) + 1 : 0;

        *ret = TAKE_PTR(k);
        return 0;
}

const char *kallsyms_lookup(const Kallsyms *k, uint64_t addr, const char **ret_module, uint64_t *ret_offset)
{
        size_t lo;
        const KSym *s;

        if (!k)
                return NULL;
        lo = ARRAY_UPPER_BOUND(k->syms, k->n_syms, addr, addr);
        if (lo == 0)
                return NULL;
        s = &k->syms[lo - 1];
        /* The search makes addr lie below the next symbol; the span limit is the other bound. */
        if (addr - s->addr >= KALLSYMS_MAX_SPAN)
                return NULL;

        if (ret_module)
                *ret_module = k->modules[s->module];
        if (ret_offset)
                *ret_offset = addr - s->addr;
        return k->names + s->name;
}

bool kallsyms_restricted(const Kallsyms *k)
{
        return k && k->restricted;
}

size_t kallsyms_count(const Kallsyms *k)
{
        return k ? k->n_syms : 0;
}

size_t kallsyms_memory(const Kallsyms *k)
{
        return k ? k->memory : 0;
}

Kallsyms *kallsyms_free(Kallsyms *k)
{
        if (!k)
                return NULL;
        for (size_t i = 0; i < k->n_modules; i++)
                free(k->modules[i]);
        free(k->modules);
        free(k->syms);
        free(k->names);
        free(k);
        return NULL;
}
