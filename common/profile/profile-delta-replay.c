/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* A delta replayed onto a profile (crash recovery): every section checked before anything changes. */
#include <assert.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "profile-delta-format.h"
#include "profile-delta.h"
#include "profile-internal.h"

enum { SECTION_HEADER, SECTION_FUNCTIONS, SECTION_MANGLED, SECTION_STACKS, SECTION_THREADS, SECTION_ENTRIES,
       SECTION_OTHER, SECTION_INLINED, SECTION_LINES, _SECTION_MAX };
static const uint32_t section_tags[_SECTION_MAX] = { TAG_HEADER,  TAG_FUNCTIONS, TAG_MANGLED, TAG_STACKS,
                                                     TAG_THREADS, TAG_ENTRIES,   TAG_OTHER,   TAG_INLINED,
                                                     TAG_LINES };

/* Replay: one pass that checks everything it can without the profile changing, then one that changes it. The
 * sections are read twice; a SectionReader is a cursor, so each pass reads its own copy. */

typedef struct Parsed {
        SectionReader sections[_SECTION_MAX];
        bool seen[_SECTION_MAX];
        size_t n_functions, n_stacks; /* the profile's, once the delta's definitions are in */
        uint32_t *stack_depth;        /* of the new stacks, for the entries' kernel frames */
        uint32_t *tids;               /* DTHR's, ascending */
        bool *tid_counted;            /* by an entry of the delta */
        size_t n_tids;
} Parsed;

static void parsed_done(Parsed *x)
{
        free(x->stack_depth);
        free(x->tids);
        free(x->tid_counted);
}

static void read_values(SectionReader *r, ProfileValues *ret)
{
        ret->user_samples = section_read_u64(r);
        ret->kernel_samples = section_read_u64(r);
        ret->blocked_ns = section_read_u64(r);
        ret->preempted_ns = section_read_u64(r);
}

static int gather(SectionReader *list, Parsed *x)
{
        int k;

        k = section_gather(list, section_tags, _SECTION_MAX, x->sections, x->seen, "a delta section twice");
        if (k < 0)
                return k;
        if (!x->seen[SECTION_HEADER])
                return section_fail(list, "a delta without its header");
        return 0;
}

static int check_header(SectionReader r, const Profile *p)
{
        uint32_t frequency = section_read_u32(&r), first_function = section_read_u32(&r),
                 first_stack = section_read_u32(&r);
        int k = section_check_end(&r);

        if (k < 0)
                return k;
        if (frequency != p->frequency)
                return section_fail(&r, "a delta counted at another frequency than its tables");
        if (first_function != p->n_functions || first_stack != p->n_stacks)
                return section_fail(&r, "a delta that does not continue its tables (function or stack ids "
                                        "out of step)");
        return 0;
}

static int check_functions(SectionReader r, Parsed *x)
{
        const char *module, *name;
        size_t n;
        int k;

        if (!x->seen[SECTION_FUNCTIONS])
                return 0;
        k = section_read_count(&r, 2 * STRING_MIN_SIZE, &n);
        if (k < 0)
                return k;
        for (size_t i = 0; i < n; i++) {
                k = section_read_string(&r, SECTION_STRING_MAX, false, &module);
                if (k >= 0)
                        k = section_read_string(&r, SECTION_STRING_MAX, false, &name);
                if (k < 0)
                        return k;
        }
        if (x->n_functions + n >= UINT32_MAX)
                return section_fail(&r, "more functions than ids");
        x->n_functions += n;
        return section_check_end(&r);
}

/* DINL: ids of the delta's new functions, ascending (check_functions() counted them: x->n_functions). */
static int check_inlined(SectionReader r, const Parsed *x, const Profile *p)
{
        size_t n, next = p->n_functions;
        int k;

        if (!x->seen[SECTION_INLINED])
                return 0;
        k = section_read_count(&r, sizeof(uint32_t), &n);
        if (k < 0)
                return k;
        for (size_t i = 0; i < n; i++) {
                uint32_t id = section_read_u32(&r);

                if (section_failed(&r))
                        return -EBADMSG;
                if (id < next || id >= x->n_functions)
                        return section_fail(&r, "an inlined function that is no new function of the delta, or "
                                                "out of order");
                next = (size_t)id + 1;
        }
        return section_check_end(&r);
}

/* DLIN: ids of the delta's new functions, ascending, each with a line above 0. Whether each one's function
 * exists is known only as they are made (apply_functions()). */
static int check_lines(SectionReader r, const Parsed *x, const Profile *p)
{
        size_t n, next = p->n_functions;
        int k;

        if (!x->seen[SECTION_LINES])
                return 0;
        k = section_read_count(&r, 2 * sizeof(uint32_t), &n);
        if (k < 0)
                return k;
        for (size_t i = 0; i < n; i++) {
                uint32_t id = section_read_u32(&r), line = section_read_u32(&r);

                if (section_failed(&r))
                        return -EBADMSG;
                if (id < next || id >= x->n_functions || line == 0)
                        return section_fail(&r, "a line that is no new function of the delta, out of order, or 0");
                next = (size_t)id + 1;
        }
        return section_check_end(&r);
}

static int check_mangled(SectionReader r, const Parsed *x)
{
        const char *mangled;
        size_t n;
        int k;

        if (!x->seen[SECTION_MANGLED])
                return 0;
        k = section_read_count(&r, sizeof(uint32_t) + STRING_MIN_SIZE, &n);
        if (k < 0)
                return k;
        for (size_t i = 0; i < n; i++) {
                uint32_t id = section_read_u32(&r);

                k = section_read_string(&r, SECTION_STRING_MAX, false, &mangled);
                if (k < 0)
                        return k;
                if (id >= x->n_functions)
                        return section_fail(&r, "a mangled name of a function that does not exist");
        }
        return section_check_end(&r);
}

/* n frames of function ids below n_functions. */
static int check_frames(SectionReader *r, uint32_t n, size_t n_functions)
{
        for (uint32_t j = 0; j < n; j++) {
                uint32_t id = section_read_u32(r);
                if (section_failed(r))
                        return -EBADMSG;
                if (id >= n_functions)
                        return section_fail(r, "a stack with a function that does not exist");
        }
        return 0;
}

static int check_stacks(SectionReader r, Parsed *x)
{
        size_t n;
        int k;

        if (!x->seen[SECTION_STACKS])
                return 0;
        k = section_read_count(&r, 2 * sizeof(uint32_t), &n);
        if (k < 0)
                return k;
        if (x->n_stacks + n >= PROFILE_STACK_OTHER)
                return section_fail(&r, "more stacks than ids");
        x->stack_depth = malloc(MAX(n, (size_t)1) * sizeof(uint32_t));
        if (!x->stack_depth)
                return -ENOMEM;
        for (size_t i = 0; i < n; i++) {
                uint32_t n_frames = section_read_u32(&r), n_kernel = section_read_u32(&r);

                if (section_failed(&r))
                        return -EBADMSG;
                if (n_frames > STACK_FRAMES_MAX || n_kernel > n_frames)
                        return section_fail(&r, "a stack deeper than any sample");
                k = check_frames(&r, n_frames, x->n_functions);
                if (k < 0)
                        return k;
                x->stack_depth[i] = n_frames;
        }
        k = section_check_end(&r);
        if (k < 0)
                return k;
        x->n_stacks += n;
        return 0;
}

static int check_threads(SectionReader r, Parsed *x)
{
        const char *name;
        size_t n;
        int k;

        if (!x->seen[SECTION_THREADS])
                return 0;
        k = section_read_count(&r, 2 * sizeof(uint32_t), &n);
        if (k < 0)
                return k;
        x->tids = malloc(MAX(n, (size_t)1) * sizeof(uint32_t));
        x->tid_counted = calloc(MAX(n, (size_t)1), sizeof(bool));
        if (!x->tids || !x->tid_counted)
                return -ENOMEM;
        for (size_t i = 0; i < n; i++) {
                x->tids[i] = section_read_u32(&r);
                k = section_read_string(&r, THREAD_NAME_MAX, true, &name);
                if (k < 0)
                        return k;
                if (i > 0 && x->tids[i] <= x->tids[i - 1])
                        return section_fail(&r, "threads out of order, or the same thread twice");
        }
        x->n_tids = n;
        return section_check_end(&r);
}

/* Whether the delta names the thread; marks it counted. */
/* What one entry of one interval can hold: samples of a second at 10 kHz on thousands of CPUs fit in 2^32 many
 * times over, an off-CPU interval of years in 2^56 ns. Larger ones are damage, and could wrap the totals. */
static bool values_plausible(const ProfileValues *v)
{
        return v->user_samples <= UINT32_MAX && v->kernel_samples <= UINT32_MAX &&
               v->blocked_ns < (UINT64_C(1) << 56) && v->preempted_ns < (UINT64_C(1) << 56);
}

static bool known_thread(const Parsed *x, uint32_t tid)
{
        const uint32_t *found = x->n_tids > 0 ? bsearch(&tid, x->tids, x->n_tids, sizeof(uint32_t), delta_compare_u32)
                                              : NULL;

        if (!found)
                return false;
        x->tid_counted[found - x->tids] = true;
        return true;
}

/* Every thread named is counted, now or before: a name alone makes no thread. */
static int check_threads_counted(SectionReader *list, const Parsed *x, const Profile *p)
{
        for (size_t i = 0; i < x->n_tids; i++)
                if (!x->tid_counted[i] && !hashmap_contains(p->threads, UINT64_TO_PTR(x->tids[i])))
                        return section_fail(list, "a thread name of a thread without counts");
        return 0;
}

static int check_entries(SectionReader r, const Parsed *x, const Profile *p)
{
        ProfileValues v;
        size_t n;
        int k;

        if (!x->seen[SECTION_ENTRIES])
                return 0;
        k = section_read_count(&r, 3 * sizeof(uint32_t) + VALUES_SIZE, &n);
        if (k < 0)
                return k;
        for (size_t i = 0; i < n; i++) {
                uint32_t stack_id = section_read_u32(&r), tid = section_read_u32(&r),
                         n_kernel = section_read_u32(&r);
                size_t depth;

                read_values(&r, &v);
                if (section_failed(&r))
                        return -EBADMSG;
                if (stack_id >= x->n_stacks)
                        return section_fail(&r, "counts of a stack that does not exist");
                depth = stack_id < p->n_stacks ? p->stack_by_id[stack_id]->key.n_frames
                                               : x->stack_depth[stack_id - p->n_stacks];
                if (n_kernel > depth)
                        return section_fail(&r, "counts with more kernel frames than their stack");
                if (!values_plausible(&v))
                        return section_fail(&r, "counts larger than an interval holds");
                if (!known_thread(x, tid))
                        return section_fail(&r, "counts of a thread the delta does not name");
        }
        return section_check_end(&r);
}

static int check_other(SectionReader r, const Parsed *x)
{
        ProfileValues v;
        size_t n;
        int k;

        if (!x->seen[SECTION_OTHER])
                return 0;
        k = section_read_count(&r, 3 * sizeof(uint32_t) + VALUES_SIZE, &n);
        if (k < 0)
                return k;
        for (size_t i = 0; i < n; i++) {
                uint32_t tid = section_read_u32(&r), n_frames = section_read_u32(&r),
                         n_kernel = section_read_u32(&r);

                read_values(&r, &v);
                if (section_failed(&r))
                        return -EBADMSG;
                if (n_frames > STACK_FRAMES_MAX || n_kernel > n_frames)
                        return section_fail(&r, "a stack deeper than any sample");
                if (!values_plausible(&v))
                        return section_fail(&r, "counts larger than an interval holds");
                if (!known_thread(x, tid))
                        return section_fail(&r, "counts of a thread the delta does not name");
                k = check_frames(&r, n_frames, x->n_functions);
                if (k < 0)
                        return k;
        }
        return section_check_end(&r);
}

/* inlined: DINL's reader (checked), or NULL: the ids of the new functions that are inlined frames. lines:
 * DLIN's (checked), or NULL: the ids of the new functions that are lines of a function, with their lines. */
static int apply_functions(SectionReader r, SectionReader *inlined, SectionReader *lines, Profile *p)
{
        const char *module, *name;
        size_t n, n_inlined = 0, n_lines = 0;
        uint32_t next_inlined = UINT32_MAX, next_line = UINT32_MAX, line = 0;
        int k;

        /* DINL's and DLIN's ids ascend (checked): the next one, and how many are left with it. */
        if (inlined) {
                n_inlined = section_read_u32(inlined);
                if (n_inlined > 0)
                        next_inlined = section_read_u32(inlined);
        }
        if (lines) {
                n_lines = section_read_u32(lines);
                if (n_lines > 0) {
                        next_line = section_read_u32(lines);
                        line = section_read_u32(lines);
                }
        }
        k = section_read_count(&r, 2 * STRING_MIN_SIZE, &n);
        if (k < 0)
                return k;
        for (size_t i = 0; i < n; i++) {
                uint32_t id;

                k = section_read_string(&r, SECTION_STRING_MAX, false, &module);
                if (k >= 0)
                        k = section_read_string(&r, SECTION_STRING_MAX, false, &name);
                if (k < 0)
                        return k;
                k = profile_function_append(p, module, name, p->n_functions == next_inlined,
                                            p->n_functions == next_line ? line : 0, &id);
                if (k >= 0 && id == next_inlined)
                        next_inlined = --n_inlined > 0 ? section_read_u32(inlined) : UINT32_MAX;
                if (k >= 0 && id == next_line) {
                        next_line = --n_lines > 0 ? section_read_u32(lines) : UINT32_MAX;
                        line = n_lines > 0 ? section_read_u32(lines) : 0;
                }
                if (k == -EEXIST)
                        return section_fail(&r, "the same function twice");
                if (k == -ENOENT)
                        return section_fail(&r, "a line of a function that does not exist");
                if (k < 0)
                        return k;
                /* The fold row of the function limit is only ever made as such (see profile-serialize.c). */
                if (p->other_id == UINT32_MAX && strcmp(module, PROFILE_OTHER) == 0 && strcmp(name, PROFILE_OTHER) == 0)
                        p->other_id = id;
        }
        return 0;
}

static int apply_mangled(SectionReader r, Profile *p)
{
        const char *mangled;
        size_t n;
        int k;

        k = section_read_count(&r, sizeof(uint32_t) + STRING_MIN_SIZE, &n);
        if (k < 0)
                return k;
        for (size_t i = 0; i < n; i++) {
                uint32_t id = section_read_u32(&r);

                k = section_read_string(&r, SECTION_STRING_MAX, false, &mangled);
                if (k < 0)
                        return k;
                if (p->functions[id]->mangled || id == p->other_id || id == p->unknown_id)
                        return section_fail(&r, "a second mangled name of a function");
                k = profile_set_mangled(p, id, mangled);
                if (k < 0)
                        return k;
        }
        return 0;
}

static int apply_stacks(SectionReader r, Profile *p)
{
        _cleanup_free_ uint32_t *frames = malloc(STACK_FRAMES_MAX * sizeof(uint32_t));
        size_t n;
        int k;

        if (!frames)
                return -ENOMEM;
        k = section_read_count(&r, 2 * sizeof(uint32_t), &n);
        if (k < 0)
                return k;
        for (size_t i = 0; i < n; i++) {
                uint32_t n_frames = section_read_u32(&r), n_kernel = section_read_u32(&r);
                Stack *stack;

                for (uint32_t j = 0; j < n_frames; j++)
                        frames[j] = section_read_u32(&r);
                k = profile_stack_insert(p, frames, n_frames, n_kernel, &stack);
                if (k == -EEXIST)
                        return section_fail(&r, "the same stack twice");
                if (k < 0)
                        return k;
        }
        return 0;
}

static int apply_entries(SectionReader r, Profile *p)
{
        size_t n;
        int k;

        k = section_read_count(&r, 3 * sizeof(uint32_t) + VALUES_SIZE, &n);
        if (k < 0)
                return k;
        for (size_t i = 0; i < n; i++) {
                ProfileCounts c = {};

                /* One field after the other: an initializer list has no order of evaluation. */
                c.stack_id = section_read_u32(&r);
                c.tid = section_read_u32(&r);
                c.n_kernel_frames = section_read_u32(&r);
                read_values(&r, &c.values);
                k = profile_add_counts(p, &c);
                if (k < 0)
                        return k == -EINVAL ? section_fail(&r, "counts that do not fit their stack") : k;
        }
        return 0;
}

static int apply_other(SectionReader r, Profile *p)
{
        _cleanup_free_ uint32_t *frames = malloc(STACK_FRAMES_MAX * sizeof(uint32_t));
        size_t n;
        int k;

        if (!frames)
                return -ENOMEM;
        k = section_read_count(&r, 3 * sizeof(uint32_t) + VALUES_SIZE, &n);
        if (k < 0)
                return k;
        for (size_t i = 0; i < n; i++) {
                ProfileCounts c = { .stack_id = PROFILE_STACK_OTHER, .frames = frames };

                c.tid = section_read_u32(&r);
                c.n_frames = section_read_u32(&r);
                c.n_kernel_frames = section_read_u32(&r);
                read_values(&r, &c.values);
                for (size_t j = 0; j < c.n_frames; j++)
                        frames[j] = section_read_u32(&r);
                k = profile_add_counts(p, &c);
                if (k < 0)
                        return k == -EINVAL ? section_fail(&r, "counts that do not fit their stack") : k;
        }
        return 0;
}

static int apply_threads(SectionReader r, Profile *p)
{
        const char *name;
        size_t n;
        int k;

        k = section_read_count(&r, 2 * sizeof(uint32_t), &n);
        if (k < 0)
                return k;
        for (size_t i = 0; i < n; i++) {
                uint32_t tid = section_read_u32(&r);

                k = section_read_string(&r, THREAD_NAME_MAX, true, &name);
                if (k < 0)
                        return k;
                k = profile_thread_rename(p, tid, name);
                if (k == -ENOENT)
                        return section_fail(&r, "a thread the delta does not count");
                if (k < 0)
                        return k;
        }
        return 0;
}

int profile_delta_apply(SectionReader *list, Profile *p)
{
        _cleanup_(parsed_done) Parsed x = {};
        int k;

        assert(list);
        assert(p);

        x = (Parsed) { .n_functions = p->n_functions, .n_stacks = p->n_stacks };
        k = gather(list, &x);
        if (k >= 0)
                k = check_header(x.sections[SECTION_HEADER], p);
        if (k >= 0)
                k = check_functions(x.sections[SECTION_FUNCTIONS], &x);
        if (k >= 0)
                k = check_inlined(x.sections[SECTION_INLINED], &x, p);
        if (k >= 0)
                k = check_lines(x.sections[SECTION_LINES], &x, p);
        if (k >= 0)
                k = check_mangled(x.sections[SECTION_MANGLED], &x);
        if (k >= 0)
                k = check_stacks(x.sections[SECTION_STACKS], &x);
        if (k >= 0)
                k = check_threads(x.sections[SECTION_THREADS], &x);
        if (k >= 0)
                k = check_entries(x.sections[SECTION_ENTRIES], &x, p);
        if (k >= 0)
                k = check_other(x.sections[SECTION_OTHER], &x);
        if (k >= 0)
                k = check_threads_counted(list, &x, p);
        if (k < 0)
                return k;

        /* Definitions first, as the samples that made them came before their counts; then the counts, which
         * make the threads; then the threads' names as they were at the end. */
        if (x.seen[SECTION_FUNCTIONS])
                k = apply_functions(x.sections[SECTION_FUNCTIONS],
                                    x.seen[SECTION_INLINED] ? &x.sections[SECTION_INLINED] : NULL,
                                    x.seen[SECTION_LINES] ? &x.sections[SECTION_LINES] : NULL, p);
        if (k >= 0 && x.seen[SECTION_MANGLED])
                k = apply_mangled(x.sections[SECTION_MANGLED], p);
        if (k >= 0 && x.seen[SECTION_STACKS])
                k = apply_stacks(x.sections[SECTION_STACKS], p);
        if (k >= 0 && x.seen[SECTION_ENTRIES])
                k = apply_entries(x.sections[SECTION_ENTRIES], p);
        if (k >= 0 && x.seen[SECTION_OTHER])
                k = apply_other(x.sections[SECTION_OTHER], p);
        if (k >= 0 && x.seen[SECTION_THREADS])
                k = apply_threads(x.sections[SECTION_THREADS], p);
        return k;
}
