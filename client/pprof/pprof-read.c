/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* pprof_read(): a pprof file (google/pprof's profile.proto, gzip-compressed or not) unpacked by protobuf-c, its
 * ids resolved and checked, its locations turned into vprofd's frames (a Line each, innermost first, the last the
 * function the address is in) and its samples into stacks, outermost first as GetStacks sends them. */
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "array-util.h"
#include "hashmap.h"
#include "pprof-gzip.h"
#include "pprof-read.h"
#include "profile.pb-c.h"

typedef Perftools__Profiles__Profile PbProfile;
typedef Perftools__Profiles__Location PbLocation;

/* What vprof itself writes stays far below: a stack's frames (vprofd walks 127 native and 128 Python frames, and
 * a location may hold a chain of inlined functions) and the lines of one location. */
#define STACK_FRAMES_MAX 4096
#define LOCATION_LINES_MAX 256
#define NS_PER_SEC 1000000000ULL
#define FREQUENCY_MAX 1000000

/* The building state: ids to indices, the frames of each location, the functions by their key. */
typedef struct Reader {
        const PbProfile *pb;
        PprofRead *out;
        size_t allocated_functions;
        Hashmap *mapping_index, *location_index, *function_index; /* pprof id -> index + 1 */
        Hashmap *by_key;                                          /* function key -> index + 1 */
        char **keys;
        size_t n_keys, allocated_keys;
        uint32_t *location_frames; /* each location's frames, innermost first, at its offset */
        size_t *location_offset, *location_count;
        size_t n_location_frames, allocated_location_frames;
        int64_t samples_type, period; /* the value read and, for a time in nanoseconds, its period */
} Reader;

static void reader_done(Reader *r)
{
        for (size_t i = 0; i < r->n_keys; i++)
                free(r->keys[i]);
        free(r->keys);
        hashmap_free(r->mapping_index);
        hashmap_free(r->location_index);
        hashmap_free(r->function_index);
        hashmap_free(r->by_key);
        free(r->location_frames);
        free(r->location_offset);
        free(r->location_count);
}

PprofRead *pprof_read_free(PprofRead *p)
{
        if (!p)
                return NULL;
        for (size_t i = 0; i < p->n_stacks; i++)
                free(p->stacks[i].frames);
        free(p->stacks);
        free(p->functions);
        if (p->message)
                perftools__profiles__profile__free_unpacked(p->message, NULL);
        free(p);
        return NULL;
}

/* String i of the table, NULL when there is none. */
static const char *string_at(const PbProfile *pb, int64_t i)
{
        return i >= 0 && (uint64_t)i < pb->n_string_table ? pb->string_table[i] : NULL;
}

static bool value_type_is(const PbProfile *pb, const Perftools__Profiles__ValueType *t, const char *type,
                          const char *unit)
{
        const char *a = t ? string_at(pb, t->type) : NULL, *b = t ? string_at(pb, t->unit) : NULL;

        return a && b && strcmp(a, type) == 0 && strcmp(b, unit) == 0;
}

/* id -> index + 1 of each element; an id 0 or twice is a broken file. */
static int index_ids(Hashmap **ret, size_t n, const void *const *items, size_t id_offset)
{
        Hashmap *h = hashmap_new(&uint64_hash_ops);

        if (!h)
                return -ENOMEM;
        *ret = h;
        for (size_t i = 0; i < n; i++) {
                uint64_t id = *(const uint64_t *)((const uint8_t *)items[i] + id_offset);
                int r;

                if (id == 0)
                        return -EBADMSG;
                r = hashmap_put(h, UINT64_TO_PTR(id), UINT64_TO_PTR(i + 1));
                if (r < 0)
                        return r == -EEXIST ? -EBADMSG : r;
        }
        return 0;
}

static size_t lookup(const Hashmap *h, uint64_t id)
{
        return (size_t)PTR_TO_UINT64(hashmap_get(h, UINT64_TO_PTR(id))); /* 0: none */
}

/* The sampling: which value counts samples, and how many nanoseconds one is worth. vprof's files and Go's have a
 * "samples"/"count" value; a profile with only a time in the period's unit counts value / period. */
static int read_sampling(Reader *r)
{
        const PbProfile *pb = r->pb;
        const Perftools__Profiles__ValueType *pt = pb->period_type;

        r->samples_type = -1;
        for (size_t i = 0; i < pb->n_sample_type; i++)
                if (value_type_is(pb, pb->sample_type[i], "samples", "count")) {
                        r->samples_type = (int64_t)i;
                        break;
                }
        if (!pt || !string_at(pb, pt->unit) || strcmp(string_at(pb, pt->unit), "nanoseconds") != 0 ||
            pb->period <= 0)
                return -EMEDIUMTYPE; /* no sampling period in time: no CPU time per second */
        if (r->samples_type < 0) {
                if (!string_at(pb, pt->type))
                        return -EMEDIUMTYPE;
                for (size_t i = 0; i < pb->n_sample_type; i++)
                        if (value_type_is(pb, pb->sample_type[i], string_at(pb, pt->type), "nanoseconds")) {
                                r->samples_type = (int64_t)i;
                                r->period = pb->period;
                                break;
                        }
                if (r->samples_type < 0)
                        return -EMEDIUMTYPE;
        }
        if ((uint64_t)pb->period > NS_PER_SEC)
                return -EMEDIUMTYPE; /* under 1 Hz */
        r->out->frequency = (uint32_t)((NS_PER_SEC + (uint64_t)pb->period / 2) / (uint64_t)pb->period);
        if (r->out->frequency == 0 || r->out->frequency > FREQUENCY_MAX)
                return -EMEDIUMTYPE;
        if (pb->time_nanos < 0 || pb->duration_nanos <= 0 || pb->time_nanos > INT64_MAX - pb->duration_nanos)
                return -EMEDIUMTYPE; /* no span: no rate */
        r->out->start_usec = (uint64_t)pb->time_nanos / 1000;
        r->out->end_usec = ((uint64_t)pb->time_nanos + (uint64_t)pb->duration_nanos) / 1000;
        return r->out->end_usec > r->out->start_usec ? 0 : -EMEDIUMTYPE;
}

/* vprofd's module name for a frame: the base name of its mapping's file as vprofd names modules, the kernel as
 * one module (pprof keeps no kernel module apart), a function without a mapping by its source file (a Python
 * function's), else "[unknown]". */
static int frame_module(const Reader *r, const PbLocation *l, const Perftools__Profiles__Function *f,
                        const char **ret, bool *ret_kernel)
{
        const char *file = NULL, *slash;

        *ret_kernel = false;
        if (l->mapping_id != 0) {
                size_t m = lookup(r->mapping_index, l->mapping_id);

                if (m == 0)
                        return -EBADMSG;
                file = string_at(r->pb, r->pb->mapping[m - 1]->filename);
                if (!file)
                        return -EBADMSG;
        }
        if (file && strncmp(file, "[kernel", 7) == 0) {
                *ret_kernel = true;
                *ret = "[kernel]";
        } else if (file && file[0] == '/' && (slash = strrchr(file, '/'))[1])
                *ret = slash + 1;
        else if (file && file[0])
                *ret = file;
        else {
                file = string_at(r->pb, f->filename);
                *ret = file && file[0] ? file : "[unknown]";
        }
        return 0;
}

/* The index of the function (module, name, inlined, kernel), added when new. */
static int intern_function(Reader *r, const PprofReadFunction *f, uint32_t *ret)
{
        PprofRead *out = r->out;
        char *key;
        void *found;
        int k;

        if (asprintf(&key, "%s\x1f%s\x1f%d%d", f->module, f->name, f->inlined, f->kernel) < 0)
                return -ENOMEM;
        found = hashmap_get(r->by_key, key);
        if (found) {
                free(key);
                *ret = (uint32_t)(PTR_TO_UINT64(found) - 1);
                return 0;
        }
        k = array_grow_one(&r->keys, &r->allocated_keys, r->n_keys, sizeof(char *));
        if (k < 0) {
                free(key);
                return k;
        }
        r->keys[r->n_keys++] = key;
        if (out->n_functions >= UINT32_MAX)
                return -EFBIG;
        k = array_grow_one(&out->functions, &r->allocated_functions, out->n_functions, sizeof(PprofReadFunction));
        if (k >= 0)
                k = hashmap_put(r->by_key, key, UINT64_TO_PTR(out->n_functions + 1));
        if (k < 0)
                return k;
        out->functions[out->n_functions] = *f;
        *ret = (uint32_t)out->n_functions++;
        return 0;
}

/* Each location's frames: a Line each, innermost first; every line but the last inlined into the one after. */
static int read_locations(Reader *r)
{
        const PbProfile *pb = r->pb;

        r->location_offset = calloc(pb->n_location + 1, sizeof(size_t));
        r->location_count = calloc(pb->n_location + 1, sizeof(size_t));
        if (!r->location_offset || !r->location_count)
                return -ENOMEM;
        for (size_t i = 0; i < pb->n_location; i++) {
                const PbLocation *l = pb->location[i];

                if (l->n_line == 0 || l->n_line > LOCATION_LINES_MAX)
                        return -EBADMSG; /* an address pprof would symbolize: vprof's files have none */
                r->location_offset[i] = r->n_location_frames;
                for (size_t j = 0; j < l->n_line; j++) {
                        size_t fi = lookup(r->function_index, l->line[j]->function_id);
                        const Perftools__Profiles__Function *f;
                        PprofReadFunction frame = { .inlined = j + 1 < l->n_line };
                        uint32_t id;
                        int k;

                        if (fi == 0)
                                return -EBADMSG;
                        f = pb->function[fi - 1];
                        frame.name = string_at(pb, f->name);
                        if (!frame.name)
                                return -EBADMSG;
                        if (!frame.name[0])
                                frame.name = string_at(pb, f->system_name) ?: "";
                        if (!frame.name[0])
                                frame.name = "[unknown]";
                        k = frame_module(r, l, f, &frame.module, &frame.kernel);
                        if (k >= 0)
                                k = intern_function(r, &frame, &id);
                        if (k >= 0)
                                k = array_grow_one(&r->location_frames, &r->allocated_location_frames,
                                                   r->n_location_frames, sizeof(uint32_t));
                        if (k < 0)
                                return k;
                        r->location_frames[r->n_location_frames++] = id;
                }
                r->location_count[i] = l->n_line;
        }
        return 0;
}

/* The sample's thread, from the labels vprof writes ("tid" and "comm"); other labels are ignored. */
static void read_thread(const PbProfile *pb, const Perftools__Profiles__Sample *s, PprofReadStack *st)
{
        for (size_t i = 0; i < s->n_label; i++) {
                const char *key = string_at(pb, s->label[i]->key);

                if (!key)
                        continue;
                if (strcmp(key, "tid") == 0 && s->label[i]->num > 0 && s->label[i]->num <= UINT32_MAX)
                        st->tid = (uint32_t)s->label[i]->num;
                else if (strcmp(key, "comm") == 0)
                        st->thread = string_at(pb, s->label[i]->str);
        }
}

static int read_sample(Reader *r, const Perftools__Profiles__Sample *s, size_t *allocated_stacks)
{
        const PbProfile *pb = r->pb;
        PprofRead *out = r->out;
        PprofReadStack st = {};
        int64_t v;
        size_t n = 0, k;
        int e;

        if (s->n_value != pb->n_sample_type)
                return -EBADMSG;
        v = s->value[r->samples_type];
        if (v < 0)
                return -EBADMSG;
        st.samples = r->period ? ((uint64_t)v + (uint64_t)r->period / 2) / (uint64_t)r->period : (uint64_t)v;
        if (st.samples == 0)
                return 0;
        if (__builtin_add_overflow(out->total_samples, st.samples, &out->total_samples))
                return -EBADMSG;
        for (size_t i = 0; i < s->n_location_id; i++) {
                size_t l = lookup(r->location_index, s->location_id[i]);

                if (l == 0)
                        return -EBADMSG;
                n += r->location_count[l - 1];
                if (n > STACK_FRAMES_MAX)
                        return -EBADMSG;
        }
        st.frames = malloc(MAX(n, (size_t)1) * sizeof(uint32_t));
        if (!st.frames)
                return -ENOMEM;
        /* The root first: the last location first, and in each its last line (the function it is in) first. */
        k = 0;
        for (size_t i = s->n_location_id; i-- > 0;) {
                size_t l = lookup(r->location_index, s->location_id[i]) - 1;

                for (size_t j = r->location_count[l]; j-- > 0;)
                        st.frames[k++] = r->location_frames[r->location_offset[l] + j];
        }
        st.n_frames = n;
        while (st.n_kernel < n && out->functions[st.frames[n - 1 - st.n_kernel]].kernel)
                st.n_kernel++;
        read_thread(pb, s, &st);
        e = array_grow_one(&out->stacks, allocated_stacks, out->n_stacks, sizeof(PprofReadStack));
        if (e < 0) {
                free(st.frames);
                return e;
        }
        out->stacks[out->n_stacks++] = st;
        return 0;
}

static int read_profile(Reader *r)
{
        const PbProfile *pb = r->pb;
        size_t allocated_stacks = 0;
        int e;

        /* The table's first string is "" (profile.proto): a file without it is no profile. */
        if (pb->n_string_table == 0 || pb->string_table[0][0] != '\0')
                return -EBADMSG;
        e = read_sampling(r);
        if (e < 0)
                return e;
        e = index_ids(&r->mapping_index, pb->n_mapping, (const void *const *)pb->mapping,
                      offsetof(Perftools__Profiles__Mapping, id));
        if (e >= 0)
                e = index_ids(&r->location_index, pb->n_location, (const void *const *)pb->location,
                              offsetof(PbLocation, id));
        if (e >= 0)
                e = index_ids(&r->function_index, pb->n_function, (const void *const *)pb->function,
                              offsetof(Perftools__Profiles__Function, id));
        if (e < 0)
                return e;
        r->by_key = hashmap_new(&string_hash_ops);
        if (!r->by_key)
                return -ENOMEM;
        e = read_locations(r);
        for (size_t i = 0; e >= 0 && i < pb->n_sample; i++)
                e = read_sample(r, pb->sample[i], &allocated_stacks);
        return e;
}

int pprof_read(const uint8_t *data, size_t size, PprofRead **ret)
{
        _cleanup_(pprof_read_freep) PprofRead *out = calloc(1, sizeof(PprofRead));
        _cleanup_free_ void *inflated = NULL;
        _cleanup_(reader_done) Reader r = { .out = out };
        size_t n;
        int e;

        if (!out)
                return -ENOMEM;
        if (size >= 2 && data[0] == 0x1f && data[1] == 0x8b) {
                e = pprof_gunzip(data, size, PPROF_READ_MAX_BYTES, &inflated, &n);
                if (e < 0)
                        return e;
                data = inflated;
                size = n;
        } else if (size > PPROF_READ_MAX_BYTES)
                return -EFBIG;
        out->message = perftools__profiles__profile__unpack(NULL, size, data);
        if (!out->message)
                return -EBADMSG;
        r.pb = out->message;
        e = read_profile(&r);
        if (e < 0)
                return e;
        *ret = TAKE_PTR(out);
        return 0;
}
