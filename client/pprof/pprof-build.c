/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* A perftools.profiles.Profile from GetProfile's data (pprof-build.h), with the code protoc-c generates from
 * profile.proto: the messages are filled here and packed by protobuf-c, no hand-written encoding. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "hashmap.h"
#include "macros.h"
#include "pprof-build.h"
#include "profile.pb-c.h"

#define NS_PER_SEC UINT64_C(1000000000)
#define NS_PER_USEC UINT64_C(1000)
#define KERNEL_MAPPING "[kernel.kallsyms]"
#define LABELS_MAX 4 /* pid, tid, comm, unit */

typedef Perftools__Profiles__Profile PbProfile;
typedef Perftools__Profiles__ValueType PbValueType;
typedef Perftools__Profiles__Sample PbSample;
typedef Perftools__Profiles__Label PbLabel;
typedef Perftools__Profiles__Mapping PbMapping;
typedef Perftools__Profiles__Location PbLocation;
typedef Perftools__Profiles__Line PbLine;
typedef Perftools__Profiles__Function PbFunction;

/* A function's key, by module and name: one Function for the same code in every process. */
typedef struct FunctionKey {
        const char *module, *name;
} FunctionKey;

static uint64_t function_key_hash(const void *p)
{
        const FunctionKey *k = p;
        return hash_bytes(k->name, strlen(k->name), hash_bytes(k->module, strlen(k->module), 0));
}

static bool function_key_equal(const void *a, const void *b)
{
        const FunctionKey *x = a, *y = b;
        return strcmp(x->module, y->module) == 0 && strcmp(x->name, y->name) == 0;
}

static const HashOps function_key_ops = { .hash = function_key_hash, .equal = function_key_equal };

/* A chain of a process's functions at one address: inlined frames, innermost first, then the function they are
 * inlined into. One Location with a Line each. */
typedef struct ChainKey {
        const uint32_t *frames; /* borrowed from the stack */
        size_t n;
} ChainKey;

static uint64_t chain_key_hash(const void *p)
{
        const ChainKey *k = p;
        return hash_bytes(k->frames, k->n * sizeof(uint32_t), k->n);
}

static bool chain_key_equal(const void *a, const void *b)
{
        const ChainKey *x = a, *y = b;
        return x->n == y->n && memcmp(x->frames, y->frames, x->n * sizeof(uint32_t)) == 0;
}

static const HashOps chain_key_ops = { .hash = chain_key_hash, .equal = chain_key_equal };

/* Everything the profile message points to, allocated in arrays sized up front and freed together. */
typedef struct Builder {
        PbProfile profile;
        Hashmap *strings; /* string -> index + 1 */
        char **string_table;
        size_t n_strings, allocated_strings;

        PbValueType types[3], period_type;
        PbValueType *type_ptrs[3];
        int64_t comment;

        PbMapping *mappings;
        PbMapping **mapping_ptrs;
        size_t n_mappings;
        uint64_t kernel_mapping_id; /* 0 until a kernel frame needs it */
        uint64_t kernel_start, kernel_limit; /* the range of the kernel functions' addresses */

        Hashmap *function_ids; /* FunctionKey* -> id */
        FunctionKey *function_keys;
        PbFunction *functions;
        PbFunction **function_ptrs;
        size_t n_functions;

        PbLocation *locations;
        PbLocation **location_ptrs;
        PbLine *lines;
        PbLine **line_ptrs;
        size_t n_locations, n_lines;

        PbSample *samples;
        PbSample **sample_ptrs;
        uint64_t *location_ids;
        int64_t *values;
        PbLabel *labels;
        PbLabel **label_ptrs;
        size_t n_samples;
} Builder;

static void builder_done(Builder *b)
{
        hashmap_free(b->strings);
        hashmap_free(b->function_ids);
        free(b->string_table);
        free(b->mappings);
        free(b->mapping_ptrs);
        free(b->function_keys);
        free(b->functions);
        free(b->function_ptrs);
        free(b->locations);
        free(b->location_ptrs);
        free(b->lines);
        free(b->line_ptrs);
        free(b->samples);
        free(b->sample_ptrs);
        free(b->location_ids);
        free(b->values);
        free(b->labels);
        free(b->label_ptrs);
}

/* The index of s in the string table, added on first use. The table points to the data's strings. */
static int intern(Builder *b, const char *s, int64_t *ret)
{
        void *found = hashmap_get(b->strings, s);
        int r;

        if (found) {
                *ret = (int64_t)PTR_TO_UINT64(found) - 1;
                return 0;
        }
        if (b->n_strings == b->allocated_strings) {
                size_t allocated = MAX(b->allocated_strings * 2, (size_t)256);
                char **table = reallocarray(b->string_table, allocated, sizeof(char *));
                if (!table)
                        return -ENOMEM;
                b->string_table = table;
                b->allocated_strings = allocated;
        }
        r = hashmap_put(b->strings, s, UINT64_TO_PTR(b->n_strings + 1));
        if (r < 0)
                return r;
        /* protobuf-c takes char *, and only reads it to pack. */
        b->string_table[b->n_strings] = (char *)s;
        *ret = (int64_t)b->n_strings++;
        return 0;
}

static int value_type(Builder *b, PbValueType *t, const char *type, const char *unit)
{
        int r;

        perftools__profiles__value_type__init(t);
        r = intern(b, type, &t->type);
        if (r < 0)
                return r;
        return intern(b, unit, &t->unit);
}

/* Room for every message the data can make, so that the pointers into the arrays stay valid. */
static int reserve(Builder *b, const PprofData *d)
{
        size_t mappings = 1, functions = 0, stacks = 0, frames = 0, n_types = d->off_cpu ? 3 : 2;

        for (size_t i = 0; i < d->n_processes; i++) {
                const PprofProcess *p = &d->processes[i];

                mappings += p->n_mappings;
                functions += p->n_functions;
                stacks += p->n_stacks;
                for (size_t j = 0; j < p->n_stacks; j++) {
                        const PprofStack *st = &p->stacks[j];

                        frames += st->n_frames;
                        for (size_t k = 0; k < st->n_kernel && k < st->n_frames; k++) {
                                uint64_t a = st->frames[k] < p->n_functions ? p->functions[st->frames[k]].address
                                                                            : 0;
                                if (a == 0)
                                        continue;
                                b->kernel_start = b->kernel_limit ? MIN(b->kernel_start, a) : a;
                                b->kernel_limit = MAX(b->kernel_limit, a + 1);
                        }
                }
        }
        b->mappings = calloc(mappings, sizeof(PbMapping));
        b->mapping_ptrs = calloc(mappings, sizeof(PbMapping *));
        b->function_keys = calloc(MAX(functions, (size_t)1), sizeof(FunctionKey));
        b->functions = calloc(MAX(functions, (size_t)1), sizeof(PbFunction));
        b->function_ptrs = calloc(MAX(functions, (size_t)1), sizeof(PbFunction *));
        /* A location per function of a process at most, and one per chain of inlined frames (at most one per
         * frame), with a line per function of the chain. */
        b->locations = calloc(MAX(functions + frames, (size_t)1), sizeof(PbLocation));
        b->location_ptrs = calloc(MAX(functions + frames, (size_t)1), sizeof(PbLocation *));
        b->lines = calloc(MAX(functions + frames, (size_t)1), sizeof(PbLine));
        b->line_ptrs = calloc(MAX(functions + frames, (size_t)1), sizeof(PbLine *));
        b->samples = calloc(MAX(stacks, (size_t)1), sizeof(PbSample));
        b->sample_ptrs = calloc(MAX(stacks, (size_t)1), sizeof(PbSample *));
        b->location_ids = calloc(MAX(frames, (size_t)1), sizeof(uint64_t));
        b->values = calloc(MAX(stacks, (size_t)1) * n_types, sizeof(int64_t));
        b->labels = calloc(MAX(stacks, (size_t)1) * LABELS_MAX, sizeof(PbLabel));
        b->label_ptrs = calloc(MAX(stacks, (size_t)1) * LABELS_MAX, sizeof(PbLabel *));
        b->strings = hashmap_new(&string_hash_ops);
        b->function_ids = hashmap_new(&function_key_ops);
        if (!b->mappings || !b->mapping_ptrs || !b->function_keys || !b->functions || !b->function_ptrs ||
            !b->locations || !b->location_ptrs || !b->lines || !b->line_ptrs || !b->samples || !b->sample_ptrs ||
            !b->location_ids || !b->values || !b->labels || !b->label_ptrs || !b->strings || !b->function_ids)
                return -ENOMEM;
        return 0;
}

static int add_mapping(Builder *b, uint64_t start, uint64_t limit, uint64_t file_offset, const char *filename,
                       const char *build_id, uint64_t *ret_id)
{
        PbMapping *m = &b->mappings[b->n_mappings];
        int r;

        perftools__profiles__mapping__init(m);
        m->id = b->n_mappings + 1;
        m->memory_start = start;
        m->memory_limit = limit;
        m->file_offset = file_offset;
        r = intern(b, filename, &m->filename);
        if (r >= 0)
                r = intern(b, build_id, &m->build_id);
        if (r < 0)
                return r;
        /* vprofd named every frame: pprof must not try to symbolize the addresses again. */
        m->has_functions = true;
        b->mapping_ptrs[b->n_mappings++] = m;
        *ret_id = m->id;
        return 0;
}

/* The Function of (module, name), one for every process. */
static int function_id(Builder *b, const PprofFunction *f, uint64_t *ret)
{
        FunctionKey lookup = { .module = f->module, .name = f->name }, *key;
        PbFunction *fn;
        void *found;
        int r;

        /* Looked up with a key of its own: when every function is made, the arrays have no room for another. */
        found = hashmap_get(b->function_ids, &lookup);
        if (found) {
                *ret = PTR_TO_UINT64(found);
                return 0;
        }
        key = &b->function_keys[b->n_functions];
        *key = lookup;
        fn = &b->functions[b->n_functions];
        perftools__profiles__function__init(fn);
        fn->id = b->n_functions + 1;
        r = intern(b, f->name, &fn->name);
        if (r >= 0)
                r = intern(b, f->system_name[0] ? f->system_name : f->name, &fn->system_name);
        /* Where it is written, for go tool pprof -list and -lines: its start (a Python frame's Line has its own). */
        if (r >= 0 && f->filename) {
                r = intern(b, f->filename, &fn->filename);
                fn->start_line = f->line;
        }
        if (r >= 0)
                r = hashmap_put(b->function_ids, key, UINT64_TO_PTR(fn->id));
        if (r < 0)
                return r;
        b->function_ptrs[b->n_functions++] = fn;
        *ret = fn->id;
        return 0;
}

/* The per-process state: the mapping of each of its modules and the location of each of its functions. */
typedef struct ProcessIds {
        uint64_t *mapping_ids; /* by the process's mapping index */
        uint64_t *location_ids; /* by function index; 0: none yet */
        Hashmap *chain_ids;     /* ChainKey* -> location id, for addresses in inlined code */
        ChainKey *chain_keys;   /* the keys, at most one per frame of the process's stacks */
        size_t n_chain_keys;
} ProcessIds;

static uint64_t user_mapping(const PprofProcess *p, const ProcessIds *ids, const PprofFunction *f)
{
        uint64_t by_module = 0;

        for (size_t i = 0; i < p->n_mappings; i++) {
                const PprofMapping *m = &p->mappings[i];

                if (strcmp(m->module, f->module) != 0)
                        continue;
                if (f->address >= m->start && f->address < m->limit)
                        return ids->mapping_ids[i];
                if (!by_module)
                        by_module = ids->mapping_ids[i];
        }
        return by_module; /* 0: none, for code that is in no file ([unknown], [other], JIT code) */
}

/* The location of frames[0..n): one function, or a chain of inlined ones (innermost first) and the function they
 * are inlined into, whose address and mapping the location has: a Line each, in that order, as pprof wants them. */
static int location_id(Builder *b, const PprofProcess *p, ProcessIds *ids, const uint32_t *frames, size_t n,
                       bool kernel, uint64_t *ret)
{
        const PprofFunction *f = &p->functions[frames[n - 1]];
        ChainKey *key = NULL;
        PbLocation *l;
        void *found;
        int r;

        if (n == 1 && ids->location_ids[frames[0]]) {
                *ret = ids->location_ids[frames[0]];
                return 0;
        }
        if (n > 1) {
                key = &ids->chain_keys[ids->n_chain_keys];
                *key = (ChainKey){ .frames = frames, .n = n };
                found = hashmap_get(ids->chain_ids, key);
                if (found) {
                        *ret = PTR_TO_UINT64(found);
                        return 0;
                }
        }
        l = &b->locations[b->n_locations];
        perftools__profiles__location__init(l);
        l->line = &b->line_ptrs[b->n_lines];
        for (size_t i = 0; i < n; i++) {
                PbLine *line = &b->lines[b->n_lines];

                perftools__profiles__line__init(line);
                r = function_id(b, &p->functions[frames[i]], &line->function_id);
                if (r < 0)
                        return r;
                /* The frame's own line where it has one (a Python frame's), else the function's start. */
                line->line = p->functions[frames[i]].frame_line  ? p->functions[frames[i]].frame_line
                             : p->functions[frames[i]].filename ? p->functions[frames[i]].line
                                                                : 0;
                b->line_ptrs[b->n_lines++] = line;
                l->n_line++;
        }
        if (kernel && !b->kernel_mapping_id) {
                /* The kernel's code is one mapping for every process, its addresses absolute: it spans the
                 * functions the samples name. */
                r = add_mapping(b, b->kernel_start, b->kernel_limit, 0, KERNEL_MAPPING, "", &b->kernel_mapping_id);
                if (r < 0)
                        return r;
        }
        l->id = b->n_locations + 1;
        l->mapping_id = kernel ? b->kernel_mapping_id : user_mapping(p, ids, f);
        l->address = f->address;
        b->location_ptrs[b->n_locations++] = l;
        if (key) {
                r = hashmap_put(ids->chain_ids, key, UINT64_TO_PTR(l->id));
                if (r < 0)
                        return r;
                ids->n_chain_keys++;
        } else
                ids->location_ids[frames[0]] = l->id;
        *ret = l->id;
        return 0;
}

static PbLabel *add_label(PbSample *s, PbLabel *label)
{
        perftools__profiles__label__init(label);
        s->label[s->n_label++] = label;
        return label;
}

static const char *thread_name(const PprofProcess *p, uint32_t tid)
{
        if (tid == 0)
                return p->comm;
        for (size_t i = 0; i < p->n_threads; i++)
                if (p->threads[i].tid == tid && p->threads[i].name[0])
                        return p->threads[i].name;
        return p->comm;
}

typedef struct Keys {
        int64_t pid, tid, comm, unit;
        size_t n_types;
        uint64_t period;
} Keys;

static int add_sample(Builder *b, const Keys *k, const PprofProcess *p, ProcessIds *ids, const PprofStack *st,
                      uint64_t **next_location_id)
{
        PbSample *s = &b->samples[b->n_samples];
        PbLabel *label;
        int r;

        perftools__profiles__sample__init(s);
        s->location_id = *next_location_id;
        for (size_t i = 0; i < st->n_frames; i++)
                if (st->frames[i] >= p->n_functions)
                        return -EINVAL;
        /* Leaf first, as the frames are; the user frames inlined into the next one share its location. */
        for (size_t i = 0, j; i < st->n_frames; i = j + 1) {
                for (j = i; j >= st->n_kernel && j + 1 < st->n_frames && p->functions[st->frames[j]].inlined; j++)
                        ;
                r = location_id(b, p, ids, st->frames + i, j - i + 1, i < st->n_kernel,
                                &s->location_id[s->n_location_id++]);
                if (r < 0)
                        return r;
        }
        *next_location_id += s->n_location_id;

        s->value = &b->values[b->n_samples * k->n_types];
        s->n_value = k->n_types;
        s->value[0] = (int64_t)st->samples;
        s->value[1] = (int64_t)(st->samples * k->period);
        if (k->n_types > 2)
                s->value[2] = (int64_t)st->off_ns;

        s->label = &b->label_ptrs[b->n_samples * LABELS_MAX];
        label = add_label(s, &b->labels[b->n_samples * LABELS_MAX]);
        label->key = k->pid;
        label->num = p->pid;
        if (st->tid) {
                label = add_label(s, &b->labels[b->n_samples * LABELS_MAX + s->n_label]);
                label->key = k->tid;
                label->num = st->tid;
        }
        label = add_label(s, &b->labels[b->n_samples * LABELS_MAX + s->n_label]);
        label->key = k->comm;
        r = intern(b, thread_name(p, st->tid), &label->str);
        if (r < 0)
                return r;
        if (p->unit[0]) {
                label = add_label(s, &b->labels[b->n_samples * LABELS_MAX + s->n_label]);
                label->key = k->unit;
                r = intern(b, p->unit, &label->str);
                if (r < 0)
                        return r;
        }
        b->sample_ptrs[b->n_samples++] = s;
        return 0;
}

static int add_process(Builder *b, const Keys *k, const PprofProcess *p, uint64_t **next_location_id)
{
        _cleanup_free_ uint64_t *mapping_ids = calloc(MAX(p->n_mappings, (size_t)1), sizeof(uint64_t));
        _cleanup_free_ uint64_t *location_ids = calloc(MAX(p->n_functions, (size_t)1), sizeof(uint64_t));
        _cleanup_(hashmap_freep) Hashmap *chain_ids = hashmap_new(&chain_key_ops);
        _cleanup_free_ ChainKey *chain_keys = NULL;
        ProcessIds ids = { .mapping_ids = mapping_ids, .location_ids = location_ids, .chain_ids = chain_ids };
        size_t frames = 0;
        int r;

        for (size_t i = 0; i < p->n_stacks; i++)
                frames += p->stacks[i].n_frames;
        ids.chain_keys = chain_keys = calloc(MAX(frames, (size_t)1), sizeof(ChainKey));
        if (!mapping_ids || !location_ids || !chain_ids || !chain_keys)
                return -ENOMEM;
        for (size_t i = 0; i < p->n_mappings; i++) {
                const PprofMapping *m = &p->mappings[i];

                r = add_mapping(b, m->start, m->limit, m->file_offset, m->path, m->build_id, &mapping_ids[i]);
                if (r < 0)
                        return r;
        }
        for (size_t i = 0; i < p->n_stacks; i++) {
                r = add_sample(b, k, p, &ids, &p->stacks[i], next_location_id);
                if (r < 0)
                        return r;
        }
        return 0;
}

static int fill(Builder *b, const PprofData *d, const char *comment)
{
        PbProfile *pr = &b->profile;
        uint64_t *next_location_id = b->location_ids;
        Keys k = { .n_types = d->off_cpu ? 3 : 2 };
        int64_t empty;
        int r;

        perftools__profiles__profile__init(pr);
        r = intern(b, "", &empty); /* string_table[0] */
        if (r < 0)
                return r;
        r = value_type(b, &b->types[0], "samples", "count");
        if (r >= 0)
                r = value_type(b, &b->types[1], "cpu", "nanoseconds");
        if (r >= 0 && d->off_cpu)
                r = value_type(b, &b->types[2], "off-cpu", "nanoseconds");
        if (r >= 0)
                r = value_type(b, &b->period_type, "cpu", "nanoseconds");
        if (r >= 0)
                r = intern(b, "pid", &k.pid);
        if (r >= 0)
                r = intern(b, "tid", &k.tid);
        if (r >= 0)
                r = intern(b, "comm", &k.comm);
        if (r >= 0)
                r = intern(b, "unit", &k.unit);
        if (r >= 0 && comment)
                r = intern(b, comment, &b->comment);
        if (r < 0)
                return r;
        for (size_t i = 0; i < k.n_types; i++)
                b->type_ptrs[i] = &b->types[i];
        pr->sample_type = b->type_ptrs;
        pr->n_sample_type = k.n_types;
        pr->period_type = &b->period_type;
        /* Rounded down to whole nanoseconds: 10101010 ns at 99 Hz. */
        k.period = d->frequency ? NS_PER_SEC / d->frequency : 0;
        pr->period = (int64_t)k.period;
        pr->time_nanos = (int64_t)(d->start_usec * NS_PER_USEC);
        pr->duration_nanos = (int64_t)((d->end_usec - MIN(d->end_usec, d->start_usec)) * NS_PER_USEC);
        pr->default_sample_type = b->types[1].type;
        if (comment) {
                pr->comment = &b->comment;
                pr->n_comment = 1;
        }

        for (size_t i = 0; i < d->n_processes; i++) {
                r = add_process(b, &k, &d->processes[i], &next_location_id);
                if (r < 0)
                        return r;
        }
        pr->mapping = b->mapping_ptrs;
        pr->n_mapping = b->n_mappings;
        pr->function = b->function_ptrs;
        pr->n_function = b->n_functions;
        pr->location = b->location_ptrs;
        pr->n_location = b->n_locations;
        pr->sample = b->sample_ptrs;
        pr->n_sample = b->n_samples;
        pr->string_table = b->string_table;
        pr->n_string_table = b->n_strings;
        return 0;
}

int pprof_build(const PprofData *d, const char *comment, uint8_t **ret_data, size_t *ret_size)
{
        _cleanup_(builder_done) Builder b = {};
        uint8_t *data;
        size_t size;
        int r;

        r = reserve(&b, d);
        if (r >= 0)
                r = fill(&b, d, comment);
        if (r < 0)
                return r;
        size = perftools__profiles__profile__get_packed_size(&b.profile);
        data = malloc(MAX(size, (size_t)1));
        if (!data)
                return -ENOMEM;
        if (perftools__profiles__profile__pack(&b.profile, data) != size) {
                free(data);
                return -EIO;
        }
        *ret_data = data;
        *ret_size = size;
        return 0;
}

void pprof_data_done(PprofData *d)
{
        if (!d)
                return;
        for (size_t i = 0; d->processes && i < d->n_processes; i++) {
                free(d->processes[i].mappings);
                free(d->processes[i].functions);
                free(d->processes[i].threads);
                free(d->processes[i].stacks);
        }
        free(d->processes);
        *d = (PprofData){};
}
