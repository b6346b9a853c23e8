/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* pprof_export(): GetProfile, its reply decoded and checked (pprof-data.h), built into a profile.proto
 * (pprof-build.c) and compressed (pprof-gzip.c). The reply is the daemon's, but read as untrusted all the same:
 * every index is checked before use, every array grows only with what the message holds. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "array-util.h"
#include "bus-names.h"
#include "bus-object.h"
#include "hashmap.h"
#include "macros.h"
#include "pprof-build.h"
#include "pprof-export.h"
#include "pprof-gzip.h"

#define METHOD "GetProfile"

static int read_mappings(sd_bus_message *m, PprofProcess *p)
{
        size_t allocated = 0;
        int r;

        r = sd_bus_message_enter_container(m, 'a', "(sssttt)");
        if (r < 0)
                return r;
        for (;;) {
                PprofMapping x;

                r = sd_bus_message_read(m, "(sssttt)", &x.module, &x.path, &x.build_id, &x.start, &x.limit,
                                        &x.file_offset);
                if (r < 0)
                        return r;
                if (r == 0)
                        break;
                r = array_grow_one(&p->mappings, &allocated, p->n_mappings, sizeof(PprofMapping));
                if (r < 0)
                        return r;
                p->mappings[p->n_mappings++] = x;
        }
        return sd_bus_message_exit_container(m);
}

static int read_functions(sd_bus_message *m, PprofProcess *p)
{
        size_t allocated = 0;
        int r;

        r = sd_bus_message_enter_container(m, 'a', "(ssst)");
        if (r < 0)
                return r;
        for (;;) {
                PprofFunction x = {};

                r = sd_bus_message_read(m, "(ssst)", &x.module, &x.name, &x.system_name, &x.address);
                if (r < 0)
                        return r;
                if (r == 0)
                        break;
                r = array_grow_one(&p->functions, &allocated, p->n_functions, sizeof(PprofFunction));
                if (r < 0)
                        return r;
                p->functions[p->n_functions++] = x;
        }
        return sd_bus_message_exit_container(m);
}

static int read_threads(sd_bus_message *m, PprofProcess *p)
{
        size_t allocated = 0;
        int r;

        r = sd_bus_message_enter_container(m, 'a', "(us)");
        if (r < 0)
                return r;
        for (;;) {
                PprofThread x;

                r = sd_bus_message_read(m, "(us)", &x.tid, &x.name);
                if (r < 0)
                        return r;
                if (r == 0)
                        break;
                r = array_grow_one(&p->threads, &allocated, p->n_threads, sizeof(PprofThread));
                if (r < 0)
                        return r;
                p->threads[p->n_threads++] = x;
        }
        return sd_bus_message_exit_container(m);
}

static int read_stack(sd_bus_message *m, const PprofProcess *p, PprofStack *ret)
{
        const void *frames;
        size_t size;
        int r;

        r = sd_bus_message_enter_container(m, 'r', "auuutt");
        if (r <= 0)
                return r;
        r = sd_bus_message_read_array(m, 'u', &frames, &size);
        if (r < 0)
                return r;
        *ret = (PprofStack){ .frames = frames, .n_frames = size / sizeof(uint32_t) };
        r = sd_bus_message_read(m, "uutt", &ret->n_kernel, &ret->tid, &ret->samples, &ret->off_ns);
        if (r < 0)
                return r;
        /* Frames index the process's functions; the kernel ones are some of them. */
        if (ret->n_kernel > ret->n_frames)
                return -EBADMSG;
        for (size_t i = 0; i < ret->n_frames; i++)
                if (ret->frames[i] >= p->n_functions)
                        return -EBADMSG;
        r = sd_bus_message_exit_container(m);
        return r < 0 ? r : 1;
}

static int read_stacks(sd_bus_message *m, PprofProcess *p)
{
        size_t allocated = 0;
        int r;

        r = sd_bus_message_enter_container(m, 'a', "(auuutt)");
        if (r < 0)
                return r;
        for (;;) {
                PprofStack x;

                r = read_stack(m, p, &x);
                if (r < 0)
                        return r;
                if (r == 0)
                        break;
                r = array_grow_one(&p->stacks, &allocated, p->n_stacks, sizeof(PprofStack));
                if (r < 0)
                        return r;
                p->stacks[p->n_stacks++] = x;
        }
        return sd_bus_message_exit_container(m);
}

/* One process; 0 at the end of the array. */
static int read_process(sd_bus_message *m, PprofProcess *p)
{
        int r;

        r = sd_bus_message_enter_container(m, 'r', "ussa(sssttt)a(ssst)a(us)a(auuutt)");
        if (r <= 0)
                return r;
        r = sd_bus_message_read(m, "uss", &p->pid, &p->comm, &p->unit);
        if (r >= 0)
                r = read_mappings(m, p);
        if (r >= 0)
                r = read_functions(m, p);
        if (r >= 0)
                r = read_threads(m, p);
        if (r >= 0)
                r = read_stacks(m, p);
        if (r >= 0)
                r = sd_bus_message_exit_container(m);
        return r < 0 ? r : 1;
}

/* Reads process i's elements, inside its array of a per-process argument; the last read's result. */
typedef int (*read_process_elements_fn)(sd_bus_message *m, PprofData *d, size_t i, void *userdata);

/* An argument after the processes with one array of element per process, in their order, absent from an older
 * vprofd (0 then): each array read by read_elements. -EBADMSG for more arrays than processes. */
static int read_per_process(sd_bus_message *m, PprofData *d, const char *element,
                            read_process_elements_fn read_elements, void *userdata)
{
        char outer[16];
        int r;

        r = sd_bus_message_peek_type(m, NULL, NULL);
        if (r <= 0)
                return r;
        snprintf(outer, sizeof(outer), "a%s", element);
        r = sd_bus_message_enter_container(m, 'a', outer);
        if (r < 0)
                return r;
        for (size_t i = 0;; i++) {
                r = sd_bus_message_enter_container(m, 'a', element);
                if (r <= 0)
                        break;
                if (i >= d->n_processes)
                        return -EBADMSG;
                r = read_elements(m, d, i, userdata);
                if (r >= 0)
                        r = sd_bus_message_exit_container(m);
                if (r < 0)
                        return r;
        }
        if (r < 0)
                return r;
        return sd_bus_message_exit_container(m);
}

/* Process i's inlined functions: their indices. */
static int read_inlined(sd_bus_message *m, PprofData *d, size_t i, void *userdata _unused_)
{
        uint32_t index;
        int r;

        while ((r = sd_bus_message_read_basic(m, 'u', &index)) > 0) {
                if (index >= d->processes[i].n_functions)
                        return -EBADMSG;
                d->processes[i].functions[index].inlined = true;
        }
        return r;
}

static int read_reply(sd_bus_message *m, PprofData *d)
{
        size_t allocated = 0;
        int off_cpu, r;

        r = sd_bus_message_read(m, "tt(tt)ub", &d->total_samples, &d->other_samples, &d->start_usec, &d->end_usec,
                                &d->frequency, &off_cpu);
        if (r < 0)
                return r;
        d->off_cpu = off_cpu;
        r = sd_bus_message_enter_container(m, 'a', "(ussa(sssttt)a(ssst)a(us)a(auuutt))");
        if (r < 0)
                return r;
        for (;;) {
                r = array_grow_one(&d->processes, &allocated, d->n_processes, sizeof(PprofProcess));
                if (r < 0)
                        return r;
                d->processes[d->n_processes] = (PprofProcess){};
                /* Counted before it is read, so that pprof_data_done() frees what a failure leaves. */
                d->n_processes++;
                r = read_process(m, &d->processes[d->n_processes - 1]);
                if (r < 0)
                        return r;
                if (r == 0) {
                        d->n_processes--;
                        break;
                }
        }
        r = sd_bus_message_exit_container(m);
        if (r < 0)
                return r;
        /* The last arguments but one, each process's inlined functions (absent from a vprofd that had none). */
        return read_per_process(m, d, "u", read_inlined, NULL);
}

/* A function's source: its file and line, from "FILE:LINE". */
typedef struct Source {
        char *file;
        int64_t line;
} Source;

static void sources_free(Hashmap **h)
{
        void *key, *value;

        if (!*h)
                return;
        for (size_t i = 0; hashmap_iterate(*h, &i, &key, &value);) {
                free(key);
                free(((Source *)value)->file);
                free(value);
        }
        hashmap_free(*h);
}

/* "MODULE\x1fFUNCTION", the key of a function's source. */
static char *source_key(const char *module, const char *function)
{
        char *key;

        return asprintf(&key, "%s\x1f%s", module, function) < 0 ? NULL : key;
}

/* source ("FILE:LINE") of (module, function) into sources, unless it has one already (a group's members name one
 * function alike: the first) or source is not FILE:LINE. -ENOMEM only. */
static int source_put(Hashmap *sources, const char *module, const char *function, const char *source)
{
        _cleanup_free_ char *key = NULL;
        const char *colon = strrchr(source, ':');
        long long line;
        Source *s;
        char *end;

        if (!colon || colon == source)
                return 0;
        errno = 0;
        line = strtoll(colon + 1, &end, 10);
        if (errno != 0 || *end != '\0' || end == colon + 1 || line < 0)
                return 0;
        key = source_key(module, function);
        if (!key)
                return -ENOMEM;
        if (hashmap_get(sources, key))
                return 0;
        s = calloc(1, sizeof(*s));
        if (s)
                s->file = strndup(source, (size_t)(colon - source));
        if (!s || !s->file || hashmap_put(sources, key, s) < 0) {
                if (s)
                        free(s->file);
                free(s);
                return -ENOMEM;
        }
        key = NULL; /* the map's now */
        s->line = line;
        return 0;
}

/* GetProfile's last argument but one, the sources the daemon knows without reading DWARF (a Python function's, from its
 * code object; a native one's that GetFunctionSources read before): for each process, (function index,
 * FILE:LINE). Process i's into sources (userdata); -EBADMSG for an index out of range. */
static int read_reply_sources(sd_bus_message *m, PprofData *d, size_t i, void *userdata)
{
        Hashmap *sources = userdata;
        const char *source;
        uint32_t index;
        int r;

        while ((r = sd_bus_message_read(m, "(us)", &index, &source)) > 0) {
                const PprofFunction *f;

                if (index >= d->processes[i].n_functions)
                        return -EBADMSG;
                f = &d->processes[i].functions[index];
                r = source_put(sources, f->module, f->name, source);
                if (r < 0)
                        return r;
        }
        return r;
}

/* GetProfile's last argument: for each process, (function index, line) of its functions that are a line of a
 * function. -EBADMSG for an index out of range. */
static int read_reply_lines(sd_bus_message *m, PprofData *d, size_t i, void *userdata _unused_)
{
        uint32_t index, line;
        int r;

        while ((r = sd_bus_message_read(m, "(uu)", &index, &line)) > 0) {
                if (index >= d->processes[i].n_functions)
                        return -EBADMSG;
                d->processes[i].functions[index].frame_line = line;
        }
        return r;
}

/* GetFunctionSources of target into sources (which reads the DWARF line tables of the functions' files). Best
 * effort: a daemon that gives none, or a source that is not FILE:LINE, leaves the functions without a file.
 * -ENOMEM only. */
static int read_sources(sd_bus *bus, const char *target, Hashmap *sources)
{
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *reply = NULL;
        const char *module, *function, *source;
        int r;

        if (sd_bus_call_method(bus, VPROF_BUS_NAME, vprof_bus_object(), VPROF_BUS_INTERFACE, "GetFunctionSources",
                               NULL, &reply, "s", target) < 0 ||
            sd_bus_message_enter_container(reply, 'a', "(sss)") < 0)
                return 0;
        while (sd_bus_message_read(reply, "(sss)", &module, &function, &source) > 0) {
                r = source_put(sources, module, function, source);
                if (r < 0)
                        return r;
        }
        return 0;
}

/* Gives each function of d whose source is known its file and line. */
static int set_sources(PprofData *d, Hashmap *sources)
{
        if (hashmap_size(sources) == 0)
                return 0;
        for (size_t i = 0; i < d->n_processes; i++)
                for (size_t j = 0; j < d->processes[i].n_functions; j++) {
                        PprofFunction *f = &d->processes[i].functions[j];
                        _cleanup_free_ char *key = source_key(f->module, f->name);
                        const Source *s;

                        if (!key)
                                return -ENOMEM;
                        s = hashmap_get(sources, key);
                        if (s) {
                                f->filename = s->file;
                                f->line = s->line;
                        }
                }
        return 0;
}

int pprof_export(sd_bus *bus, const char *target, uint64_t window_usec, bool sources, size_t max_bytes,
                 sd_bus_error *error, void **ret_data, size_t *ret_size)
{
        _cleanup_(sources_free) Hashmap *by_function = NULL;
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *reply = NULL;
        _cleanup_(pprof_data_done) PprofData d = {};
        _cleanup_free_ uint8_t *packed = NULL;
        size_t size;
        int r;

        r = sd_bus_call_method(bus, VPROF_BUS_NAME, vprof_bus_object(), VPROF_BUS_INTERFACE, METHOD, error, &reply,
                               "sut", target, UINT32_C(0), window_usec);
        if (r < 0)
                return r;
        by_function = hashmap_new(&string_hash_ops);
        if (!by_function)
                return -ENOMEM;
        r = read_reply(reply, &d);
        if (r >= 0)
                r = read_per_process(reply, &d, "(us)", read_reply_sources, by_function);
        if (r >= 0)
                r = read_per_process(reply, &d, "(uu)", read_reply_lines, NULL);
        if (r == -ENOMEM)
                return r;
        if (r < 0) {
                sd_bus_error_setf(error, VPROF_CLIENT_ERROR_BAD_REPLY, "Failed to parse the reply to %s: %s", METHOD,
                                  strerror(-r));
                return r;
        }
        if (sources) {
                r = read_sources(bus, target, by_function);
                if (r < 0)
                        return r;
        }
        r = set_sources(&d, by_function);
        if (r < 0)
                return r;
        r = pprof_build(&d, "vprof " VPROF_VERSION, &packed, &size);
        if (r < 0)
                return r;
        return pprof_gzip(packed, size, max_bytes, ret_data, ret_size);
}
