/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <string.h>

#include "file-util.h"
#include "profile-internal.h"
#include "profile-state.h"

#define TAG_HEADER STATE_TAG('P', 'H', 'D', 'R')
#define TAG_MODULES STATE_TAG('M', 'O', 'D', 'S')
#define TAG_FUNCTIONS STATE_TAG('F', 'U', 'N', 'C')
#define TAG_THREADS STATE_TAG('T', 'H', 'R', 'D')
#define TAG_STACKS STATE_TAG('S', 'T', 'C', 'K')
#define TAG_MANGLED STATE_TAG('M', 'N', 'G', 'L')

/* STCK and MNGL are optional: files written before stacks or mangled names were kept have none, and load without
 * them. */
enum { SECTION_HEADER, SECTION_MODULES, SECTION_FUNCTIONS, SECTION_THREADS, SECTION_STACKS, SECTION_MANGLED,
       _SECTION_MAX };
static const uint32_t section_tags[_SECTION_MAX] = { TAG_HEADER, TAG_MODULES, TAG_FUNCTIONS, TAG_THREADS,
                                                     TAG_STACKS, TAG_MANGLED };
#define SECTION_OPTIONAL(i) ((i) == SECTION_STACKS || (i) == SECTION_MANGLED)

#define VALUES_SIZE (4 * sizeof(uint64_t))
#define COUNTS_SIZE (2 * sizeof(uint64_t) + 2 * VALUES_SIZE)
#define STRING_MIN_SIZE (sizeof(uint32_t) + 1)
#define THREAD_NAME_MAX 255

static void write_values(StateWriter *w, const ProfileValues *v)
{
        state_write_u64(w, v->user_samples);
        state_write_u64(w, v->kernel_samples);
        state_write_u64(w, v->blocked_ns);
        state_write_u64(w, v->preempted_ns);
}

static void write_counts(StateWriter *w, const Counts *c)
{
        state_write_u64(w, c->inclusive);
        state_write_u64(w, c->exclusive);
        write_values(w, &c->inclusive_values);
        write_values(w, &c->exclusive_values);
}

static int compare_threads(const void *a, const void *b)
{
        const Thread *x = *(Thread *const *)a, *y = *(Thread *const *)b;
        return x->tid < y->tid ? -1 : x->tid > y->tid;
}

static void write_threads(const Profile *p, StateWriter *w)
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

        s = state_begin_section(w, TAG_THREADS, STATE_SECTION_REQUIRED);
        state_write_u32(w, (uint32_t)n);
        for (size_t i = 0; i < n; i++) {
                state_write_u32(w, threads[i]->tid);
                state_write_string(w, threads[i]->name);
                state_write_u64(w, threads[i]->samples);
                write_values(w, &threads[i]->values);
        }
        state_end_section(w, s);
}

static void write_stacks(const Profile *p, StateWriter *w)
{
        size_t s;

        /* By id, which is the order they were first seen: loading inserts them in this order, so each gets its id
         * back, and the deltas of the journal that continues this file (profile-delta.h) mean the same stacks.
         * The same profile still makes the same bytes. */
        s = state_begin_section(w, TAG_STACKS, 0);
        state_write_u64(w, p->other_stack_samples);
        write_values(w, &p->other_stack_values);
        state_write_u32(w, (uint32_t)p->n_stacks);
        for (size_t i = 0; i < p->n_stacks; i++) {
                const Stack *stack = p->stack_by_id[i];

                state_write_u32(w, stack->key.n_frames);
                state_write_u32(w, stack->n_kernel_frames);
                state_write_u64(w, stack->samples);
                write_values(w, &stack->values);
                for (uint32_t j = 0; j < stack->key.n_frames; j++)
                        state_write_u32(w, stack->frames[j]);
        }
        state_end_section(w, s);
}

/* The symbol behind each demangled function name, so GetSymbolNames and --json keep it across a restart. */
static void write_mangled(const Profile *p, StateWriter *w)
{
        uint32_t n = 0;
        size_t s;

        for (size_t i = 0; i < p->n_functions; i++)
                n += p->functions[i]->mangled != NULL;
        s = state_begin_section(w, TAG_MANGLED, 0);
        state_write_u32(w, n);
        for (size_t i = 0; i < p->n_functions; i++) {
                if (!p->functions[i]->mangled)
                        continue;
                state_write_u32(w, (uint32_t)i);
                state_write_string(w, p->functions[i]->mangled);
        }
        state_end_section(w, s);
}

void profile_state_write(const Profile *p, StateWriter *w)
{
        size_t s;

        s = state_begin_section(w, TAG_HEADER, STATE_SECTION_REQUIRED);
        state_write_u32(w, p->frequency);
        state_write_u32(w, p->unknown_id);
        state_write_u64(w, p->total);
        write_values(w, &p->total_values);
        state_end_section(w, s);

        s = state_begin_section(w, TAG_MODULES, STATE_SECTION_REQUIRED);
        state_write_u32(w, (uint32_t)p->n_modules);
        for (size_t i = 0; i < p->n_modules; i++) {
                state_write_string(w, p->modules[i]->name);
                write_counts(w, &p->modules[i]->counts);
        }
        state_end_section(w, s);

        s = state_begin_section(w, TAG_FUNCTIONS, STATE_SECTION_REQUIRED);
        state_write_u32(w, (uint32_t)p->n_functions);
        for (size_t i = 0; i < p->n_functions; i++) {
                state_write_u32(w, p->functions[i]->key.module_id);
                state_write_string(w, p->functions[i]->name);
                write_counts(w, &p->functions[i]->counts);
        }
        state_end_section(w, s);

        write_threads(p, w);
        write_stacks(p, w);
        write_mangled(p, w);
}

static void read_values(StateReader *r, ProfileValues *ret)
{
        ret->user_samples = state_read_u64(r);
        ret->kernel_samples = state_read_u64(r);
        ret->blocked_ns = state_read_u64(r);
        ret->preempted_ns = state_read_u64(r);
}

static void read_counts(StateReader *r, Counts *ret)
{
        *ret = (Counts){};
        ret->inclusive = state_read_u64(r);
        ret->exclusive = state_read_u64(r);
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

static int read_header(StateReader *r, Profile **ret, uint32_t *ret_unknown_id)
{
        _cleanup_(profile_freep) Profile *p = NULL;
        uint32_t frequency, unknown_id;
        ProfileValues total_values;
        uint64_t total;
        int r2;

        frequency = state_read_u32(r);
        unknown_id = state_read_u32(r);
        total = state_read_u64(r);
        read_values(r, &total_values);
        if (state_check_end(r) < 0)
                return -EBADMSG;
        if (frequency == 0)
                return state_fail(r, "frequency 0");
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

static int read_modules(StateReader *r, SavedModule **ret, size_t *ret_n)
{
        _cleanup_free_ SavedModule *modules = NULL;
        size_t n;
        int k;

        k = state_read_count(r, STRING_MIN_SIZE + COUNTS_SIZE, &n);
        if (k < 0)
                return k;
        modules = calloc(MAX(n, (size_t)1), sizeof(SavedModule));
        if (!modules)
                return -ENOMEM;
        for (size_t i = 0; i < n; i++) {
                k = state_read_string(r, STATE_STRING_MAX, false, &modules[i].name);
                if (k < 0)
                        return k;
                read_counts(r, &modules[i].counts);
        }
        k = state_check_end(r);
        if (k < 0)
                return k;
        *ret = TAKE_PTR(modules);
        *ret_n = n;
        return 0;
}

/* Functions are interned again in their order, through the profile's own code, which gives them the same
 * ids and rebuilds its lookup tables; module ids follow from the functions' first uses. */
static int read_functions(StateReader *r, Profile *p, const SavedModule *modules, size_t n_modules)
{
        size_t n;
        int k;

        k = state_read_count(r, sizeof(uint32_t) + STRING_MIN_SIZE + COUNTS_SIZE, &n);
        if (k < 0)
                return k;
        for (size_t i = 0; i < n; i++) {
                uint32_t module_id, id;
                const char *name;
                Counts c;

                module_id = state_read_u32(r);
                k = state_read_string(r, STATE_STRING_MAX, false, &name);
                if (k < 0)
                        return k;
                read_counts(r, &c);
                if (state_failed(r))
                        return -EBADMSG;
                if (module_id >= n_modules)
                        return state_fail(r, "function of a module that does not exist");
                if (!counts_possible(p, &c))
                        return state_fail(r, "function counts that no sampling gives (exclusive above "
                                             "inclusive, or above the total)");
                k = profile_intern_function(p, modules[module_id].name, name, &id);
                if (k < 0)
                        return k;
                if (id != i)
                        return state_fail(r, "the same function twice");
                p->functions[id]->counts = c;
        }
        return state_check_end(r);
}

static int place_modules(StateReader *r, Profile *p, const SavedModule *modules, size_t n_modules)
{
        _cleanup_free_ bool *placed = calloc(MAX(p->n_modules, (size_t)1), sizeof(bool));

        if (!placed)
                return -ENOMEM;
        for (size_t i = 0; i < n_modules; i++) {
                void *v = hashmap_get(p->module_by_name, modules[i].name);
                size_t id;

                if (!counts_possible(p, &modules[i].counts))
                        return state_fail(r, "module counts that no sampling gives (exclusive above inclusive, "
                                             "or above the total)");
                if (!v) {
                        /* A module is only ever counted through its functions. */
                        if (!counts_zero(&modules[i].counts))
                                return state_fail(r, "module with counts and no function");
                        continue;
                }
                id = (size_t)PTR_TO_UINT64(v) - 1;
                if (placed[id])
                        return state_fail(r, "the same module twice");
                placed[id] = true;
                p->modules[id]->counts = modules[i].counts;
        }
        return 0;
}

static int read_threads(StateReader *r, Profile *p)
{
        size_t n;
        int k;

        k = state_read_count(r, 2 * sizeof(uint32_t) + sizeof(uint64_t) + VALUES_SIZE, &n);
        if (k < 0)
                return k;
        for (size_t i = 0; i < n; i++) {
                _cleanup_free_ Thread *t = calloc(1, sizeof(*t));
                const char *name;

                if (!t)
                        return -ENOMEM;
                t->tid = state_read_u32(r);
                k = state_read_string(r, THREAD_NAME_MAX, true, &name);
                if (k < 0)
                        return k;
                t->samples = state_read_u64(r);
                read_values(r, &t->values);
                if (state_failed(r))
                        return -EBADMSG;
                if (t->samples > p->total || !values_within(&t->values, &p->total_values))
                        return state_fail(r, "thread counts above the profile's total");
                if (name) {
                        t->name = strdup(name);
                        if (!t->name)
                                return -ENOMEM;
                }
                k = hashmap_put(p->threads, UINT64_TO_PTR(t->tid), t);
                if (k < 0) {
                        free(t->name);
                        return k == -EEXIST ? state_fail(r, "the same thread twice") : k;
                }
                TAKE_PTR(t);
        }
        return state_check_end(r);
}

/* The stacks go in through the same hash as new ones; each must name functions that exist and add up to at most
 * the totals. The frames of one stack are at most the deepest a sample has. */
#define STACK_FRAMES_MAX 4096

static int read_stacks(StateReader *r, Profile *p)
{
        _cleanup_free_ uint32_t *frames = malloc(STACK_FRAMES_MAX * sizeof(uint32_t));
        uint64_t samples = 0;
        size_t n;
        int k;

        if (!frames)
                return -ENOMEM;
        p->other_stack_samples = state_read_u64(r);
        read_values(r, &p->other_stack_values);
        samples = p->other_stack_samples;
        k = state_read_count(r, 2 * sizeof(uint32_t) + sizeof(uint64_t) + VALUES_SIZE, &n);
        if (k < 0)
                return k;
        for (size_t i = 0; i < n; i++) {
                uint32_t n_frames = state_read_u32(r), n_kernel = state_read_u32(r);
                ProfileValues values;
                uint64_t count;
                Stack *stack;

                count = state_read_u64(r);
                read_values(r, &values);
                if (state_failed(r))
                        return -EBADMSG;
                if (n_frames > STACK_FRAMES_MAX || n_kernel > n_frames)
                        return state_fail(r, "a stack deeper than any sample");
                for (uint32_t j = 0; j < n_frames; j++) {
                        frames[j] = state_read_u32(r);
                        if (!state_failed(r) && frames[j] >= p->n_functions)
                                return state_fail(r, "a stack with a function that does not exist");
                }
                if (state_failed(r))
                        return -EBADMSG;
                samples += count;
                if (count > p->total || samples > p->total || !values_within(&values, &p->total_values))
                        return state_fail(r, "stack counts that add up to more than the profile's total");
                k = profile_stack_insert(p, frames, n_frames, n_kernel, &stack);
                if (k == -EEXIST)
                        return state_fail(r, "the same stack twice");
                if (k < 0)
                        return k;
                stack->samples = count;
                stack->values = values;
        }
        return state_check_end(r);
}

/* The fold row of the function limit is a function like any other in the file. */
static void find_other_id(Profile *p)
{
        for (size_t i = 0; i < p->n_functions; i++)
                if (strcmp(p->functions[i]->name, PROFILE_OTHER) == 0 &&
                    strcmp(p->modules[p->functions[i]->key.module_id]->name, PROFILE_OTHER) == 0)
                        p->other_id = (uint32_t)i;
}

static int check_unknown_id(StateReader *r, Profile *p, uint32_t id)
{
        const Function *f;

        if (id == UINT32_MAX)
                return 0;
        if (id >= p->n_functions)
                return state_fail(r, "unknown-stack function out of range");
        f = p->functions[id];
        if (strcmp(f->name, "[unknown]") != 0 ||
            strcmp(p->modules[f->key.module_id]->name, "[unknown]") != 0)
                return state_fail(r, "unknown-stack function is another one");
        p->unknown_id = id;
        return 0;
}

static int read_mangled(StateReader *r, Profile *p)
{
        size_t n;
        int k;

        k = state_read_count(r, sizeof(uint32_t) + STRING_MIN_SIZE, &n);
        if (k < 0)
                return k;
        for (size_t i = 0; i < n; i++) {
                uint32_t id = state_read_u32(r);
                const char *mangled;

                k = state_read_string(r, STATE_STRING_MAX, false, &mangled);
                if (k < 0)
                        return k;
                if (id >= p->n_functions || id == p->other_id || id == p->unknown_id)
                        return state_fail(r, "a mangled name of a function that does not exist");
                if (p->functions[id]->mangled)
                        return state_fail(r, "a function with two mangled names");
                k = profile_set_mangled(p, id, mangled);
                if (k < 0)
                        return k;
        }
        return state_check_end(r);
}

int profile_state_read(StateReader *list, Profile **ret)
{
        _cleanup_(profile_freep) Profile *p = NULL;
        _cleanup_free_ SavedModule *modules = NULL;
        StateReader sections[_SECTION_MAX];
        bool seen[_SECTION_MAX] = {};
        size_t n_modules = 0;
        uint32_t unknown_id = UINT32_MAX;
        StateSection s;
        int k;

        /* Gather first, then read in the order the sections depend on each other. */
        while ((k = state_next_section(list, &s)) > 0) {
                size_t i = 0;

                while (i < _SECTION_MAX && section_tags[i] != s.tag)
                        i++;
                if (i == _SECTION_MAX) {
                        k = state_skip_section(&s);
                        if (k < 0)
                                return k;
                        continue;
                }
                if (seen[i])
                        return state_fail(list, "a profile section twice");
                seen[i] = true;
                sections[i] = s.contents;
        }
        if (k < 0)
                return k;
        for (size_t i = 0; i < _SECTION_MAX; i++)
                if (!seen[i] && !SECTION_OPTIONAL(i))
                        return state_fail(list, "a profile section is missing");

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

int profile_state_serialize(const Profile *p, void **ret, size_t *ret_size)
{
        StateWriter w;

        state_writer_init(&w, PROFILE_STATE_MAGIC);
        profile_state_write(p, &w);
        return state_writer_finish(&w, ret, ret_size, NULL);
}

int profile_state_parse(const void *data, size_t size, Profile **ret, const char **ret_error)
{
        const char *error = NULL;
        StateReader list;
        int r;

        r = state_open(data, size, PROFILE_STATE_MAGIC, &error, &list);
        if (r >= 0)
                r = profile_state_read(&list, ret);
        if (r >= 0)
                r = state_check_end(&list);
        if (ret_error)
                *ret_error = error;
        return r;
}

int profile_state_save(const Profile *p, int dir_fd, const char *name)
{
        _cleanup_free_ void *data = NULL;
        size_t size;
        int r;

        r = profile_state_serialize(p, &data, &size);
        if (r < 0)
                return r;
        return write_file_atomic(dir_fd, name, data, size, 0600);
}

int profile_state_load(int dir_fd, const char *name, Profile **ret, const char **ret_error)
{
        _cleanup_free_ void *data = NULL;
        size_t size;
        int r;

        if (ret_error)
                *ret_error = NULL;
        r = read_file_full(dir_fd, name, STATE_FILE_MAX, &data, &size);
        if (r < 0)
                return r;
        return profile_state_parse(data, size, ret, ret_error);
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

void profile_state_convert_frequency(Profile *p, uint32_t frequency)
{
        uint32_t from = p->frequency;
        Thread *t;

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
