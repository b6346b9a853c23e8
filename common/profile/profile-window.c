/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The ring of per-second buckets (profile-window.h). A second is pushed once, when the daemon closes it; a query
 * decodes the buckets of its window. Nothing here runs per sample. */
#include <assert.h>
#include <errno.h>
#include <stdlib.h>

#include "profile-internal.h"
#include "profile-window.h"

/* A bucket's encoding: its entries sorted by stack id, each a few varints (LEB128), most of them a byte, where
 * the delta's record takes 44 bytes:
 *
 *   varint n entries | varint n other-stack entries | values (the bucket's totals)
 *   entry*        varint stack id - previous | zigzag varint tid - previous | values
 *   other entry*  varint n frames | zigzag varint tid - previous | values | n × varint function id
 *   values        byte: bits 0-3 which of user, kernel, blocked, preempted follow, bits 4-7 the kernel frames
 *                 (15: a varint of the kernel frames - 15 follows) | a varint of each value present
 *
 * The totals' values byte has no kernel frames. An empty second has no encoding at all. */

#define KERNEL_NIBBLE_ESCAPE 15

typedef struct Bucket {
        uint64_t start_usec, end_usec;
        uint8_t *data; /* NULL for a second without entries */
        uint32_t size;
        bool inexact;
} Bucket;

struct ProfileWindow {
        uint32_t max_seconds;
        size_t max_bytes;
        uint32_t frequency; /* of the buckets held; 0 when empty */

        Bucket *ring; /* allocated slots, the oldest at head */
        uint32_t allocated, head, n;
        size_t data_bytes; /* the encoded entries of the buckets held */
        uint64_t generation; /* profile_window_generation() */
};

/* Every window's every state gets a number no other has had, so that a count of windows can be known unchanged
 * by their numbers alone (a cache of windowed views), with no pointer that a freed window's successor could
 * reuse. */
static uint64_t next_generation(void)
{
        static uint64_t last;

        return __atomic_add_fetch(&last, 1, __ATOMIC_RELAXED);
}

uint64_t profile_window_generation(const ProfileWindow *w)
{
        assert(w);
        return w->generation;
}

int profile_window_new(uint32_t max_seconds, size_t max_bytes, ProfileWindow **ret)
{
        ProfileWindow *w;

        assert(ret);

        if (max_seconds == 0)
                return -EINVAL;
        w = calloc(1, sizeof(*w));
        if (!w)
                return -ENOMEM;
        w->max_seconds = max_seconds;
        w->max_bytes = max_bytes;
        w->generation = next_generation();
        *ret = w;
        return 0;
}

static Bucket *bucket_at(const ProfileWindow *w, uint32_t i)
{
        /* i counts from the oldest. */
        return w->ring + (w->head + i) % w->allocated;
}

void profile_window_clear(ProfileWindow *w)
{
        assert(w);

        for (uint32_t i = 0; i < w->n; i++)
                free(bucket_at(w, i)->data);
        free(w->ring);
        w->ring = NULL;
        w->allocated = w->head = w->n = 0;
        w->data_bytes = 0;
        w->frequency = 0;
        w->generation = next_generation();
}

ProfileWindow *profile_window_free(ProfileWindow *w)
{
        if (!w)
                return NULL;
        profile_window_clear(w);
        free(w);
        return NULL;
}

size_t profile_window_bytes(const ProfileWindow *w)
{
        return sizeof(*w) + (size_t)w->allocated * sizeof(Bucket) + w->data_bytes;
}

uint32_t profile_window_n_buckets(const ProfileWindow *w)
{
        return w->n;
}

/* Encoding: into room for the most the entries can take, then cut to what they took, so that a bucket holds its
 * bytes and nothing more, and nothing is kept from one second to the next. */

/* Bytes at most: a varint of 32 bits, of 64; an entry's values (their byte, the kernel frames, four values). */
#define VARINT32_MAX 5
#define VARINT64_MAX 10
#define VALUES_MAX (1 + VARINT32_MAX + 4 * VARINT64_MAX)

typedef struct Out {
        uint8_t *data;
        size_t n;
} Out;

static void put_byte(Out *o, uint8_t b)
{
        o->data[o->n++] = b;
}

static void put_varint(Out *o, uint64_t v)
{
        while (v >= 0x80) {
                put_byte(o, (uint8_t)(v | 0x80));
                v >>= 7;
        }
        put_byte(o, (uint8_t)v);
}

static uint64_t zigzag(uint32_t now, uint32_t previous)
{
        int64_t d = (int64_t)now - (int64_t)previous;
        return d >= 0 ? (uint64_t)d << 1 : ((uint64_t)(-d) << 1) - 1;
}

static void put_values(Out *o, const ProfileValues *v, uint32_t n_kernel_frames)
{
        uint8_t mask = (uint8_t)((v->user_samples ? 1 : 0) | (v->kernel_samples ? 2 : 0) | (v->blocked_ns ? 4 : 0) |
                                 (v->preempted_ns ? 8 : 0));

        put_byte(o, (uint8_t)(mask | MIN(n_kernel_frames, (uint32_t)KERNEL_NIBBLE_ESCAPE) << 4));
        if (n_kernel_frames >= KERNEL_NIBBLE_ESCAPE)
                put_varint(o, n_kernel_frames - KERNEL_NIBBLE_ESCAPE);
        if (v->user_samples)
                put_varint(o, v->user_samples);
        if (v->kernel_samples)
                put_varint(o, v->kernel_samples);
        if (v->blocked_ns)
                put_varint(o, v->blocked_ns);
        if (v->preempted_ns)
                put_varint(o, v->preempted_ns);
}

typedef struct SortKey {
        uint32_t stack_id; /* the other stack's id is the largest: its entries come last */
        uint32_t index;    /* of the entry in the delta */
} SortKey;

/* keys by stack id, with tmp as room for as many: a radix sort a byte at a time, least significant first,
 * skipping the bytes every key has alike (ids below 65536 take two passes). A second's push sorts its entries
 * once; a comparison sort took more instructions than the rest of the push. */
static SortKey *sort_by_stack(SortKey *keys, SortKey *tmp, size_t n)
{
        uint32_t all_or = 0, all_and = UINT32_MAX;

        for (size_t i = 0; i < n; i++) {
                all_or |= keys[i].stack_id;
                all_and &= keys[i].stack_id;
        }
        for (unsigned shift = 0; shift < 32; shift += 8) {
                size_t count[256] = {}, at = 0;
                SortKey *swap;

                if (((all_or ^ all_and) >> shift & 0xff) == 0)
                        continue;
                for (size_t i = 0; i < n; i++)
                        count[keys[i].stack_id >> shift & 0xff]++;
                for (size_t b = 0; b < 256; b++) {
                        size_t c = count[b];
                        count[b] = at;
                        at += c;
                }
                for (size_t i = 0; i < n; i++)
                        tmp[count[keys[i].stack_id >> shift & 0xff]++] = keys[i];
                swap = keys;
                keys = tmp;
                tmp = swap;
        }
        return keys;
}

static void put_entries(Out *o, const ProfileDelta *d, const SortKey *keys, size_t n, size_t n_other,
                        const ProfileValues *totals)
{
        uint32_t previous_stack = 0, previous_tid = 0;

        put_varint(o, n - n_other);
        put_varint(o, n_other);
        put_values(o, totals, 0);
        for (size_t i = 0; i < n; i++) {
                ProfileDeltaEntry e;

                profile_delta_entry(d, keys[i].index, &e);
                if (e.stack_id != PROFILE_STACK_OTHER) {
                        put_varint(o, e.stack_id - previous_stack);
                        previous_stack = e.stack_id;
                } else
                        put_varint(o, e.n_frames);
                put_varint(o, zigzag(e.tid, previous_tid));
                previous_tid = e.tid;
                put_values(o, &e.values, e.n_kernel_frames);
                for (uint32_t j = 0; j < e.n_frames; j++)
                        put_varint(o, e.frames[j]);
        }
}

/* The entries of d, sorted and encoded, in *ret (NULL and 0 for none). */
static int encode(const ProfileDelta *d, uint8_t **ret, size_t *ret_size)
{
        size_t n = profile_delta_n_entries(d), n_other = 0, bound = 2 * VARINT32_MAX + VALUES_MAX;
        _cleanup_free_ SortKey *room = NULL;
        ProfileValues totals = {};
        SortKey *keys;
        Out o = {};
        uint8_t *data;

        *ret = NULL;
        *ret_size = 0;
        if (n == 0)
                return 0;
        room = malloc(2 * n * sizeof(SortKey));
        if (!room)
                return -ENOMEM;
        for (size_t i = 0; i < n; i++) {
                ProfileDeltaEntry e;

                profile_delta_entry(d, i, &e);
                room[i] = (SortKey){ .stack_id = e.stack_id, .index = (uint32_t)i };
                n_other += e.stack_id == PROFILE_STACK_OTHER;
                profile_values_add(&totals, &e.values);
                bound += 2 * VARINT32_MAX + VALUES_MAX + (size_t)e.n_frames * VARINT32_MAX;
        }
        keys = sort_by_stack(room, room + n, n);
        o.data = malloc(bound);
        if (!o.data)
                return -ENOMEM;
        put_entries(&o, d, keys, n, n_other, &totals);
        assert(o.n <= bound);
        if (o.n > UINT32_MAX) {
                free(o.data);
                return -E2BIG;
        }
        /* Cut to size: a shrinking realloc() keeps the bytes where they are. */
        data = realloc(o.data, o.n);
        *ret = data ?: o.data;
        *ret_size = o.n;
        return 0;
}

/* Room for one more bucket at the end of the ring, growing it up to max_seconds. */
static int ring_reserve(ProfileWindow *w)
{
        uint32_t allocated;
        Bucket *ring;

        if (w->n < w->allocated)
                return 0;
        if (w->allocated >= w->max_seconds)
                return -ENOSPC;
        allocated = (uint32_t)MIN((uint64_t)w->max_seconds, MAX((uint64_t)w->allocated * 2, (uint64_t)16));
        ring = malloc((size_t)allocated * sizeof(Bucket));
        if (!ring)
                return -ENOMEM;
        for (uint32_t i = 0; i < w->n; i++)
                ring[i] = *bucket_at(w, i);
        free(w->ring);
        w->ring = ring;
        w->allocated = allocated;
        w->head = 0;
        return 0;
}

static void drop_oldest(ProfileWindow *w)
{
        Bucket *b = bucket_at(w, 0);

        w->data_bytes -= b->size;
        free(b->data);
        w->head = (w->head + 1) % w->allocated;
        w->n--;
}

/* What the byte bound counts: the headers of n buckets and their encoded entries. */
static size_t held_bytes(uint32_t n, size_t data_bytes)
{
        return (size_t)n * sizeof(Bucket) + data_bytes;
}

int profile_window_push(ProfileWindow *w, const ProfileDelta *d, uint64_t start_usec, uint64_t end_usec)
{
        _cleanup_free_ uint8_t *data = NULL;
        size_t size = 0;
        Bucket *b;
        int r, k;

        assert(w);
        assert(d);

        w->generation = next_generation(); /* whatever follows: a failed push may have dropped buckets */
        if (w->n > 0 && w->frequency != profile_delta_frequency(d))
                return -EINVAL;
        r = encode(d, &data, &size);

        while (w->n > 0 && (w->n >= w->max_seconds ||
                            (w->max_bytes > 0 && held_bytes(w->n + 1, w->data_bytes + size) > w->max_bytes)))
                drop_oldest(w);
        k = ring_reserve(w);
        if (k == -ENOSPC) {
                /* The ring is as long as it may be but the byte bound emptied some of it: reuse a slot. */
                assert(w->n < w->allocated);
                k = 0;
        }
        if (k < 0) {
                /* Not even the slot: the oldest second gives way. */
                if (w->n == 0)
                        return k;
                drop_oldest(w);
                r = k;
        }
        b = w->ring + (w->head + w->n) % w->allocated;
        *b = (Bucket){
                .start_usec = start_usec,
                .end_usec = end_usec,
                .data = TAKE_PTR(data),
                .size = (uint32_t)size,
                .inexact = r < 0 || profile_delta_lost(d) > 0,
        };
        w->n++;
        w->data_bytes += size;
        w->frequency = profile_delta_frequency(d);
        return r;
}

/* Decoding. */

typedef struct Cursor {
        const uint8_t *p, *end;
} Cursor;

static int get_varint(Cursor *c, uint64_t *ret)
{
        uint64_t v = 0;

        for (unsigned shift = 0; shift < 64; shift += 7) {
                uint8_t byte;

                if (c->p >= c->end)
                        return -EBADMSG;
                byte = *c->p++;
                v |= (uint64_t)(byte & 0x7f) << shift;
                if (!(byte & 0x80)) {
                        *ret = v;
                        return 0;
                }
        }
        return -EBADMSG;
}

static int get_u32(Cursor *c, uint32_t *ret)
{
        uint64_t v;
        int r = get_varint(c, &v);

        if (r < 0)
                return r;
        if (v > UINT32_MAX)
                return -EBADMSG;
        *ret = (uint32_t)v;
        return 0;
}

static int get_tid(Cursor *c, uint32_t *previous)
{
        uint64_t z;
        int64_t t;
        int r = get_varint(c, &z);

        if (r < 0)
                return r;
        t = (int64_t)*previous + ((z & 1) ? -(int64_t)((z + 1) >> 1) : (int64_t)(z >> 1));
        if (t < 0 || t > UINT32_MAX)
                return -EBADMSG;
        *previous = (uint32_t)t;
        return 0;
}

static int get_values(Cursor *c, ProfileValues *ret, uint32_t *ret_n_kernel_frames)
{
        uint64_t *fields[] = { &ret->user_samples, &ret->kernel_samples, &ret->blocked_ns, &ret->preempted_ns };
        uint32_t n_kernel;
        uint8_t shape;
        int r;

        if (c->p >= c->end)
                return -EBADMSG;
        shape = *c->p++;
        n_kernel = shape >> 4;
        if (n_kernel == KERNEL_NIBBLE_ESCAPE) {
                uint32_t more;
                r = get_u32(c, &more);
                if (r < 0)
                        return r;
                if (more > UINT32_MAX - KERNEL_NIBBLE_ESCAPE)
                        return -EBADMSG;
                n_kernel += more;
        }
        *ret = (ProfileValues){};
        for (size_t i = 0; i < ELEMENTSOF(fields); i++)
                if (shape & (1u << i)) {
                        r = get_varint(c, fields[i]);
                        if (r < 0)
                                return r;
                }
        if (ret_n_kernel_frames)
                *ret_n_kernel_frames = n_kernel;
        return 0;
}

static int get_header(Cursor *c, uint32_t *ret_n, uint32_t *ret_n_other, ProfileValues *ret_totals)
{
        int r;

        r = get_u32(c, ret_n);
        if (r >= 0)
                r = get_u32(c, ret_n_other);
        if (r >= 0)
                r = get_values(c, ret_totals, NULL);
        return r;
}

/* The buckets [first, end) of a window: its oldest and one past its newest. */
typedef struct Range {
        uint32_t first, end;
} Range;

/* What a range of buckets covers. */
static ProfileWindowSpan span_of(const ProfileWindow *w, Range b)
{
        ProfileWindowSpan span = {};

        if (b.first >= b.end)
                return span;
        span.start_usec = bucket_at(w, b.first)->start_usec;
        span.end_usec = bucket_at(w, b.end - 1)->end_usec;
        span.buckets = b.end - b.first;
        for (uint32_t i = b.first; i < b.end; i++)
                span.inexact = span.inexact || bucket_at(w, i)->inexact;
        return span;
}

/* The newest n_seconds buckets. */
static Range newest(const ProfileWindow *w, uint32_t n_seconds)
{
        return (Range){ n_seconds < w->n ? w->n - n_seconds : 0, w->n };
}

/* The buckets that end after after_usec and no later than until_usec: they end in order. */
static Range ending_between(const ProfileWindow *w, uint64_t after_usec, uint64_t until_usec)
{
        Range b = { w->n, w->n };

        while (b.end > 0 && bucket_at(w, b.end - 1)->end_usec > until_usec)
                b.end--;
        b.first = b.end;
        while (b.first > 0 && bucket_at(w, b.first - 1)->end_usec > after_usec)
                b.first--;
        return b;
}

uint64_t profile_window_end_usec(const ProfileWindow *w)
{
        return w->n > 0 ? bucket_at(w, w->n - 1)->end_usec : 0;
}

/* The bucket's entries added into sum, entry by entry: the same (stack, thread, kernel frames) of many seconds
 * is counted once, with the sum of its values (the counting rules are linear), rather than a stack walk a
 * second. */
static int gather_bucket(const Bucket *b, ProfileDelta *sum)
{
        _cleanup_free_ uint32_t *frames = NULL;
        uint32_t n, n_other, stack_id = 0, tid = 0, allocated = 0;
        ProfileValues totals;
        Cursor c;
        int r;

        if (b->size == 0)
                return 0; /* data is NULL, and NULL + 0 undefined */
        c = (Cursor){ .p = b->data, .end = b->data + b->size };
        r = get_header(&c, &n, &n_other, &totals);
        if (r < 0)
                return r;
        for (uint32_t i = 0; i < n; i++) {
                ProfileDeltaEntry e = {};
                uint32_t step;

                r = get_u32(&c, &step);
                if (r >= 0 && step > PROFILE_STACK_OTHER - 1 - stack_id)
                        r = -EBADMSG;
                if (r >= 0)
                        r = get_tid(&c, &tid);
                if (r >= 0)
                        r = get_values(&c, &e.values, &e.n_kernel_frames);
                if (r < 0)
                        return r;
                stack_id += step;
                e.stack_id = stack_id;
                e.tid = tid;
                r = profile_delta_add_entry(sum, &e);
                if (r < 0)
                        return r;
        }
        for (uint32_t i = 0; i < n_other; i++) {
                ProfileDeltaEntry e = { .stack_id = PROFILE_STACK_OTHER };

                r = get_u32(&c, &e.n_frames);
                if (r >= 0)
                        r = get_tid(&c, &tid);
                if (r >= 0)
                        r = get_values(&c, &e.values, &e.n_kernel_frames);
                if (r < 0)
                        return r;
                /* Each frame takes a byte at least. */
                if (e.n_frames > (size_t)(c.end - c.p))
                        return -EBADMSG;
                if (e.n_frames > allocated) {
                        uint32_t *a = realloc(frames, e.n_frames * sizeof(uint32_t));
                        if (!a)
                                return -ENOMEM;
                        frames = a;
                        allocated = e.n_frames;
                }
                for (uint32_t j = 0; j < e.n_frames; j++) {
                        r = get_u32(&c, &frames[j]);
                        if (r < 0)
                                return r;
                }
                e.tid = tid;
                e.frames = frames;
                r = profile_delta_add_entry(sum, &e);
                if (r < 0)
                        return r;
        }
        return c.p == c.end ? 0 : -EBADMSG;
}

/* The summed entries counted into the translation's profile. */
static int count_entries(const ProfileDelta *sum, ProfileTranslation *t)
{
        for (size_t i = 0; i < profile_delta_n_entries(sum); i++) {
                ProfileDeltaEntry e;
                ProfileCounts counts;
                int r;

                profile_delta_entry(sum, i, &e);
                counts = (ProfileCounts){ .tid = e.tid, .n_kernel_frames = e.n_kernel_frames, .values = e.values };
                if (e.stack_id == PROFILE_STACK_OTHER) {
                        counts.stack_id = PROFILE_STACK_OTHER;
                        counts.n_frames = e.n_frames;
                        r = profile_translate_frames(t, e.frames, e.n_frames, &counts.frames);
                } else {
                        Stack *stack;
                        r = profile_translate_stack(t, e.stack_id, &stack);
                        if (r >= 0)
                                counts.stack_id = stack->id;
                }
                if (r >= 0)
                        r = profile_add_counts(t->dst, &counts);
                if (r < 0)
                        return r;
        }
        return 0;
}

/* A range of buckets counted into dst. */
static int count_range(const ProfileWindow *w, const Profile *base, Range b, Profile *dst,
                       ProfileWindowSpan *ret_span)
{
        _cleanup_(profile_translation_done) ProfileTranslation t = {};
        _cleanup_(profile_delta_freep) ProfileDelta *sum = NULL;
        int r;

        assert(w);
        assert(base);
        assert(dst);

        if (w->n > 0 && w->frequency != base->frequency)
                return -EINVAL;
        r = profile_translation_init(&t, base, dst);
        if (r < 0)
                return r;
        r = profile_delta_new(&sum);
        if (r < 0)
                return r;
        profile_delta_begin(sum, base);
        for (uint32_t i = b.first; i < b.end; i++) {
                r = gather_bucket(bucket_at(w, i), sum);
                if (r < 0)
                        return r;
        }
        r = count_entries(sum, &t);
        if (r < 0)
                return r;
        r = profile_translate_thread_names(&t);
        if (r < 0)
                return r;
        if (ret_span)
                *ret_span = span_of(w, b);
        return 0;
}

int profile_window_count(const ProfileWindow *w, const Profile *base, uint32_t n_seconds, Profile *dst,
                         ProfileWindowSpan *ret_span)
{
        return count_range(w, base, newest(w, n_seconds), dst, ret_span);
}

int profile_window_count_between(const ProfileWindow *w, const Profile *base, uint64_t after_usec,
                                 uint64_t until_usec, Profile *dst, ProfileWindowSpan *ret_span)
{
        return count_range(w, base, ending_between(w, after_usec, until_usec), dst, ret_span);
}

int profile_window_sum_between(const ProfileWindow *w, const Profile *base, uint64_t after_usec,
                               uint64_t until_usec, ProfileDelta *sum, ProfileWindowSpan *ret_span)
{
        Range b;

        assert(w);
        assert(base);
        assert(sum);

        if (w->n > 0 && w->frequency != base->frequency)
                return -EINVAL;
        b = ending_between(w, after_usec, until_usec);
        for (uint32_t i = b.first; i < b.end; i++) {
                int r = gather_bucket(bucket_at(w, i), sum);
                if (r < 0)
                        return r;
        }
        if (ret_span)
                *ret_span = span_of(w, b);
        return 0;
}

/* The totals of a range of buckets, from their headers. */
static int totals_range(const ProfileWindow *w, Range b, ProfileValues *ret, ProfileWindowSpan *ret_span)
{
        ProfileValues sum = {};

        assert(w);
        assert(ret);

        for (uint32_t i = b.first; i < b.end; i++) {
                const Bucket *bucket = bucket_at(w, i);
                uint32_t n, n_other;
                ProfileValues totals;
                Cursor c;
                int r;

                if (bucket->size == 0)
                        continue; /* data is NULL, and NULL + 0 undefined */
                c = (Cursor){ .p = bucket->data, .end = bucket->data + bucket->size };
                r = get_header(&c, &n, &n_other, &totals);
                if (r < 0)
                        return r;
                profile_values_add(&sum, &totals);
        }
        *ret = sum;
        if (ret_span)
                *ret_span = span_of(w, b);
        return 0;
}

int profile_window_totals(const ProfileWindow *w, uint32_t n_seconds, ProfileValues *ret,
                          ProfileWindowSpan *ret_span)
{
        return totals_range(w, newest(w, n_seconds), ret, ret_span);
}

int profile_window_totals_between(const ProfileWindow *w, uint64_t after_usec, uint64_t until_usec,
                                  ProfileValues *ret, ProfileWindowSpan *ret_span)
{
        return totals_range(w, ending_between(w, after_usec, until_usec), ret, ret_span);
}
