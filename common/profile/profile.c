/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <assert.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "profile-internal.h"
#include "utf8.h"

static uint64_t function_key_hash(const void *k)
{
        const FunctionKey *key = k;
        return hash_bytes(key->name, strlen(key->name),
                          (uint64_t)key->line << 33 | (uint64_t)key->module_id << 1 | key->inlined);
}

static bool function_key_equal(const void *a, const void *b)
{
        const FunctionKey *x = a, *y = b;
        return x->module_id == y->module_id && x->inlined == y->inlined && x->line == y->line &&
               strcmp(x->name, y->name) == 0;
}

static const HashOps function_key_hash_ops = { .hash = function_key_hash, .equal = function_key_equal };

static uint64_t stack_key_hash(const void *k)
{
        const StackKey *key = k;
        return hash_bytes(key->frames, key->n_frames * sizeof(uint32_t), key->n_frames);
}

static bool stack_key_equal(const void *a, const void *b)
{
        const StackKey *x = a, *y = b;
        /* An empty stack's frames may be NULL, which memcmp() must not see. */
        return x->n_frames == y->n_frames &&
               (x->n_frames == 0 || memcmp(x->frames, y->frames, x->n_frames * sizeof(uint32_t)) == 0);
}

static const HashOps stack_key_hash_ops = { .hash = stack_key_hash, .equal = stack_key_equal };

int profile_new(uint32_t frequency, Profile **ret)
{
        _cleanup_(profile_freep) Profile *p = NULL;

        assert(ret);

        if (frequency == 0)
                return -EINVAL;
        p = calloc(1, sizeof(*p));
        if (!p)
                return -ENOMEM;
        p->frequency = frequency;
        p->unknown_id = UINT32_MAX;
        p->other_id = UINT32_MAX;
        p->function_by_key = hashmap_new(&function_key_hash_ops);
        p->module_by_name = hashmap_new(&string_hash_ops);
        p->threads = hashmap_new(&uint64_hash_ops);
        p->stacks = hashmap_new(&stack_key_hash_ops);
        if (!p->function_by_key || !p->module_by_name || !p->threads || !p->stacks)
                return -ENOMEM;
        *ret = TAKE_PTR(p);
        return 0;
}

Profile *profile_free(Profile *p)
{
        Thread *t;

        if (!p)
                return NULL;
        for (size_t i = 0; i < p->n_stacks; i++)
                free(p->stack_by_id[i]);
        free(p->stack_by_id);
        hashmap_free(p->stacks);
        free(p->mangled_log);
        for (size_t i = 0; i < p->n_functions; i++) {
                free(p->functions[i]->name);
                free(p->functions[i]->mangled);
                free(p->functions[i]->source);
                free(p->functions[i]);
        }
        free(p->functions);
        for (size_t i = 0; i < p->n_modules; i++) {
                free(p->modules[i]->name);
                free(p->modules[i]);
        }
        free(p->modules);
        HASHMAP_FOREACH(t, p->threads) {
                free(t->name);
                free(t);
        }
        hashmap_free(p->threads);
        hashmap_free(p->function_by_key);
        hashmap_free(p->module_by_name);
        free(p);
        return NULL;
}

static int grow(void **array, size_t *allocated, size_t needed)
{
        void **a;
        size_t n;

        if (needed <= *allocated)
                return 0;
        n = MAX(*allocated * 2, (size_t)64);
        a = realloc(*array, n * sizeof(void *));
        if (!a)
                return -ENOMEM;
        *array = a;
        *allocated = n;
        return 0;
}

int profile_intern_module(Profile *p, const char *name, uint32_t *ret_id)
{
        _cleanup_free_ Module *m = NULL;
        _cleanup_free_ char *escaped = NULL;
        void *v;
        int r;

        r = utf8_escape_or_keep(name, &escaped, &name);
        if (r < 0)
                return r;
        v = hashmap_get(p->module_by_name, name);
        if (v) {
                *ret_id = (uint32_t)(PTR_TO_UINT64(v) - 1);
                return 0;
        }
        r = grow((void **)&p->modules, &p->allocated_modules, p->n_modules + 1);
        if (r < 0)
                return r;
        m = calloc(1, sizeof(*m));
        if (!m)
                return -ENOMEM;
        m->name = strdup(name);
        if (!m->name)
                return -ENOMEM;
        r = hashmap_put(p->module_by_name, m->name, UINT64_TO_PTR(p->n_modules + 1));
        if (r < 0) {
                free(m->name);
                return r;
        }
        *ret_id = (uint32_t)p->n_modules;
        p->entry_bytes += sizeof(*m) + strlen(m->name) + 1;
        p->modules[p->n_modules++] = TAKE_PTR(m);
        return 0;
}

void profile_set_limits(Profile *p, size_t max_functions, size_t max_stacks)
{
        assert(p);

        p->max_functions = max_functions;
        p->max_stacks = max_stacks;
}

Function *profile_find_function(const Profile *p, const char *module, const char *function, bool inlined,
                                uint32_t line)
{
        void *v = hashmap_get(p->module_by_name, module);
        FunctionKey key;

        if (!v)
                return NULL;
        key = (FunctionKey){
                .module_id = (uint32_t)(PTR_TO_UINT64(v) - 1), .name = function, .inlined = inlined, .line = line
        };
        return hashmap_get(p->function_by_key, &key);
}

int profile_function_append(Profile *p, const char *module, const char *function, bool inlined, uint32_t line,
                            uint32_t *ret_id)
{
        _cleanup_free_ Function *f = NULL;
        _cleanup_free_ char *escaped = NULL;
        Function *whole = NULL;
        uint32_t module_id;
        int r;

        r = utf8_escape_or_keep(function, &escaped, &function);
        if (r < 0)
                return r;
        if (line > 0) {
                whole = profile_find_function(p, module, function, inlined, 0);
                if (!whole)
                        return -ENOENT;
        }
        r = profile_intern_module(p, module, &module_id);
        if (r < 0)
                return r;
        r = grow((void **)&p->functions, &p->allocated_functions, p->n_functions + 1);
        if (r < 0)
                return r;
        f = aligned_alloc(FUNCTION_ALIGN, ALIGN_TO(sizeof(*f), FUNCTION_ALIGN));
        if (!f)
                return -ENOMEM;
        *f = (Function){};
        f->name = strdup(function);
        if (!f->name)
                return -ENOMEM;
        f->key = (FunctionKey){ .module_id = module_id, .name = f->name, .inlined = inlined, .line = line };
        f->counted = whole ?: f;
        f->id = (uint32_t)p->n_functions;
        /* -EEXIST: the profile has the function already (a caller that did not look first). */
        r = hashmap_put(p->function_by_key, &f->key, f);
        if (r < 0) {
                free(f->name);
                return r;
        }
        *ret_id = f->id;
        p->entry_bytes += ALIGN_TO(sizeof(*f), FUNCTION_ALIGN) + strlen(f->name) + 1;
        p->n_lines += line > 0;
        p->functions[p->n_functions++] = TAKE_PTR(f);
        return 0;
}

/* The profile's own rows ("[unknown]", "[other]") are never folded. */
static int intern_reserved(Profile *p, const char *name, uint32_t *id)
{
        Function *f;

        if (*id != UINT32_MAX)
                return 0;
        f = profile_find_function(p, name, name, false, 0);
        if (f) {
                *id = f->id;
                return 0;
        }
        return profile_function_append(p, name, name, false, 0, id);
}

/* The reserved rows do not count against the limit. */
bool profile_functions_full(const Profile *p)
{
        return p->max_functions > 0 &&
               p->n_functions - (p->unknown_id != UINT32_MAX) - (p->other_id != UINT32_MAX) >= p->max_functions;
}

int profile_intern_frame(Profile *p, const char *module, const char *function, bool inlined, uint32_t *ret_id)
{
        _cleanup_free_ char *escaped_module = NULL, *escaped_function = NULL;
        Function *existing;
        int r;

        assert(p);
        assert(module);
        assert(function);
        assert(ret_id);

        /* The tables hold names of valid UTF-8 on one line only (utf8.h), whatever a symbol table, a maps file,
         * a perf map or an older vprofd's saved file held: every answer and saved file made of them is valid.
         * Names come here once each (a new address, a restored table), and are mostly their own escape. */
        r = utf8_escape_or_keep(module, &escaped_module, &module);
        if (r < 0)
                return r;
        r = utf8_escape_or_keep(function, &escaped_function, &function);
        if (r < 0)
                return r;
        existing = profile_find_function(p, module, function, inlined, 0);
        if (existing) {
                *ret_id = existing->id;
                return 0;
        }
        if (profile_functions_full(p)) {
                r = intern_reserved(p, PROFILE_OTHER, &p->other_id);
                if (r < 0)
                        return r;
                *ret_id = p->other_id;
                return 0;
        }
        return profile_function_append(p, module, function, inlined, 0, ret_id);
}

Thread *profile_count_thread(Profile *p, uint32_t tid, const char *name, int *ret_error)
{
        Thread *t = p->last_thread && p->last_thread->tid == tid ? p->last_thread
                                                                 : hashmap_get(p->threads, UINT64_TO_PTR(tid));
        int r;

        if (!t) {
                _cleanup_free_ Thread *n = calloc(1, sizeof(*n));
                if (!n) {
                        *ret_error = -ENOMEM;
                        return NULL;
                }
                n->tid = tid;
                r = hashmap_put(p->threads, UINT64_TO_PTR(tid), n);
                if (r < 0) {
                        *ret_error = r;
                        return NULL;
                }
                t = TAKE_PTR(n);
        }
        /* Threads rename themselves (pthread_setname_np); the table shows the latest name. The drain gives it
         * escaped already; a delta of an older vprofd may not have. */
        if (name && (!t->name || strcmp(t->name, name) != 0)) {
                char *copy = utf8_escape_dup(name);
                if (!copy) {
                        *ret_error = -ENOMEM;
                        return NULL;
                }
                free(t->name);
                t->name = copy;
        }
        p->last_thread = t;
        return t;
}

static void count_inclusive(Counts *c, uint64_t generation)
{
        if (c->generation == generation)
                return;
        c->generation = generation;
        c->inclusive++;
}

static void values_add(ProfileValues *v, const ProfileSample *s)
{
        switch (s->kind) {
        case PROFILE_SAMPLE_USER:
                v->user_samples++;
                break;
        case PROFILE_SAMPLE_KERNEL:
                v->kernel_samples++;
                break;
        case PROFILE_SAMPLE_BLOCKED:
                v->blocked_ns += s->duration_ns;
                break;
        case PROFILE_SAMPLE_PREEMPTED:
                v->preempted_ns += s->duration_ns;
                break;
        default:
                break;
        }
}

static void count_inclusive_values(Counts *c, uint64_t generation, const ProfileSample *s)
{
        if (c->values_generation == generation)
                return;
        c->values_generation = generation;
        values_add(&c->inclusive_values, s);
}

static bool sample_on_cpu(const ProfileSample *s)
{
        return IN_SET(s->kind, PROFILE_SAMPLE_USER, PROFILE_SAMPLE_KERNEL);
}

/* The sampling values: every frame, kernel ones included. */
static void count_sampling(Profile *p, const ProfileSample *s, uint64_t gen)
{
        Function *leaf;

        for (size_t i = 0; i < s->n_frames; i++) {
                Function *f = p->functions[s->frames[i]]->counted;
                count_inclusive(&f->counts, gen);
                count_inclusive(&p->modules[f->key.module_id]->counts, gen);
        }
        if (s->n_frames == 0)
                return;
        leaf = p->functions[s->frames[0]]->counted;
        leaf->counts.exclusive++;
        p->modules[leaf->key.module_id]->counts.exclusive++;
}

/* The elapsed and application values: the user stack, innermost first. */
static void count_values(Profile *p, const ProfileSample *s, const uint32_t *user, size_t n_user, uint64_t gen)
{
        Function *leaf;

        for (size_t i = 0; i < n_user; i++) {
                Function *f = p->functions[user[i]]->counted;
                count_inclusive_values(&f->counts, gen, s);
                count_inclusive_values(&p->modules[f->key.module_id]->counts, gen, s);
        }
        leaf = p->functions[user[0]]->counted;
        values_add(&leaf->counts.exclusive_values, s);
        values_add(&p->modules[leaf->key.module_id]->counts.exclusive_values, s);
}

/* count_sampling() and count_values() in one pass over the frames, for the common case (an on-CPU sample with
 * user frames): each function's counts are brought into the cache once. */
static void count_on_cpu(Profile *p, const ProfileSample *s, uint64_t gen)
{
        Function *leaf, *user_leaf;

        for (size_t i = 0; i < s->n_frames; i++) {
                Function *f = p->functions[s->frames[i]]->counted;
                Module *m = p->modules[f->key.module_id];

                count_inclusive(&f->counts, gen);
                count_inclusive(&m->counts, gen);
                if (i >= s->n_kernel_frames) {
                        count_inclusive_values(&f->counts, gen, s);
                        count_inclusive_values(&m->counts, gen, s);
                }
        }
        leaf = p->functions[s->frames[0]]->counted;
        leaf->counts.exclusive++;
        p->modules[leaf->key.module_id]->counts.exclusive++;
        user_leaf = p->functions[s->frames[s->n_kernel_frames]]->counted;
        values_add(&user_leaf->counts.exclusive_values, s);
        values_add(&p->modules[user_leaf->key.module_id]->counts.exclusive_values, s);
}

/* The sample's stack, as given (an empty one too: its samples have no frame). Past the limit, or out of memory,
 * it goes to the "[other]" stack: the sample is counted everywhere else already, so it must not fail here. */
int profile_stack_insert(Profile *p, const uint32_t *frames, uint32_t n_frames, uint32_t n_kernel_frames,
                         Stack **ret)
{
        Stack *stack;
        int r;

        if (p->n_stacks >= PROFILE_STACK_OTHER)
                return -E2BIG;
        r = grow((void **)&p->stack_by_id, &p->allocated_stacks, p->n_stacks + 1);
        if (r < 0)
                return r;
        stack = malloc(sizeof(*stack) + n_frames * sizeof(uint32_t));
        if (!stack)
                return -ENOMEM;
        if (n_frames > 0) /* frames may be NULL then, which memcpy() must not see */
                memcpy(stack->frames, frames, n_frames * sizeof(uint32_t));
        stack->key = (StackKey){ .frames = stack->frames, .n_frames = n_frames };
        stack->n_kernel_frames = n_kernel_frames;
        stack->id = (uint32_t)p->n_stacks;
        stack->samples = 0;
        stack->values = (ProfileValues){};
        r = hashmap_put(p->stacks, &stack->key, stack);
        if (r < 0) {
                free(stack);
                return r;
        }
        p->stack_by_id[p->n_stacks++] = stack;
        p->entry_bytes += sizeof(*stack) + n_frames * sizeof(uint32_t);
        *ret = stack;
        return 0;
}

/* Returns the stack's id, or PROFILE_STACK_OTHER. */
static uint32_t count_stack(Profile *p, const ProfileSample *s)
{
        StackKey key = { .frames = s->frames, .n_frames = (uint32_t)s->n_frames };
        Stack *stack = hashmap_get(p->stacks, &key);

        if (!stack && (p->max_stacks == 0 || p->n_stacks < p->max_stacks) &&
            profile_stack_insert(p, s->frames, key.n_frames, (uint32_t)s->n_kernel_frames, &stack) < 0)
                stack = NULL;
        if (!stack) {
                if (sample_on_cpu(s))
                        p->other_stack_samples++;
                values_add(&p->other_stack_values, s);
                return PROFILE_STACK_OTHER;
        }
        if (sample_on_cpu(s))
                stack->samples++;
        values_add(&stack->values, s);
        return stack->id;
}

int profile_add_sample(Profile *p, const ProfileSample *s)
{
        return profile_add_sample_stack(p, s, NULL);
}

int profile_add_sample_stack(Profile *p, const ProfileSample *s, uint32_t *ret_stack_id)
{
        const uint32_t *user;
        uint32_t stack_id;
        size_t n_user;
        uint64_t gen;
        Thread *t;
        int r = 0;

        assert(p);
        assert(s);
        assert(s->frames || s->n_frames == 0);

        if (s->kind < 0 || s->kind >= _PROFILE_SAMPLE_KIND_MAX || s->n_kernel_frames > s->n_frames)
                return -EINVAL;
        for (size_t i = 0; i < s->n_frames; i++)
                if (s->frames[i] >= p->n_functions)
                        return -EINVAL;

        n_user = s->n_frames - s->n_kernel_frames;
        /* Not frames + n_kernel_frames for no frame: frames may be NULL then, and NULL + 0 is undefined. */
        user = n_user > 0 ? s->frames + s->n_kernel_frames : NULL;
        if (n_user == 0) {
                /* The interval still counts, like an unnamed frame: the function values add up to the
                 * session's. */
                r = intern_reserved(p, "[unknown]", &p->unknown_id);
                if (r < 0)
                        return r;
                user = &p->unknown_id;
                n_user = 1;
        }

        /* The thread before anything is counted: with the interning above, the only steps that can fail, so
         * a sample counts wholly or not at all. */
        t = profile_count_thread(p, s->tid, s->thread_name, &r);
        if (!t)
                return r;

        gen = ++p->generation;
        values_add(&p->total_values, s);
        values_add(&t->values, s);
        if (sample_on_cpu(s)) {
                p->total++;
                t->samples++;
                if (user != &p->unknown_id) {
                        count_on_cpu(p, s, gen);
                        stack_id = count_stack(p, s);
                        goto done;
                }
                count_sampling(p, s, gen);
        }
        count_values(p, s, user, n_user, gen);
        stack_id = count_stack(p, s);
done:
        if (ret_stack_id)
                *ret_stack_id = stack_id;
        return 0;
}

void profile_values_add(ProfileValues *v, const ProfileValues *add)
{
        v->user_samples += add->user_samples;
        v->kernel_samples += add->kernel_samples;
        v->blocked_ns += add->blocked_ns;
        v->preempted_ns += add->preempted_ns;
}

/* profile_add_sample()'s rules, each sample's contribution multiplied by the number of samples: n on-CPU samples
 * add n to every count that one adds 1 to, and every value adds up. Distinct functions and modules are stamped
 * once for all of them, as each sample would stamp them once. */
int profile_add_counts(Profile *p, const ProfileCounts *c)
{
        const uint32_t *frames, *user;
        size_t n_frames, n_user;
        Stack *stack = NULL;
        uint64_t on_cpu, gen;
        Thread *t;
        int r = 0;

        assert(p);
        assert(c);

        on_cpu = c->values.user_samples + c->values.kernel_samples;
        frames = c->frames;
        n_frames = c->n_frames;

        if (c->stack_id != PROFILE_STACK_OTHER) {
                if (c->stack_id >= p->n_stacks)
                        return -EINVAL;
                stack = p->stack_by_id[c->stack_id];
                frames = stack->frames;
                n_frames = stack->key.n_frames;
        }
        if (c->n_kernel_frames > n_frames || (n_frames > 0 && !frames))
                return -EINVAL;
        for (size_t i = 0; i < n_frames; i++)
                if (frames[i] >= p->n_functions)
                        return -EINVAL;

        n_user = n_frames - c->n_kernel_frames;
        user = n_user > 0 ? frames + c->n_kernel_frames : NULL; /* frames may be NULL without frames */
        if (n_user == 0) {
                r = intern_reserved(p, "[unknown]", &p->unknown_id);
                if (r < 0)
                        return r;
                user = &p->unknown_id;
                n_user = 1;
        }
        t = profile_count_thread(p, c->tid, NULL, &r);
        if (!t)
                return r;

        profile_values_add(&p->total_values, &c->values);
        profile_values_add(&t->values, &c->values);
        p->total += on_cpu;
        t->samples += on_cpu;

        /* The sampling values: every frame, kernel ones included, of the on-CPU samples. */
        gen = ++p->generation;
        for (size_t i = 0; i < n_frames; i++) {
                Function *f = p->functions[frames[i]]->counted;
                Module *m = p->modules[f->key.module_id];

                if (f->counts.generation != gen) {
                        f->counts.generation = gen;
                        f->counts.inclusive += on_cpu;
                }
                if (m->counts.generation != gen) {
                        m->counts.generation = gen;
                        m->counts.inclusive += on_cpu;
                }
        }
        if (n_frames > 0) {
                Function *leaf = p->functions[frames[0]]->counted;
                leaf->counts.exclusive += on_cpu;
                p->modules[leaf->key.module_id]->counts.exclusive += on_cpu;
        }

        /* The values: the user stack, every interval. */
        for (size_t i = 0; i < n_user; i++) {
                Function *f = p->functions[user[i]]->counted;
                Module *m = p->modules[f->key.module_id];

                if (f->counts.values_generation != gen) {
                        f->counts.values_generation = gen;
                        profile_values_add(&f->counts.inclusive_values, &c->values);
                }
                if (m->counts.values_generation != gen) {
                        m->counts.values_generation = gen;
                        profile_values_add(&m->counts.inclusive_values, &c->values);
                }
        }
        profile_values_add(&p->functions[user[0]]->counted->counts.exclusive_values, &c->values);
        profile_values_add(&p->modules[p->functions[user[0]]->key.module_id]->counts.exclusive_values, &c->values);

        if (stack) {
                stack->samples += on_cpu;
                profile_values_add(&stack->values, &c->values);
        } else {
                p->other_stack_samples += on_cpu;
                profile_values_add(&p->other_stack_values, &c->values);
        }
        return 0;
}

int profile_thread_rename(Profile *p, uint32_t tid, const char *name)
{
        Thread *t;
        int r = 0;

        assert(p);

        t = hashmap_get(p->threads, UINT64_TO_PTR(tid));
        if (!t)
                return -ENOENT;
        return profile_count_thread(p, tid, name, &r) ? 0 : r;
}

int profile_thread_name(const Profile *p, uint32_t tid, const char **ret)
{
        const Thread *t;

        assert(p);
        assert(ret);

        t = p->last_thread && p->last_thread->tid == tid ? p->last_thread
                                                         : hashmap_get(p->threads, UINT64_TO_PTR(tid));
        if (!t)
                return -ENOENT;
        *ret = t->name;
        return 0;
}

int profile_stack_frames(const Profile *p, uint32_t stack_id, const uint32_t **ret_frames, size_t *ret_n_frames,
                         size_t *ret_n_kernel_frames)
{
        const Stack *stack;

        assert(p);
        assert(ret_frames);
        assert(ret_n_frames);
        assert(ret_n_kernel_frames);

        if (stack_id >= p->n_stacks)
                return -ENOENT;
        stack = p->stack_by_id[stack_id];
        *ret_frames = stack->frames;
        *ret_n_frames = stack->key.n_frames;
        *ret_n_kernel_frames = stack->n_kernel_frames;
        return 0;
}

int profile_stack_counts(const Profile *p, uint32_t stack_id, uint64_t *ret_samples, ProfileValues *ret_values)
{
        assert(p);
        assert(ret_samples);
        assert(ret_values);

        if (stack_id >= p->n_stacks)
                return -ENOENT;
        *ret_samples = p->stack_by_id[stack_id]->samples;
        *ret_values = p->stack_by_id[stack_id]->values;
        return 0;
}

const ProfileValues *profile_other_stack_values(const Profile *p)
{
        return &p->other_stack_values;
}

uint64_t profile_total(const Profile *p)
{
        return p->total;
}

const ProfileValues *profile_total_values(const Profile *p)
{
        return &p->total_values;
}

uint32_t profile_frequency(const Profile *p)
{
        return p->frequency;
}

size_t profile_n_stacks(const Profile *p)
{
        return p->n_stacks;
}

uint64_t profile_other_stack_samples(const Profile *p)
{
        return p->other_stack_samples;
}

uint64_t profile_other_function_samples(const Profile *p)
{
        return p->other_id == UINT32_MAX ? 0 : p->functions[p->other_id]->counts.inclusive;
}

size_t profile_memory(const Profile *p)
{
        size_t bytes = sizeof(*p) + p->entry_bytes + hashmap_memory(p->function_by_key) +
                       hashmap_memory(p->module_by_name) + hashmap_memory(p->threads) + hashmap_memory(p->stacks) +
                       (p->allocated_functions + p->allocated_modules + p->allocated_stacks) * sizeof(void *) +
                       p->allocated_mangled_log * sizeof(uint32_t);
        Thread *t;

        HASHMAP_FOREACH(t, p->threads)
                bytes += sizeof(*t) + (t->name ? strlen(t->name) + 1 : 0);
        return bytes;
}
