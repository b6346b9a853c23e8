/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <stdlib.h>
#include <string.h>

#include "fuzz-tally.h"
#include "macros.h"

static const char *short_name(const char *name)
{
        static const char *const prefixes[] = { "org.vprof.Profiler1.Error.", "org.freedesktop.DBus.Error." };

        if (!name)
                return "ok";
        for (size_t i = 0; i < ELEMENTSOF(prefixes); i++)
                if (strncmp(name, prefixes[i], strlen(prefixes[i])) == 0)
                        return name + strlen(prefixes[i]);
        return name;
}

void tally_add(Tally *t, const char *error_name)
{
        const char *name = short_name(error_name);

        for (unsigned i = 0; i < t->n; i++)
                if (strcmp(t->names[i], name) == 0) {
                        t->counts[i]++;
                        return;
                }
        if (t->n == TALLY_MAX || !(t->names[t->n] = strdup(name))) {
                t->other++;
                return;
        }
        t->counts[t->n++] = 1;
}

void tally_print(Tally *t, FILE *f)
{
        /* Insertion sort, by count then name: a few dozen kinds at most. */
        for (unsigned i = 1; i < t->n; i++)
                for (unsigned j = i; j > 0 && (t->counts[j] > t->counts[j - 1] ||
                                              (t->counts[j] == t->counts[j - 1] &&
                                               strcmp(t->names[j], t->names[j - 1]) < 0));
                     j--) {
                        char *name = t->names[j];
                        unsigned count = t->counts[j];

                        t->names[j] = t->names[j - 1];
                        t->counts[j] = t->counts[j - 1];
                        t->names[j - 1] = name;
                        t->counts[j - 1] = count;
                }
        for (unsigned i = 0; i < t->n; i++)
                fprintf(f, "%s%s %u", i > 0 ? ", " : "", t->names[i], t->counts[i]);
        if (t->other > 0)
                fprintf(f, "%sother %u", t->n > 0 ? ", " : "", t->other);
}

void tally_done(Tally *t)
{
        for (unsigned i = 0; i < t->n; i++)
                free(t->names[i]);
        *t = (Tally){};
}
