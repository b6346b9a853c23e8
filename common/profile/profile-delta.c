/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <assert.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "hashmap.h"
#include "profile-delta-format.h"
#include "profile-delta.h"
#include "profile-internal.h"

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

uint32_t profile_delta_frequency(const ProfileDelta *d)
{
        return d->frequency;
}

void profile_delta_entry(const ProfileDelta *d, size_t i, ProfileDeltaEntry *ret)
{
        const Entry *e;

        assert(d);
        assert(i < d->n_entries);
        assert(ret);

        e = d->entries + i;
        *ret = (ProfileDeltaEntry){
                .stack_id = e->stack_id,
                .tid = e->tid,
                .n_kernel_frames = e->n_kernel_frames,
                .n_frames = e->n_frames,
                .frames = e->n_frames > 0 ? d->frames + e->frames_offset : NULL,
                .values = e->values,
        };
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

/* The entry of (stack, thread, kernel frames, and for the other stack its canonical frames), created if new;
 * NULL when out of memory. The slots must have room for one more. */
static Entry *find_entry(ProfileDelta *d, uint32_t stack_id, uint32_t tid, uint32_t n_kernel, const uint32_t *frames,
                         size_t n_frames)
{
        size_t mask = d->n_slots - 1, k;

        for (k = entry_hash(stack_id, tid, n_kernel, frames, n_frames) & mask; d->slots[k]; k = (k + 1) & mask) {
                Entry *x = d->entries + d->slots[k] - 1;
                if (entry_matches(d, x, stack_id, tid, n_kernel, frames, n_frames))
                        return x;
        }
        return new_entry(d, k, stack_id, tid, n_kernel, frames, n_frames);
}

static int reserve_entry(ProfileDelta *d)
{
        if (_unlikely_(2 * (d->n_entries + 1) > d->n_slots) &&
            (d->n_entries >= UINT32_MAX / 4 || grow_slots(d) < 0))
                return -ENOMEM;
        return 0;
}

int profile_delta_add(ProfileDelta *d, const ProfileSample *s, uint32_t stack_id)
{
        const uint32_t *frames;
        size_t n_frames;
        uint32_t n_kernel;
        Entry *e;

        assert(d);
        assert(s);

        n_kernel = (uint32_t)s->n_kernel_frames;
        frames = s->frames;
        n_frames = s->n_frames;

        if (reserve_entry(d) < 0) {
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
        e = find_entry(d, stack_id, s->tid, n_kernel, frames, n_frames);
        if (!e) {
                d->lost++;
                return -ENOMEM;
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

int profile_delta_add_entry(ProfileDelta *d, const ProfileDeltaEntry *add)
{
        Entry *e;

        assert(d);
        assert(add);

        if (reserve_entry(d) < 0)
                return -ENOMEM;
        e = find_entry(d, add->stack_id, add->tid, add->n_kernel_frames, add->frames,
                       add->stack_id == PROFILE_STACK_OTHER ? add->n_frames : 0);
        if (!e)
                return -ENOMEM;
        profile_values_add(&e->values, &add->values);
        return 0;
}

static void write_values(SectionWriter *w, const ProfileValues *v)
{
        section_write_u64(w, v->user_samples);
        section_write_u64(w, v->kernel_samples);
        section_write_u64(w, v->blocked_ns);
        section_write_u64(w, v->preempted_ns);
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
        qsort(tids, d->n_entries, sizeof(uint32_t), delta_compare_u32);
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

/* DINL: which of the new functions are inlined frames (a row apart from the function called: profile.h); an
 * older vprofd refuses such a delta rather than replay them as called functions. */
static void write_inlined(const ProfileDelta *d, const Profile *p, SectionWriter *w)
{
        uint32_t n = 0;
        size_t s;

        for (size_t i = d->first_function; i < d->end_function; i++)
                n += p->functions[i]->key.inlined;
        if (n == 0)
                return;
        s = section_begin(w, TAG_INLINED, SECTION_REQUIRED);
        section_write_u32(w, n);
        for (size_t i = d->first_function; i < d->end_function; i++)
                if (p->functions[i]->key.inlined)
                        section_write_u32(w, (uint32_t)i);
        section_end(w, s);
}

/* DLIN: which of the new functions are lines of a function, and their lines; an older vprofd refuses such a
 * delta rather than replay them as functions of their own. */
static void write_lines(const ProfileDelta *d, const Profile *p, SectionWriter *w)
{
        uint32_t n = 0;
        size_t s;

        for (size_t i = d->first_function; i < d->end_function; i++)
                n += p->functions[i]->key.line > 0;
        if (n == 0)
                return;
        s = section_begin(w, TAG_LINES, SECTION_REQUIRED);
        section_write_u32(w, n);
        for (size_t i = d->first_function; i < d->end_function; i++)
                if (p->functions[i]->key.line > 0) {
                        section_write_u32(w, (uint32_t)i);
                        section_write_u32(w, p->functions[i]->key.line);
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
                write_inlined(d, p, w);
                write_lines(d, p, w);
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
