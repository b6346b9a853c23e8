/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The BPF walk by the unwind tables, end to end but without the daemon's registry: vprof-nofp (code built without
 * frame pointers, tests/workloads/vprof-nofp.c) is sampled
 *   1. by the kernel's frame-pointer walk (UnwindTableMiB=0, today's path),
 *   2. by the walk with no mappings pushed (frame-pointer steps in BPF),
 *   3. with its mappings pushed but no table (every frame falls back, and says where),
 *   4. with a table compiled (common/unwind/unwind-table.h) for each file it maps, published in the arena,
 *   5. with the executable's table retired again,
 * through the very calls the daemon makes (daemon/sampler.h). Every record's frames are named by the
 * symbolizer. Phase 4 must give the whole stack, down to _start, through every function of the workload; phase 1
 * must not: that is what the tables are for. Root only (exit 77 otherwise). Argument: the vprof-nofp binary. */
#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "address-space.h"
#include "eh-frame.h"
#include "log.h"
#include "proc-maps.h"
#include "sampler.h"
#include "unwind-table.h"

#define RECURSION 6 /* vprof-nofp's default --depth: nofp_recurse appears RECURSION + 1 times */
#define MAX_RECORDS 8192
#define MAX_TABLES 16

static int failures;

#define CHECK(cond, ...)                                                                                       \
        do {                                                                                                   \
                if (!(cond)) {                                                                                 \
                        failures++;                                                                            \
                        fprintf(stderr, "FAIL %s:%d: %s: ", __FILE__, __LINE__, #cond);                        \
                        fprintf(stderr, __VA_ARGS__);                                                          \
                        fputc('\n', stderr);                                                                   \
                }                                                                                              \
        } while (0)

typedef struct Record {
        uint16_t depth, fallback_frame;
        uint8_t walk_end, walk_flags;
        uint64_t frames[VPROF_MAX_USER_FRAMES];
} Record;

typedef struct Phase {
        const char *name;
        pid_t pid;
        Record *records;
        size_t n;
} Phase;

static int on_record(void *userdata, void *data, size_t size)
{
        const struct vprof_sample *s = data;
        Phase *p = *(Phase **)userdata;
        Record *r;

        if (!p || size < VPROF_SAMPLE_HEADER_SIZE || s->tgid != (uint32_t)p->pid || p->n >= MAX_RECORDS ||
            (s->flags & VPROF_SAMPLE_OFF_CPU) || s->kernel_depth > VPROF_MAX_KERNEL_FRAMES ||
            s->user_depth > VPROF_MAX_USER_FRAMES ||
            size < VPROF_SAMPLE_SIZE((size_t)s->kernel_depth + s->user_depth))
                return 0;
        r = &p->records[p->n++];
        r->depth = s->user_depth;
        r->fallback_frame = s->fallback_frame;
        r->walk_end = s->walk_end;
        r->walk_flags = s->walk_flags;
        memcpy(r->frames, s->frames + s->kernel_depth, s->user_depth * sizeof(uint64_t));
        return 0;
}

/* The user frames' functions, innermost first; "?" for none. */
static size_t name_frames(AddressSpace *as, const Record *r, char names[][64])
{
        for (size_t i = 0; i < r->depth; i++) {
                bool exact = r->frames[i] & VPROF_FRAME_EXACT;
                Symbol sym;

                if (address_space_resolve(as, r->frames[i] & ~VPROF_FRAME_EXACT, i > 0 && !exact, &sym) < 0 ||
                    !sym.function)
                        snprintf(names[i], 64, "?");
                else
                        snprintf(names[i], 64, "%s", sym.function);
        }
        return r->depth;
}

static const char *const walk_end_names[_VPROF_WALK_END_MAX] = { "none", "end", "end-fp", "depth", "fault", "bad" };

typedef struct Summary {
        size_t n, in_leaf;          /* records; records whose frame 0 is nofp_lib_spin */
        size_t whole;               /* of those, stacks with every function from the leaf down to _start */
        size_t reach_main;          /* of those, stacks that have main */
        size_t ends[_VPROF_WALK_END_MAX];
        size_t flags[8];
        size_t depth_sum;
        char example[VPROF_MAX_USER_FRAMES][64];
        size_t example_depth;
        uint16_t example_fallback;
} Summary;

/* Whether names is the workload's stack from nofp_lib_spin to _start, every frame in its place. */
static bool whole_stack(char names[][64], size_t n)
{
        static const char *const top[] = { "nofp_lib_spin", "nofp_lib_work" };
        size_t i = 0;

        for (size_t k = 0; k < ELEMENTSOF(top); k++, i++)
                if (i >= n || strcmp(names[i], top[k]) != 0)
                        return false;
        for (size_t k = 0; k <= RECURSION; k++, i++)
                if (i >= n || strcmp(names[i], "nofp_recurse") != 0)
                        return false;
        if (i + 1 >= n || strcmp(names[i], "nofp_run") != 0 || strcmp(names[i + 1], "main") != 0)
                return false;
        /* Then the C library's start (__libc_start_call_main, __libc_start_main...) and the executable's
         * _start, the last frame. */
        return strcmp(names[n - 1], "_start") == 0;
}

static void summarize(AddressSpace *as, const Phase *p, Summary *ret)
{
        static char names[VPROF_MAX_USER_FRAMES][64];

        *ret = (Summary){ .n = p->n };
        for (size_t k = 0; k < p->n; k++) {
                const Record *r = &p->records[k];
                size_t n = name_frames(as, r, names);
                bool main_found = false;

                if (n == 0 || strcmp(names[0], "nofp_lib_spin") != 0)
                        continue;
                ret->in_leaf++;
                ret->depth_sum += n;
                if (r->walk_end < _VPROF_WALK_END_MAX)
                        ret->ends[r->walk_end]++;
                for (unsigned b = 0; b < 8; b++)
                        if (r->walk_flags & (1u << b))
                                ret->flags[b]++;
                for (size_t i = 0; i < n; i++)
                        main_found = main_found || strcmp(names[i], "main") == 0;
                ret->reach_main += main_found;
                ret->whole += whole_stack(names, n);
                /* The deepest stack as the example. */
                if (n > ret->example_depth || ret->example_depth == 0) {
                        memcpy(ret->example, names, n * sizeof(names[0]));
                        ret->example_depth = n;
                        ret->example_fallback = r->fallback_frame;
                }
        }
}

static void print_summary(const Phase *p, const Summary *s)
{
        static const char *const flag_names[] = { "fell-back", "no-row", "bad-rule", "unknown-pc", "no-mappings",
                                                  "leaf-fp" };

        printf("== %s: %zu records, %zu in nofp_lib_spin, mean depth %.1f, %zu reach main, %zu whole to _start\n",
               p->name, s->n, s->in_leaf, s->in_leaf ? (double)s->depth_sum / (double)s->in_leaf : 0.0,
               s->reach_main, s->whole);
        printf("   walk ends:");
        for (int e = 0; e < _VPROF_WALK_END_MAX; e++)
                if (s->ends[e])
                        printf(" %s %zu", walk_end_names[e], s->ends[e]);
        printf("; flags:");
        for (size_t b = 0; b < ELEMENTSOF(flag_names); b++)
                if (s->flags[b])
                        printf(" %s %zu", flag_names[b], s->flags[b]);
        printf("\n   deepest (depth %zu, fallback frame %d):", s->example_depth,
               s->example_fallback == VPROF_NO_FRAME ? -1 : (int)s->example_fallback);
        for (size_t i = 0; i < s->example_depth; i++)
                printf(" %s", s->example[i]);
        printf("\n");
        fflush(stdout);
}

static void print_stats(Sampler *s)
{
        static const char *const names[] = { "end", "end-fp", "depth", "fault", "bad", "fell-back", "no-row",
                                             "bad-rule", "unknown-pc", "no-mappings" };
        uint64_t stats[_VPROF_STAT_MAX];

        if (sampler_read_stats(s, stats) < 0)
                return;
        printf("   counters: kept %" PRIu64, stats[VPROF_STAT_KEPT]);
        for (size_t i = 0; i < ELEMENTSOF(names); i++)
                printf(", %s %" PRIu64, names[i], stats[VPROF_STAT_UNWIND_END + i]);
        printf("\n");
}

/* The phase the records go to; NULL: none, they are dropped. */
static Phase *current;

/* Samples for seconds, whatever the sampler was given, into p. */
static void run_phase(Sampler *s, Phase *p, double seconds)
{
        struct timespec tick = { 0, 50 * 1000 * 1000 };

        current = NULL;
        (void)sampler_drain(s); /* taken before this phase */
        current = p;

        for (double t = 0; t < seconds; t += 0.05) {
                nanosleep(&tick, NULL);
                (void)sampler_drain(s);
        }
        (void)sampler_drain(s);
}

static Sampler *new_sampler(pid_t pid, uint32_t unwind_table_mib)
{
        SamplerConfig config = {
                .frequency = 999,
                .event = SAMPLER_EVENT_CPU_CLOCK,
                .ring_size = 4u << 20,
                .max_targets = 4,
                .max_off_cpu_threads = 16,
                .unwind_table_mib = unwind_table_mib,
        };
        Sampler *s = NULL;
        int r;

        r = sampler_new(&config, on_record, &current, &s);
        if (r < 0) {
                fprintf(stderr, "sampler_new: %s\n", strerror(-r));
                exit(1);
        }
        r = sampler_add_target(s, (uint32_t)pid, 0);
        if (r < 0) {
                fprintf(stderr, "sampler_add_target: %s\n", strerror(-r));
                exit(1);
        }
        return s;
}

/* The call frame information, parsed once per file, as the unwinder keeps it. */
static int load_eh_frame(int fd, void **ret_data, size_t *ret_bytes)
{
        EhFrame *e = NULL;
        int r = eh_frame_load_fd(fd, &e);

        if (r < 0)
                return r;
        *ret_data = e;
        *ret_bytes = eh_frame_memory(e);
        return 0;
}

static void free_eh_frame(void *data)
{
        eh_frame_free(data);
}

static const FileAttachmentType eh_frame_attachment = { "call frame information", load_eh_frame, free_eh_frame };

typedef struct Tables {
        struct { const void *eh_frame; UnwindTable *table; uint32_t id; } t[MAX_TABLES];
        size_t n;
        uint32_t arena_used;
} Tables;

/* The table of e, compiled on first use and published in the arena after the others. 0 when there is none. */
static uint32_t table_of(Sampler *s, Tables *tables, const EhFrame *e, uint64_t *ret_base)
{
        _cleanup_(unwind_table_builder_freep) UnwindTableBuilder *b = NULL;
        UnwindTable *t = NULL;
        int r;

        for (size_t i = 0; i < tables->n; i++)
                if (tables->t[i].eh_frame == e) {
                        *ret_base = tables->t[i].table->base;
                        return tables->t[i].id;
                }
        if (tables->n >= MAX_TABLES)
                return 0;
        r = unwind_table_builder_new(e, &b);
        /* In slices, as the daemon builds them. */
        while (r >= 0 && (r = unwind_table_builder_step(b, 100)) == 0)
                ;
        if (r >= 0)
                r = unwind_table_builder_finish(b, &t);
        if (r < 0) {
                fprintf(stderr, "table: %s\n", strerror(-r));
                return 0;
        }
        r = sampler_publish_unwind_table(s, (uint32_t)tables->n + 1, tables->arena_used, t->index, t->n_index,
                                         t->rows, t->n_rows);
        CHECK(r >= 0, "publish: %s", strerror(-r));
        if (r < 0) {
                unwind_table_free(t);
                return 0;
        }
        tables->arena_used += t->n_index + t->n_rows;
        tables->t[tables->n].eh_frame = e;
        tables->t[tables->n].table = t;
        tables->t[tables->n].id = (uint32_t)tables->n + 1;
        *ret_base = t->base;
        return tables->t[tables->n++].id;
}

/* The executable mappings of pid for the walk: those of files with call frame information get its table when
 * with_tables, the others none. Prints them. */
static int push_mappings(Sampler *s, AddressSpace *as, Tables *tables, pid_t pid, bool with_tables)
{
        _cleanup_(proc_maps_freep) ProcMaps *maps = NULL;
        struct vprof_mapping m[VPROF_MAX_MAPPINGS];
        size_t n = 0;
        int r;

        r = proc_maps_read(pid, &maps);
        if (r < 0)
                return r;
        for (size_t i = 0; i < maps->n && n < ELEMENTSOF(m); i++) {
                const ProcMap *pm = &maps->maps[i];
                const void *e = NULL;
                uint64_t bias = 0, base = 0;

                if (!pm->executable || pm->end > (UINT64_C(1) << 63)) /* [vsyscall]: not for the walk */
                        continue;
                m[n] = (struct vprof_mapping){ .start = pm->start, .end = pm->end };
                if (!pm->path || pm->path[0] != '/' ||
                    address_space_code_attachment(as, pm->start, &eh_frame_attachment, &e, &bias) < 0)
                        m[n].flags = VPROF_MAPPING_FP_ONLY; /* the vDSO, JIT code, a file without CFI */
                else if (with_tables && (m[n].table = table_of(s, tables, e, &base)) != 0)
                        m[n].adj = bias + base;
                printf("   mapping %" PRIx64 "-%" PRIx64 " %s table %" PRIu32 "%s\n", pm->start, pm->end,
                       pm->path ?: "[anon]", m[n].table, m[n].flags & VPROF_MAPPING_FP_ONLY ? " fp-only" : "");
                n++;
        }
        return sampler_set_mappings(s, (uint32_t)pid, m, n, 1);
}

static pid_t start_workload(const char *path, int *ret_stdin)
{
        int in[2], out[2];
        char line[64];
        FILE *f;
        pid_t pid;

        if (pipe(in) < 0 || pipe(out) < 0)
                exit(1);
        pid = fork();
        if (pid < 0)
                exit(1);
        if (pid == 0) {
                dup2(in[0], 0);
                dup2(out[1], 1);
                execl(path, path, "--seconds", "60", "--wait-stdin", (char *)NULL);
                _exit(127);
        }
        close(in[0]);
        close(out[1]);
        f = fdopen(out[0], "r");
        if (!f || !fgets(line, sizeof(line), f) || strncmp(line, "ready ", 6) != 0) {
                fprintf(stderr, "%s did not start\n", path);
                exit(1);
        }
        *ret_stdin = in[1];
        return pid;
}

int main(int argc, char **argv)
{
        _cleanup_(symbolizer_freep) Symbolizer *symbolizer = NULL;
        _cleanup_(address_space_freep) AddressSpace *as = NULL;
        Phase fp = { "1. frame pointers, kernel walk (UnwindTableMiB=0)" },
              no_maps = { "2. CFI walk, no mappings pushed" }, no_tables = { "3. CFI walk, mappings, no table" },
              cfi = { "4. CFI walk, tables" }, retired = { "5. CFI walk, the executable's table retired" };
        Phase *phases[] = { &fp, &no_maps, &no_tables, &cfi, &retired };
        Summary sum[ELEMENTSOF(phases)];
        Tables tables = {};
        Sampler *s;
        int workload_stdin, status;
        pid_t pid;

        if (argc != 2) {
                fprintf(stderr, "Usage: %s VPROF_NOFP\n", argv[0]);
                return 2;
        }
        if (geteuid() != 0) {
                printf("SKIP: needs root for BPF\n");
                return 77;
        }
        log_set_max_level(LOG_WARNING);
        for (size_t i = 0; i < ELEMENTSOF(phases); i++) {
                phases[i]->records = calloc(MAX_RECORDS, sizeof(Record));
                if (!phases[i]->records)
                        return 1;
        }

        pid = start_workload(argv[1], &workload_stdin);
        for (size_t i = 0; i < ELEMENTSOF(phases); i++)
                phases[i]->pid = pid;
        if (write(workload_stdin, "go\n", 3) != 3)
                return 1;
        if (symbolizer_new(&symbolizer) < 0 || address_space_new(symbolizer, pid, &as) < 0)
                return 1;

        s = new_sampler(pid, 0);
        CHECK(sampler_unwind_arena_entries(s) == 0, "an arena without UnwindTableMiB=");
        CHECK(sampler_set_mappings(s, (uint32_t)pid, NULL, 0, 0) == -EOPNOTSUPP, "mappings without the walk");
        run_phase(s, &fp, 1.5);
        sampler_free(s);

        s = new_sampler(pid, 4);
        CHECK(sampler_unwind_arena_entries(s) == 4u << 17, "arena of %" PRIu32, sampler_unwind_arena_entries(s));
        run_phase(s, &no_maps, 1.5);
        CHECK(push_mappings(s, as, &tables, pid, false) >= 0, "mappings without tables");
        run_phase(s, &no_tables, 1.5);
        CHECK(push_mappings(s, as, &tables, pid, true) >= 0, "mappings with tables");
        run_phase(s, &cfi, 1.5);
        print_stats(s);
        /* The first table is the executable's, its first mapping. */
        CHECK(sampler_retire_unwind_table(s, 1) >= 0, "retire");
        CHECK(sampler_unwind_table_last_used(s, 1) > 0, "last used");
        run_phase(s, &retired, 1.5);
        current = NULL;
        sampler_free(s);

        kill(pid, SIGKILL);
        (void)waitpid(pid, &status, 0);

        for (size_t i = 0; i < ELEMENTSOF(phases); i++) {
                summarize(as, phases[i], &sum[i]);
                print_summary(phases[i], &sum[i]);
                CHECK(sum[i].in_leaf >= 100, "%s: %zu samples in the leaf", phases[i]->name, sum[i].in_leaf);
        }
        /* Today's path: the leaf and nothing of the workload's callers. */
        CHECK(sum[0].reach_main == 0, "the frame-pointer walk reached main %zu times", sum[0].reach_main);
        CHECK(sum[0].ends[VPROF_WALK_NONE] == sum[0].in_leaf, "walk_end set on the kernel's walk");
        /* The walk without mappings: frame-pointer steps in BPF, no better. */
        CHECK(sum[1].reach_main == 0, "reached main without tables");
        CHECK(sum[1].flags[4] == sum[1].in_leaf, "no-mappings flag on %zu of %zu", sum[1].flags[4], sum[1].in_leaf);
        /* Mappings without tables: every walk fell back at frame 0. */
        CHECK(sum[2].flags[0] == sum[2].in_leaf, "fell-back on %zu of %zu", sum[2].flags[0], sum[2].in_leaf);
        CHECK(sum[2].example_fallback == 0, "fallback frame %u", sum[2].example_fallback);
        /* The tables: every function, to _start's end marker. A sample taken between two instructions whose
         * row the tables get wrong would show here; allow a few for a busy machine's odd timings. */
        CHECK(sum[3].whole * 100 >= sum[3].in_leaf * 99, "whole stacks %zu of %zu", sum[3].whole, sum[3].in_leaf);
        CHECK(sum[3].ends[VPROF_WALK_END] * 100 >= sum[3].in_leaf * 99, "walks to the end marker %zu of %zu",
              sum[3].ends[VPROF_WALK_END], sum[3].in_leaf);
        CHECK(sum[3].flags[0] == 0, "fell back %zu times with every table", sum[3].flags[0]);
        /* The executable's table retired: its frames (nofp_recurse, the third) take frame-pointer steps. */
        CHECK(sum[4].whole == 0, "whole stacks without the executable's table");
        CHECK(sum[4].flags[0] == sum[4].in_leaf, "fell-back on %zu of %zu", sum[4].flags[0], sum[4].in_leaf);
        CHECK(sum[4].example_fallback == 2, "fallback frame %u", sum[4].example_fallback);

        for (size_t i = 0; i < tables.n; i++)
                unwind_table_free(tables.t[i].table);
        for (size_t i = 0; i < ELEMENTSOF(phases); i++)
                free(phases[i]->records);
        printf("%s\n", failures ? "FAILED" : "OK");
        return failures ? 1 : 0;
}
