/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <assert.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "hashmap.h"
#include "profile-delta.h"
#include "profile-internal.h"

#define TAG_HEADER SECTION_TAG('D', 'H', 'D', 'R')
#define TAG_FUNCTIONS SECTION_TAG('D', 'F', 'U', 'N')
#define TAG_MANGLED SECTION_TAG('D', 'M', 'N', 'G')
#define TAG_STACKS SECTION_TAG('D', 'S', 'T', 'K')
#define TAG_THREADS SECTION_TAG('D', 'T', 'H', 'R')
#define TAG_ENTRIES SECTION_TAG('D', 'E', 'N', 'T')
#define TAG_OTHER SECTION_TAG('D', 'O', 'T', 'H')

enum { SECTION_HEADER, SECTION_FUNCTIONS, SECTION_MANGLED, SECTION_STACKS, SECTION_THREADS, SECTION_ENTRIES,
       SECTION_OTHER, _SECTION_MAX };
static const uint32_t section_tags[_SECTION_MAX] = { TAG_HEADER,  TAG_FUNCTIONS, TAG_MANGLED, TAG_STACKS,
                                                     TAG_THREADS, TAG_ENTRIES,   TAG_OTHER };

#define VALUES_SIZE (4 * sizeof(uint64_t))
#define STRING_MIN_SIZE (sizeof(uint32_t) + 1)
/* As profile-serialize.c: no sample is deeper, no thread name longer. */
#define STACK_FRAMES_MAX 4096
#define THREAD_NAME_MAX 255

/* One (stack, thread, kernel frames): what its samples added. An entry of the other stack keeps its frames in
 * the delta's frame pool. */
typedef struct Entry {
        uint32_t stack_id;
        uint32_t tid;
        uint32_t n_kernel_frames;
        uint32_t n_frames;      /* other-stack entries */
        uint32_t slot;          /* its place in slots: a new delta frees only the slots in use */
        size_t frames_offset;   /* other-stack entries, into frames */
        ProfileValues values;
} Entry;

struct ProfileDelta {
        /* Where the profile was at the beginning and at the end. */
        uint32_t frequency;
        size_t first_function, end_function;
        size_t first_stack, end_stack;
        size_t first_mangled, end_mangled;

        Entry *entries;
        size_t n_entries, allocated_entries;
        uint32_t *slots; /* open addressing: entry index + 1, 0 for a free slot */
        size_t n_slots;  /* a power of two, at least twice n_entries */
        uint32_t *frames;
        size_t n_frames, allocated_frames;
        uint32_t *canonical; /* an other-stack sample's frames, made canonical */
        size_t allocated_canonical;
        /* The functions seen in one part of those frames: open addressing, a slot taken when its generation is
         * the current one, so that nothing needs clearing between parts. Kept apart from the profile's Functions,
         * whose memory a lookup would drag into the cache a frame at a time. */
        struct SeenSlot {
                uint32_t id;
                uint32_t generation;
        } *seen;
        size_t n_seen; /* a power of two, at least twice the frames of a part */
        uint32_t seen_generation;
        uint64_t lost;
};

int profile_delta_new(ProfileDelta **ret)
{
        ProfileDelta *d;

        assert(ret);

        d = calloc(1, sizeof(*d));
        if (!d)
                return -ENOMEM;
        *ret = d;
        return 0;
}

ProfileDelta *profile_delta_free(ProfileDelta *d)
{
        if (!d)
                return NULL;
        free(d->entries);
        free(d->slots);
        free(d->frames);
        free(d->canonical);
        free(d->seen);
        free(d);
        return NULL;
}

void profile_delta_begin(ProfileDelta *d, const Profile *p)
{
        assert(d);
        assert(p);

        d->frequency = p->frequency;
        d->first_function = d->end_function = p->n_functions;
        d->first_stack = d->end_stack = p->n_stacks;
        d->first_mangled = d->end_mangled = p->n_mangled_log;
        for (size_t i = 0; i < d->n_entries; i++)
                d->slots[d->entries[i].slot] = 0;
        d->n_entries = 0;
        d->n_frames = 0;
        d->lost = 0;
}

void profile_delta_end(ProfileDelta *d, const Profile *p)
{
        assert(d);
        assert(p);

        d->end_function = p->n_functions;
        d->end_stack = p->n_stacks;
        d->end_mangled = p->n_mangled_log;
}

bool profile_delta_empty(const ProfileDelta *d)
{
        return d->n_entries == 0 && d->end_function == d->first_function && d->end_stack == d->first_stack &&
               d->end_mangled == d->first_mangled;
}

size_t profile_delta_n_entries(const ProfileDelta *d)
{
        return d->n_entries;
}

uint64_t profile_delta_lost(const ProfileDelta *d)
{
        return d->lost;
}

static uint64_t entry_hash(uint32_t stack_id, uint32_t tid, uint32_t n_kernel_frames, const uint32_t *frames,
                           size_t n_frames)
{
        uint64_t h = hash_u64((uint64_t)stack_id << 32 | tid) ^ n_kernel_frames;

        if (stack_id == PROFILE_STACK_OTHER)
                h = hash_bytes(frames, n_frames * sizeof(uint32_t), h);
        return h;
}

static bool entry_matches(const ProfileDelta *d, const Entry *e, uint32_t stack_id, uint32_t tid,
                          uint32_t n_kernel_frames, const uint32_t *frames, size_t n_frames)
{
        if (e->stack_id != stack_id || e->tid != tid || e->n_kernel_frames != n_kernel_frames)
                return false;
        if (stack_id != PROFILE_STACK_OTHER)
                return true;
        return e->n_frames == n_frames &&
               (n_frames == 0 || memcmp(d->frames + e->frames_offset, frames, n_frames * sizeof(uint32_t)) == 0);
}

static int grow_slots(ProfileDelta *d)
{
        size_t n = MAX(d->n_slots * 2, (size_t)256);
        uint32_t *slots = calloc(n, sizeof(uint32_t));

        if (!slots)
                return -ENOMEM;
        for (size_t i = 0; i < d->n_entries; i++) {
                Entry *e = d->entries + i;
                const uint32_t *frames = e->n_frames > 0 ? d->frames + e->frames_offset : NULL;
                size_t k = entry_hash(e->stack_id, e->tid, e->n_kernel_frames, frames, e->n_frames) & (n - 1);

                while (slots[k])
                        k = (k + 1) & (n - 1);
                slots[k] = (uint32_t)i + 1;
                e->slot = (uint32_t)k;
        }
        free(d->slots);
        d->slots = slots;
        d->n_slots = n;
        return 0;
}

static Entry *new_entry(ProfileDelta *d, size_t slot, uint32_t stack_id, uint32_t tid, uint32_t n_kernel_frames,
                        const uint32_t *frames, size_t n_frames)
{
        Entry *e;

        if (d->n_entries == d->allocated_entries) {
                size_t n = MAX(d->allocated_entries * 2, (size_t)128);
                Entry *a = realloc(d->entries, n * sizeof(Entry));
                if (!a)
                        return NULL;
                d->entries = a;
                d->allocated_entries = n;
        }
        e = d->entries + d->n_entries;
        *e = (Entry){ .stack_id = stack_id, .tid = tid, .n_kernel_frames = n_kernel_frames, .slot = (uint32_t)slot };
        if (stack_id == PROFILE_STACK_OTHER) {
                if (d->n_frames + n_frames > d->allocated_frames) {
                        size_t n = MAX(d->allocated_frames * 2, MAX(d->n_frames + n_frames, (size_t)1024));
                        uint32_t *a = realloc(d->frames, n * sizeof(uint32_t));
                        if (!a)
                                return NULL;
                        d->frames = a;
                        d->allocated_frames = n;
                }
                if (n_frames > 0)
                        memcpy(d->frames + d->n_frames, frames, n_frames * sizeof(uint32_t));
                e->frames_offset = d->n_frames;
                e->n_frames = (uint32_t)n_frames;
                d->n_frames += n_frames;
        }
        d->slots[slot] = (uint32_t)++d->n_entries;
        return e;
}

/* Whether id is new in the current generation of the seen set (and now in it). */
static bool seen_first(ProfileDelta *d, uint32_t id)
{
        size_t mask = d->n_seen - 1;

        for (size_t k = (size_t)(hash_u64(id) & mask);; k = (k + 1) & mask) {
                struct SeenSlot *s = d->seen + k;

                if (s->generation != d->seen_generation) {
                        *s = (struct SeenSlot){ .id = id, .generation = d->seen_generation };
                        return true;
                }
                if (s->id == id)
                        return false;
        }
}

/* Into out: the frames' leaf, then the other distinct functions of their part by id (a short list: an insertion
 * sort); n at most n_frames. */
static size_t distinct_part(ProfileDelta *d, const uint32_t *frames, size_t n_frames, uint32_t *out)
{
        size_t n = 0;

        if (++d->seen_generation == 0) {
                memset(d->seen, 0, d->n_seen * sizeof(*d->seen));
                d->seen_generation = 1;
        }
        for (size_t i = 0; i < n_frames; i++) {
                size_t j;

                if (!seen_first(d, frames[i]))
                        continue;
                /* The leaf first; the others after it, by id. */
                for (j = n; j > 1 && out[j - 1] > frames[i]; j--)
                        out[j] = out[j - 1];
                out[n == 0 ? 0 : j] = frames[i];
                n++;
        }
        return n;
}

/* What counting reads of an other-stack sample's frames (see profile-delta.h), in a canonical order. */
static size_t canonical_frames(ProfileDelta *d, const ProfileSample *s, uint32_t *out, uint32_t *ret_n_kernel)
{
        size_t n_kernel = distinct_part(d, s->frames, s->n_kernel_frames, out);

        *ret_n_kernel = (uint32_t)n_kernel;
        if (s->n_frames == s->n_kernel_frames)
                return n_kernel; /* frames may be NULL, and NULL + 0 is undefined */
        return n_kernel + distinct_part(d, s->frames + s->n_kernel_frames, s->n_frames - s->n_kernel_frames,
                                        out + n_kernel);
}

/* Room for an other-stack sample of n_frames: the canonical frames, and a seen set at most half full. */
static int reserve_canonical(ProfileDelta *d, size_t n_frames)
{
        size_t seen = 64;

        if (n_frames > d->allocated_canonical) {
                size_t n = MAX(n_frames, (size_t)128);
                uint32_t *a = realloc(d->canonical, n * sizeof(uint32_t));
                if (!a)
                        return -ENOMEM;
                d->canonical = a;
                d->allocated_canonical = n;
        }
        while (seen < 2 * n_frames)
                seen *= 2;
        if (seen > d->n_seen) {
                struct SeenSlot *a = calloc(seen, sizeof(*a));
                if (!a)
                        return -ENOMEM;
                free(d->seen);
                d->seen = a;
                d->n_seen = seen;
                d->seen_generation = 0;
        }
        return 0;
}

int profile_delta_add(ProfileDelta *d, const ProfileSample *s, uint32_t stack_id)
{
        const uint32_t *frames;
        size_t n_frames, mask, k;
        uint32_t n_kernel;
        Entry *e = NULL;

        assert(d);
        assert(s);

        n_kernel = (uint32_t)s->n_kernel_frames;
        frames = s->frames;
        n_frames = s->n_frames;

        if (_unlikely_(2 * (d->n_entries + 1) > d->n_slots) &&
            (d->n_entries >= UINT32_MAX / 4 || grow_slots(d) < 0)) {
                d->lost++;
                return -ENOMEM;
        }
        if (_unlikely_(stack_id == PROFILE_STACK_OTHER)) {
                if (reserve_canonical(d, n_frames) < 0) {
                        d->lost++;
                        return -ENOMEM;
                }
                n_frames = canonical_frames(d, s, d->canonical, &n_kernel);
                frames = d->canonical;
        }
        mask = d->n_slots - 1;
        for (k = entry_hash(stack_id, s->tid, n_kernel, frames, n_frames) & mask; d->slots[k]; k = (k + 1) & mask) {
                Entry *x = d->entries + d->slots[k] - 1;
                if (entry_matches(d, x, stack_id, s->tid, n_kernel, frames, n_frames)) {
                        e = x;
                        break;
                }
        }
        if (!e) {
                e = new_entry(d, k, stack_id, s->tid, n_kernel, frames, n_frames);
                if (!e) {
                        d->lost++;
                        return -ENOMEM;
                }
        }
        switch (s->kind) {
        case PROFILE_SAMPLE_USER:
                e->values.user_samples++;
                break;
        case PROFILE_SAMPLE_KERNEL:
                e->values.kernel_samples++;
                break;
        case PROFILE_SAMPLE_BLOCKED:
                e->values.blocked_ns += s->duration_ns;
                break;
        case PROFILE_SAMPLE_PREEMPTED:
                e->values.preempted_ns += s->duration_ns;
                break;
        default:
                break;
        }
        return 0;
}

static void write_values(SectionWriter *w, const ProfileValues *v)
{
        section_write_u64(w, v->user_samples);
        section_write_u64(w, v->kernel_samples);
        section_write_u64(w, v->blocked_ns);
        section_write_u64(w, v->preempted_ns);
}

static int compare_u32(const void *a, const void *b)
{
        uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
        return x < y ? -1 : x > y;
}

static void write_threads(const ProfileDelta *d, const Profile *p, SectionWriter *w)
{
        _cleanup_free_ uint32_t *tids = malloc(MAX(d->n_entries, (size_t)1) * sizeof(uint32_t));
        size_t n = 0, s;

        if (!tids) {
                w->error = w->error ?: -ENOMEM;
                return;
        }
        for (size_t i = 0; i < d->n_entries; i++)
                tids[i] = d->entries[i].tid;
        qsort(tids, d->n_entries, sizeof(uint32_t), compare_u32);
        for (size_t i = 0; i < d->n_entries; i++)
                if (n == 0 || tids[n - 1] != tids[i])
                        tids[n++] = tids[i];

        s = section_begin(w, TAG_THREADS, SECTION_REQUIRED);
        section_write_u32(w, (uint32_t)n);
        for (size_t i = 0; i < n; i++) {
                const char *name = NULL;
                (void)profile_thread_name(p, tids[i], &name); /* every entry's thread was counted */
                section_write_u32(w, tids[i]);
                section_write_string(w, name);
        }
        section_end(w, s);
}

void profile_delta_write(const ProfileDelta *d, const Profile *p, SectionWriter *w)
{
        size_t s, n_other = 0;

        assert(d);
        assert(p);
        assert(w);

        s = section_begin(w, TAG_HEADER, SECTION_REQUIRED);
        section_write_u32(w, d->frequency);
        section_write_u32(w, (uint32_t)d->first_function);
        section_write_u32(w, (uint32_t)d->first_stack);
        section_end(w, s);

        if (d->end_function > d->first_function) {
                s = section_begin(w, TAG_FUNCTIONS, SECTION_REQUIRED);
                section_write_u32(w, (uint32_t)(d->end_function - d->first_function));
                for (size_t i = d->first_function; i < d->end_function; i++) {
                        const Function *f = p->functions[i];
                        section_write_string(w, p->modules[f->key.module_id]->name);
                        section_write_string(w, f->name);
                }
                section_end(w, s);
        }
        if (d->end_mangled > d->first_mangled) {
                s = section_begin(w, TAG_MANGLED, SECTION_REQUIRED);
                section_write_u32(w, (uint32_t)(d->end_mangled - d->first_mangled));
                for (size_t i = d->first_mangled; i < d->end_mangled; i++) {
                        uint32_t id = p->mangled_log[i];
                        section_write_u32(w, id);
                        section_write_string(w, p->functions[id]->mangled);
                }
                section_end(w, s);
        }
        if (d->end_stack > d->first_stack) {
                s = section_begin(w, TAG_STACKS, SECTION_REQUIRED);
                section_write_u32(w, (uint32_t)(d->end_stack - d->first_stack));
                for (size_t i = d->first_stack; i < d->end_stack; i++) {
                        const Stack *stack = p->stack_by_id[i];
                        section_write_u32(w, stack->key.n_frames);
                        section_write_u32(w, stack->n_kernel_frames);
                        for (uint32_t j = 0; j < stack->key.n_frames; j++)
                                section_write_u32(w, stack->frames[j]);
                }
                section_end(w, s);
        }
        if (d->n_entries == 0)
                return;

        write_threads(d, p, w);
        s = section_begin(w, TAG_ENTRIES, SECTION_REQUIRED);
        for (size_t i = 0; i < d->n_entries; i++)
                n_other += d->entries[i].stack_id == PROFILE_STACK_OTHER;
        section_write_u32(w, (uint32_t)(d->n_entries - n_other));
        for (size_t i = 0; i < d->n_entries; i++) {
                const Entry *e = d->entries + i;
                if (e->stack_id == PROFILE_STACK_OTHER)
                        continue;
                section_write_u32(w, e->stack_id);
                section_write_u32(w, e->tid);
                section_write_u32(w, e->n_kernel_frames);
                write_values(w, &e->values);
        }
        section_end(w, s);
        if (n_other == 0)
                return;
        s = section_begin(w, TAG_OTHER, SECTION_REQUIRED);
        section_write_u32(w, (uint32_t)n_other);
        for (size_t i = 0; i < d->n_entries; i++) {
                const Entry *e = d->entries + i;
                if (e->stack_id != PROFILE_STACK_OTHER)
                        continue;
                section_write_u32(w, e->tid);
                section_write_u32(w, e->n_frames);
                section_write_u32(w, e->n_kernel_frames);
                write_values(w, &e->values);
                for (uint32_t j = 0; j < e->n_frames; j++)
                        section_write_u32(w, d->frames[e->frames_offset + j]);
        }
        section_end(w, s);
}

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
        Section s;
        int k;

        while ((k = section_next(list, &s)) > 0) {
                size_t i = 0;

                while (i < _SECTION_MAX && section_tags[i] != s.tag)
                        i++;
                if (i == _SECTION_MAX) {
                        k = section_skip(&s);
                        if (k < 0)
                                return k;
                        continue;
                }
                if (x->seen[i])
                        return section_fail(list, "a delta section twice");
                x->seen[i] = true;
                x->sections[i] = s.contents;
        }
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
        const uint32_t *found = x->n_tids > 0 ? bsearch(&tid, x->tids, x->n_tids, sizeof(uint32_t), compare_u32)
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

static int apply_functions(SectionReader r, Profile *p)
{
        const char *module, *name;
        size_t n;
        int k;

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
                k = profile_function_append(p, module, name, &id);
                if (k == -EEXIST)
                        return section_fail(&r, "the same function twice");
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
                k = apply_functions(x.sections[SECTION_FUNCTIONS], p);
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
