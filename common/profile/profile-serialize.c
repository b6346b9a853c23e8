/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <assert.h>
#include <errno.h>
#include <string.h>

#include "file-util.h"
#include "profile-internal.h"
#include "profile-serialize.h"
#include "utf8.h"

#define TAG_HEADER SECTION_TAG('P', 'H', 'D', 'R')
#define TAG_MODULES SECTION_TAG('M', 'O', 'D', 'S')
#define TAG_FUNCTIONS SECTION_TAG('F', 'U', 'N', 'C')
#define TAG_THREADS SECTION_TAG('T', 'H', 'R', 'D')
#define TAG_STACKS SECTION_TAG('S', 'T', 'C', 'K')
#define TAG_MANGLED SECTION_TAG('M', 'N', 'G', 'L')

/* STCK and MNGL are optional: files written before stacks or mangled names were kept have none, and load without
 * them. */
enum { SECTION_HEADER, SECTION_MODULES, SECTION_FUNCTIONS, SECTION_THREADS, SECTION_STACKS, SECTION_MANGLED,
       _SECTION_MAX };
static const uint32_t section_tags[_SECTION_MAX] = { TAG_HEADER, TAG_MODULES, TAG_FUNCTIONS, TAG_THREADS,
                                                     TAG_STACKS, TAG_MANGLED };
#define SECTION_OPTIONAL(i) ((i) == SECTION_STACKS || (i) == SECTION_MANGLED)

/* A function's module id with this bit: the function is an inlined frame (profile.h), a row apart from the
 * function called. A vprofd from before inlined frames refuses such a file (a module that does not exist) rather
 * than load two functions of one name. */
#define FUNCTION_INLINED UINT32_C(0x80000000)
/* With this bit a line of a function follows (profile_intern_line()): a u32 above 0, before the name. */
#define FUNCTION_LINE UINT32_C(0x40000000)

#define VALUES_SIZE (4 * sizeof(uint64_t))
#define COUNTS_SIZE (2 * sizeof(uint64_t) + 2 * VALUES_SIZE)
#define STRING_MIN_SIZE (sizeof(uint32_t) + 1)
#define THREAD_NAME_MAX 255

static void write_values(SectionWriter *w, const ProfileValues *v)
{
        section_write_u64(w, v->user_samples);
        section_write_u64(w, v->kernel_samples);
        section_write_u64(w, v->blocked_ns);
        section_write_u64(w, v->preempted_ns);
}

static void write_counts(SectionWriter *w, const Counts *c)
{
        section_write_u64(w, c->inclusive);
        section_write_u64(w, c->exclusive);
        write_values(w, &c->inclusive_values);
        write_values(w, &c->exclusive_values);
}

static int compare_threads(const void *a, const void *b)
{
        const Thread *x = *(Thread *const *)a, *y = *(Thread *const *)b;
        return x->tid < y->tid ? -1 : x->tid > y->tid;
}

static void write_threads(const Profile *p, SectionWriter *w)
{
        _cleanup_free_ Thread **threads = NULL;
        size_t n = 0, s;
        Thread *t;

        /* By tid, so that the same profile always makes the same bytes. */
        threads = calloc(MAX(hashmap_size(p->threads), (size_t)1), sizeof(Thread *));
        if (!threads) {
                w->error = w->error ?: -ENOMEM;
                return;
        }
        HASHMAP_FOREACH(t, p->threads)
                threads[n++] = t;
        qsort(threads, n, sizeof(Thread *), compare_threads);

        s = section_begin(w, TAG_THREADS, SECTION_REQUIRED);
        section_write_u32(w, (uint32_t)n);
        for (size_t i = 0; i < n; i++) {
                section_write_u32(w, threads[i]->tid);
                section_write_string(w, threads[i]->name);
                section_write_u64(w, threads[i]->samples);
                write_values(w, &threads[i]->values);
        }
        section_end(w, s);
}

static void write_stacks(const Profile *p, SectionWriter *w)
{
        size_t s;

        /* By id, which is the order they were first seen: loading inserts them in this order, so each gets its id
         * back, and the deltas of the journal that continues this file (profile-delta.h) mean the same stacks.
         * The same profile still makes the same bytes. */
        s = section_begin(w, TAG_STACKS, 0);
        section_write_u64(w, p->other_stack_samples);
        write_values(w, &p->other_stack_values);
        section_write_u32(w, (uint32_t)p->n_stacks);
        for (size_t i = 0; i < p->n_stacks; i++) {
                const Stack *stack = p->stack_by_id[i];

                section_write_u32(w, stack->key.n_frames);
                section_write_u32(w, stack->n_kernel_frames);
                section_write_u64(w, stack->samples);
                write_values(w, &stack->values);
                for (uint32_t j = 0; j < stack->key.n_frames; j++)
                        section_write_u32(w, stack->frames[j]);
        }
        section_end(w, s);
}

/* The symbol behind each demangled function name, so GetSymbolNames and --json keep it across a restart. */
static void write_mangled(const Profile *p, SectionWriter *w)
{
        uint32_t n = 0;
        size_t s;

        for (size_t i = 0; i < p->n_functions; i++)
                n += p->functions[i]->mangled != NULL;
        s = section_begin(w, TAG_MANGLED, 0);
        section_write_u32(w, n);
        for (size_t i = 0; i < p->n_functions; i++) {
                if (!p->functions[i]->mangled)
                        continue;
                section_write_u32(w, (uint32_t)i);
                section_write_string(w, p->functions[i]->mangled);
        }
        section_end(w, s);
}

void profile_serialize_write(const Profile *p, SectionWriter *w)
{
        size_t s;

        assert(p);
        assert(w);

        s = section_begin(w, TAG_HEADER, SECTION_REQUIRED);
        section_write_u32(w, p->frequency);
        section_write_u32(w, p->unknown_id);
        section_write_u64(w, p->total);
        write_values(w, &p->total_values);
        section_end(w, s);

        s = section_begin(w, TAG_MODULES, SECTION_REQUIRED);
        section_write_u32(w, (uint32_t)p->n_modules);
        for (size_t i = 0; i < p->n_modules; i++) {
                section_write_string(w, p->modules[i]->name);
                write_counts(w, &p->modules[i]->counts);
        }
        section_end(w, s);

        s = section_begin(w, TAG_FUNCTIONS, SECTION_REQUIRED);
        section_write_u32(w, (uint32_t)p->n_functions);
        for (size_t i = 0; i < p->n_functions; i++) {
                const Function *f = p->functions[i];

                section_write_u32(w, f->key.module_id | (f->key.inlined ? FUNCTION_INLINED : 0) |
                                             (f->key.line > 0 ? FUNCTION_LINE : 0));
                if (f->key.line > 0)
                        section_write_u32(w, f->key.line);
                section_write_string(w, f->name);
                write_counts(w, &p->functions[i]->counts);
        }
        section_end(w, s);

        write_threads(p, w);
        write_stacks(p, w);
        write_mangled(p, w);
}

static void read_values(SectionReader *r, ProfileValues *ret)
{
        ret->user_samples = section_read_u64(r);
        ret->kernel_samples = section_read_u64(r);
        ret->blocked_ns = section_read_u64(r);
        ret->preempted_ns = section_read_u64(r);
}

static void read_counts(SectionReader *r, Counts *ret)
{
        *ret = (Counts){};
        ret->inclusive = section_read_u64(r);
        ret->exclusive = section_read_u64(r);
        read_values(r, &ret->inclusive_values);
        read_values(r, &ret->exclusive_values);
}

static bool values_within(const ProfileValues *a, const ProfileValues *b)
{
        return a->user_samples <= b->user_samples && a->kernel_samples <= b->kernel_samples &&
               a->blocked_ns <= b->blocked_ns && a->preempted_ns <= b->preempted_ns;
}

/* What counting can produce: a sample adds to a row's exclusive count only with its inclusive count, and to
 * a row at most once. */
static bool counts_possible(const Profile *p, const Counts *c)
{
        return c->exclusive <= c->inclusive && c->inclusive <= p->total &&
               values_within(&c->exclusive_values, &c->inclusive_values) &&
               values_within(&c->inclusive_values, &p->total_values);
}

static bool counts_zero(const Counts *c)
{
        const ProfileValues *v = &c->inclusive_values;
        return c->inclusive == 0 && v->user_samples == 0 && v->kernel_samples == 0 && v->blocked_ns == 0 &&
               v->preempted_ns == 0;
}

static int read_header(SectionReader *r, Profile **ret, uint32_t *ret_unknown_id)
{
        _cleanup_(profile_freep) Profile *p = NULL;
        uint32_t frequency, unknown_id;
        ProfileValues total_values;
        uint64_t total;
        int r2;

        frequency = section_read_u32(r);
        unknown_id = section_read_u32(r);
        total = section_read_u64(r);
        read_values(r, &total_values);
        if (section_check_end(r) < 0)
                return -EBADMSG;
        if (frequency == 0)
                return section_fail(r, "frequency 0");
        r2 = profile_new(frequency, &p);
        if (r2 < 0)
                return r2;
        p->total = total;
        p->total_values = total_values;
        *ret_unknown_id = unknown_id;
        *ret = TAKE_PTR(p);
        return 0;
}

typedef struct SavedModule {
        const char *name; /* in the file's data */
        Counts counts;
} SavedModule;

static int read_modules(SectionReader *r, SavedModule **ret, size_t *ret_n)
{
        _cleanup_free_ SavedModule *modules = NULL;
        size_t n;
        int k;

        k = section_read_count(r, STRING_MIN_SIZE + COUNTS_SIZE, &n);
        if (k < 0)
                return k;
        modules = calloc(MAX(n, (size_t)1), sizeof(SavedModule));
        if (!modules)
                return -ENOMEM;
        for (size_t i = 0; i < n; i++) {
                k = section_read_string(r, SECTION_STRING_MAX, false, &modules[i].name);
                if (k < 0)
                        return k;
                read_counts(r, &modules[i].counts);
        }
        k = section_check_end(r);
        if (k < 0)
                return k;
        *ret = TAKE_PTR(modules);
        *ret_n = n;
        return 0;
}

/* Functions are interned again in their order, through the profile's own code, which gives them the same
 * ids and rebuilds its lookup tables; module ids follow from the functions' first uses. */
static int read_functions(SectionReader *r, Profile *p, const SavedModule *modules, size_t n_modules)
{
        size_t n;
        int k;

        k = section_read_count(r, sizeof(uint32_t) + STRING_MIN_SIZE + COUNTS_SIZE, &n);
        if (k < 0)
                return k;
        for (size_t i = 0; i < n; i++) {
                uint32_t module_id, id, line = 0;
                const char *name;
                bool inlined, has_line;
                Counts c;

                module_id = section_read_u32(r);
                inlined = module_id & FUNCTION_INLINED;
                has_line = module_id & FUNCTION_LINE;
                if (has_line)
                        line = section_read_u32(r);
                module_id &= ~(FUNCTION_INLINED | FUNCTION_LINE);
                k = section_read_string(r, SECTION_STRING_MAX, false, &name);
                if (k < 0)
                        return k;
                read_counts(r, &c);
                if (section_failed(r))
                        return -EBADMSG;
                if (module_id >= n_modules)
                        return section_fail(r, "function of a module that does not exist");
                if (!counts_possible(p, &c))
                        return section_fail(r, "function counts that no sampling gives (exclusive above "
                                               "inclusive, or above the total)");
                if (has_line && (line == 0 || inlined || !counts_zero(&c) ||
                                 !profile_find_function(p, modules[module_id].name, name, false, 0)))
                        return section_fail(r, "a line 0, of a function that does not exist, or with counts");
                k = line > 0 ? profile_intern_line(p, modules[module_id].name, name, line, &id)
                             : profile_intern_frame(p, modules[module_id].name, name, inlined, &id);
                if (k < 0)
                        return k;
                if (id != i)
                        return section_fail(r, "the same function twice");
                p->functions[id]->counts = c;
        }
        return section_check_end(r);
}

static int place_modules(SectionReader *r, Profile *p, const SavedModule *modules, size_t n_modules)
{
        _cleanup_free_ bool *placed = calloc(MAX(p->n_modules, (size_t)1), sizeof(bool));

        if (!placed)
                return -ENOMEM;
        for (size_t i = 0; i < n_modules; i++) {
                _cleanup_free_ char *escaped = NULL;
                const char *name;
                size_t id;
                void *v;
                int k;

                /* Interned escaped (profile_intern_module()), looked up so. */
                k = utf8_escape_or_keep(modules[i].name, &escaped, &name);
                if (k < 0)
                        return k;
                v = hashmap_get(p->module_by_name, name);

                if (!counts_possible(p, &modules[i].counts))
                        return section_fail(r, "module counts that no sampling gives (exclusive above "
                                               "inclusive, or above the total)");
                if (!v) {
                        /* A module is only ever counted through its functions. */
                        if (!counts_zero(&modules[i].counts))
                                return section_fail(r, "module with counts and no function");
                        continue;
                }
                id = (size_t)PTR_TO_UINT64(v) - 1;
                if (placed[id])
                        return section_fail(r, "the same module twice");
                placed[id] = true;
                p->modules[id]->counts = modules[i].counts;
        }
        return 0;
}

static int read_threads(SectionReader *r, Profile *p)
{
        size_t n;
        int k;

        k = section_read_count(r, 2 * sizeof(uint32_t) + sizeof(uint64_t) + VALUES_SIZE, &n);
        if (k < 0)
                return k;
        for (size_t i = 0; i < n; i++) {
                _cleanup_free_ Thread *t = calloc(1, sizeof(*t));
                const char *name;

                if (!t)
                        return -ENOMEM;
                t->tid = section_read_u32(r);
                k = section_read_string(r, THREAD_NAME_MAX, true, &name);
                if (k < 0)
                        return k;
                t->samples = section_read_u64(r);
                read_values(r, &t->values);
                if (section_failed(r))
                        return -EBADMSG;
                if (t->samples > p->total || !values_within(&t->values, &p->total_values))
                        return section_fail(r, "thread counts above the profile's total");
                if (name) {
                        t->name = utf8_escape_dup(name); /* an older vprofd's file may hold any bytes */
                        if (!t->name)
                                return -ENOMEM;
                }
                k = hashmap_put(p->threads, UINT64_TO_PTR(t->tid), t);
                if (k < 0) {
                        free(t->name);
                        return k == -EEXIST ? section_fail(r, "the same thread twice") : k;
                }
                TAKE_PTR(t);
        }
        return section_check_end(r);
}

/* The stacks go in through the same hash as new ones; each must name functions that exist and add up to at most
 * the totals. The frames of one stack are at most the deepest a sample has. */
#define STACK_FRAMES_MAX 4096

static int read_stacks(SectionReader *r, Profile *p)
{
        _cleanup_free_ uint32_t *frames = malloc(STACK_FRAMES_MAX * sizeof(uint32_t));
        uint64_t samples = 0;
        size_t n;
        int k;

        if (!frames)
                return -ENOMEM;
        p->other_stack_samples = section_read_u64(r);
        read_values(r, &p->other_stack_values);
        samples = p->other_stack_samples;
        k = section_read_count(r, 2 * sizeof(uint32_t) + sizeof(uint64_t) + VALUES_SIZE, &n);
        if (k < 0)
                return k;
        for (size_t i = 0; i < n; i++) {
                uint32_t n_frames = section_read_u32(r), n_kernel = section_read_u32(r);
                ProfileValues values;
                uint64_t count;
                Stack *stack;

                count = section_read_u64(r);
                read_values(r, &values);
                if (section_failed(r))
                        return -EBADMSG;
                if (n_frames > STACK_FRAMES_MAX || n_kernel > n_frames)
                        return section_fail(r, "a stack deeper than any sample");
                for (uint32_t j = 0; j < n_frames; j++) {
                        frames[j] = section_read_u32(r);
                        if (!section_failed(r) && frames[j] >= p->n_functions)
                                return section_fail(r, "a stack with a function that does not exist");
                }
                if (section_failed(r))
                        return -EBADMSG;
                samples += count;
                if (count > p->total || samples > p->total || !values_within(&values, &p->total_values))
                        return section_fail(r, "stack counts that add up to more than the profile's total");
                k = profile_stack_insert(p, frames, n_frames, n_kernel, &stack);
                if (k == -EEXIST)
                        return section_fail(r, "the same stack twice");
                if (k < 0)
                        return k;
                stack->samples = count;
                stack->values = values;
        }
        return section_check_end(r);
}

/* The fold row of the function limit is a function like any other in the file. */
static void find_other_id(Profile *p)
{
        for (size_t i = 0; i < p->n_functions; i++)
                if (strcmp(p->functions[i]->name, PROFILE_OTHER) == 0 &&
                    strcmp(p->modules[p->functions[i]->key.module_id]->name, PROFILE_OTHER) == 0)
                        p->other_id = (uint32_t)i;
}

static int check_unknown_id(SectionReader *r, Profile *p, uint32_t id)
{
        const Function *f;

        if (id == UINT32_MAX)
                return 0;
        if (id >= p->n_functions)
                return section_fail(r, "unknown-stack function out of range");
        f = p->functions[id];
        if (strcmp(f->name, "[unknown]") != 0 ||
            strcmp(p->modules[f->key.module_id]->name, "[unknown]") != 0)
                return section_fail(r, "unknown-stack function is another one");
        p->unknown_id = id;
        return 0;
}

static int read_mangled(SectionReader *r, Profile *p)
{
        size_t n;
        int k;

        k = section_read_count(r, sizeof(uint32_t) + STRING_MIN_SIZE, &n);
        if (k < 0)
                return k;
        for (size_t i = 0; i < n; i++) {
                uint32_t id = section_read_u32(r);
                const char *mangled;

                k = section_read_string(r, SECTION_STRING_MAX, false, &mangled);
                if (k < 0)
                        return k;
                if (id >= p->n_functions || id == p->other_id || id == p->unknown_id)
                        return section_fail(r, "a mangled name of a function that does not exist");
                if (p->functions[id]->mangled)
                        return section_fail(r, "a function with two mangled names");
                k = profile_set_mangled(p, id, mangled);
                if (k < 0)
                        return k;
        }
        return section_check_end(r);
}

int profile_serialize_read(SectionReader *list, Profile **ret)
{
        _cleanup_(profile_freep) Profile *p = NULL;
        _cleanup_free_ SavedModule *modules = NULL;
        SectionReader sections[_SECTION_MAX];
        bool seen[_SECTION_MAX] = {};
        size_t n_modules = 0;
        uint32_t unknown_id = UINT32_MAX;
        int k;

        assert(list);
        assert(ret);

        /* Gather first, then read in the order the sections depend on each other. */
        k = section_gather(list, section_tags, _SECTION_MAX, sections, seen, "a profile section twice");
        if (k < 0)
                return k;
        for (size_t i = 0; i < _SECTION_MAX; i++)
                if (!seen[i] && !SECTION_OPTIONAL(i))
                        return section_fail(list, "a profile section is missing");

        k = read_header(&sections[SECTION_HEADER], &p, &unknown_id);
        if (k >= 0)
                k = read_modules(&sections[SECTION_MODULES], &modules, &n_modules);
        if (k >= 0)
                k = read_functions(&sections[SECTION_FUNCTIONS], p, modules, n_modules);
        if (k >= 0)
                k = place_modules(&sections[SECTION_MODULES], p, modules, n_modules);
        if (k >= 0)
                k = check_unknown_id(&sections[SECTION_HEADER], p, unknown_id);
        if (k >= 0)
                k = read_threads(&sections[SECTION_THREADS], p);
        if (k >= 0 && seen[SECTION_STACKS])
                k = read_stacks(&sections[SECTION_STACKS], p);
        if (k < 0)
                return k;
        find_other_id(p);
        if (seen[SECTION_MANGLED]) {
                k = read_mangled(&sections[SECTION_MANGLED], p);
                if (k < 0)
                        return k;
        }
        *ret = TAKE_PTR(p);
        return 0;
}

int profile_serialize_data(const Profile *p, void **ret, size_t *ret_size)
{
        SectionWriter w;

        assert(p);
        assert(ret);
        assert(ret_size);

        section_writer_init(&w, PROFILE_SERIALIZE_MAGIC);
        profile_serialize_write(p, &w);
        return section_writer_finish(&w, ret, ret_size, NULL);
}

int profile_serialize_parse(const void *data, size_t size, Profile **ret, const char **ret_error)
{
        const char *error = NULL;
        SectionReader list;
        int r;

        assert(data || size == 0);
        assert(ret);

        r = section_file_open(data, size, PROFILE_SERIALIZE_MAGIC, &error, &list);
        if (r >= 0)
                r = profile_serialize_read(&list, ret);
        if (r >= 0)
                r = section_check_end(&list);
        if (ret_error)
                *ret_error = error;
        return r;
}

int profile_serialize_save(const Profile *p, int dir_fd, const char *name)
{
        _cleanup_free_ void *data = NULL;
        size_t size;
        int r;

        assert(p);
        assert(name);

        r = profile_serialize_data(p, &data, &size);
        if (r < 0)
                return r;
        return write_file_atomic(dir_fd, name, data, size, 0600);
}

int profile_serialize_load(int dir_fd, const char *name, Profile **ret, const char **ret_error)
{
        _cleanup_free_ void *data = NULL;
        size_t size;
        int r;

        assert(name);
        assert(ret);

        if (ret_error)
                *ret_error = NULL;
        r = read_file_full(dir_fd, name, SECTION_FILE_MAX, &data, &size);
        if (r < 0)
                return r;
        return profile_serialize_parse(data, size, ret, ret_error);
}

/* Rounded down: each part of a sum rounds down by less than one, so the parts' sum never passes the rounded
 * total (sum of floors <= floor of the sum), and a smaller count never passes a larger one. */
static uint64_t scale(uint64_t v, uint32_t to, uint32_t from)
{
        unsigned __int128 x = (unsigned __int128)v * to / from;
        return x > UINT64_MAX ? UINT64_MAX : (uint64_t)x;
}

static void scale_values(ProfileValues *v, uint32_t to, uint32_t from)
{
        v->user_samples = scale(v->user_samples, to, from);
        v->kernel_samples = scale(v->kernel_samples, to, from);
}

static void scale_counts(Counts *c, uint32_t to, uint32_t from)
{
        c->inclusive = scale(c->inclusive, to, from);
        c->exclusive = scale(c->exclusive, to, from);
        scale_values(&c->inclusive_values, to, from);
        scale_values(&c->exclusive_values, to, from);
}

void profile_convert_frequency(Profile *p, uint32_t frequency)
{
        uint32_t from;
        Thread *t;

        assert(p);

        from = p->frequency;
        if (frequency == 0 || frequency == from)
                return;
        p->total = scale(p->total, frequency, from);
        scale_values(&p->total_values, frequency, from);
        for (size_t i = 0; i < p->n_functions; i++)
                scale_counts(&p->functions[i]->counts, frequency, from);
        for (size_t i = 0; i < p->n_modules; i++)
                scale_counts(&p->modules[i]->counts, frequency, from);
        HASHMAP_FOREACH(t, p->threads) {
                t->samples = scale(t->samples, frequency, from);
                scale_values(&t->values, frequency, from);
        }
        for (size_t i = 0; i < p->n_stacks; i++) {
                p->stack_by_id[i]->samples = scale(p->stack_by_id[i]->samples, frequency, from);
                scale_values(&p->stack_by_id[i]->values, frequency, from);
        }
        p->other_stack_samples = scale(p->other_stack_samples, frequency, from);
        scale_values(&p->other_stack_values, frequency, from);
        p->frequency = frequency;
}
