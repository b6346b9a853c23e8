/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* How many samples per second the daemon ingests and aggregates on one core, without BPF.
 *
 * Synthetic ring-buffer records (struct vprof_sample, cut after their last frame as the BPF program writes
 * them) go through drain_sample() (daemon/drain.h), what the drain does with every record once it is checked and
 * its target found: the per-target frame cache, the symbolizer on a miss, the CFI step that puts back a leaf's
 * caller, and profile_add_sample(). The daemon's own code, from its library (libvprofd). The
 * target is this process, attached as the daemon attaches one (target_new(): its real /proc maps and
 * files), and the frames are real addresses inside functions of the shared objects this process has loaded
 * (libc, libelf, libsystemd, libbpf...), so names come from their ELF files. A share of the samples also has
 * kernel frames, real addresses from /proc/kallsyms (when readable). Each record's stack window holds the
 * caller that the frame-pointer walk gave, so the CFI step succeeds and stops after one step, as for a
 * well-formed stack.
 *
 * Stacks: --stacks distinct base stacks of --depth frames over --functions functions, drawn skewed (a few hot
 * stacks, a long tail), and --new-ppm of the samples a fresh random stack. The tables have the daemon's
 * default limits (65536 functions, 65536 stacks): past them new stacks count as "[other]", as in the daemon.
 *
 * First a cold pass over every base stack (every address symbolized: the cost of a new target), then --runs
 * timed runs of --samples samples each on the same target; the median is printed. Records are generated in
 * batches outside the timed part; only add_batch() is timed (and, for callgrind, --toggle-collect=add_batch
 * counts just it). Then the same samples through profile_add_sample() alone, with the function ids the frames
 * resolved to, for the split between symbolization and counting. */
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <getopt.h>
#include <inttypes.h>
#include <link.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "address-space.h"
#include "bus-names.h"
#include "drain.h"
#include "hashmap.h"
#include "log.h"
#include "macros.h"
#include "manager.h"
#include "profile.h"
#include "settings.h"
#include "state-store.h"
#include "target.h"
#include "vprof-abi.h"

#define BATCH 4096
#define MAX_KERNEL_DEPTH 6
#define KERNEL_FUNCTIONS 400
#define RUNS_MAX 101

static unsigned arg_functions = 3000;
static unsigned arg_stacks = 5000;
static unsigned arg_depth = 20;
static unsigned arg_new_ppm = 10000; /* 1% of the samples: a stack never seen */
static unsigned arg_kernel_percent = 10;
static uint64_t arg_samples = 2000000;
static unsigned arg_runs = 5;
static bool arg_json = false;
static unsigned arg_max_stacks = VPROF_MAX_STACKS_DEFAULT;
static const char *arg_write_state = NULL;
static uint32_t arg_query_pid = 0;
static unsigned arg_calls = 200;
static uint32_t arg_limit = 0;
static bool arg_deltas = true;
static unsigned arg_window = VPROF_WINDOW_SECONDS_DEFAULT;
static unsigned arg_bucket = 2000;
static uint64_t bucket_samples, bucket_usec;

/* Functions as start << 16 | size (sizes capped): sorting them sorts by address (within one set: user or
 * kernel). Canonical x86-64 addresses carry their top 16 bits in bit 47, so the start comes back by an
 * arithmetic shift: a kernel address too, whose top bits the packing dropped. */
typedef struct AddressSet {
        uint64_t *addr;
        size_t n, allocated;
} AddressSet;

#define FN_START(x) ((uint64_t)((int64_t)(x) >> 16))
#define FN_SIZE(x) ((x) & 0xffff)

static int address_set_add(AddressSet *s, uint64_t start, uint64_t size)
{
        if (s->n == s->allocated) {
                size_t n = MAX(s->allocated * 2, (size_t)1024);
                uint64_t *a = realloc(s->addr, n * sizeof(uint64_t));
                if (!a)
                        return -ENOMEM;
                s->addr = a;
                s->allocated = n;
        }
        s->addr[s->n++] = start << 16 | MIN(size, (uint64_t)0xffff);
        return 0;
}

static uint64_t rng_state = 0x9e3779b97f4a7c15u;

static uint64_t rng(void)
{
        /* xorshift64*: repeatable runs. */
        rng_state ^= rng_state >> 12;
        rng_state ^= rng_state << 25;
        rng_state ^= rng_state >> 27;
        return rng_state * 0x2545f4914f6cdd1du;
}

static double rng_unit(void)
{
        return (double)(rng() >> 11) / (double)(1ull << 53);
}

/* Addresses in the middle of every sized function of one loaded object: its .symtab, else its .dynsym. */
static int collect_object(struct dl_phdr_info *info, size_t size _unused_, void *userdata)
{
        AddressSet *set = userdata;
        const char *path = info->dlpi_name && info->dlpi_name[0] ? info->dlpi_name : "/proc/self/exe";
        _cleanup_close_ int fd = -1;
        Elf_Scn *scn = NULL, *symtab = NULL, *dynsym = NULL;
        Elf *elf;

        if (strstr(path, "linux-vdso"))
                return 0;
        fd = open(path, O_RDONLY | O_CLOEXEC);
        if (fd < 0)
                return 0;
        elf = elf_begin(fd, ELF_C_READ, NULL);
        if (!elf)
                return 0;
        while ((scn = elf_nextscn(elf, scn))) {
                GElf_Shdr sh;
                if (!gelf_getshdr(scn, &sh))
                        continue;
                if (sh.sh_type == SHT_SYMTAB)
                        symtab = scn;
                else if (sh.sh_type == SHT_DYNSYM)
                        dynsym = scn;
        }
        scn = symtab ?: dynsym;
        if (scn) {
                Elf_Data *data = elf_getdata(scn, NULL);
                GElf_Shdr sh;
                gelf_getshdr(scn, &sh);
                for (size_t i = 0; data && sh.sh_entsize && i < sh.sh_size / sh.sh_entsize; i++) {
                        GElf_Sym sym;
                        if (!gelf_getsym(data, (int)i, &sym) || GELF_ST_TYPE(sym.st_info) != STT_FUNC ||
                            sym.st_shndx == SHN_UNDEF || sym.st_size < 8)
                                continue;
                        if (address_set_add(set, info->dlpi_addr + sym.st_value, sym.st_size) < 0)
                                break;
                }
        }
        elf_end(elf);
        return 0;
}

static int compare_u64(const void *a, const void *b)
{
        uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
        return x < y ? -1 : x > y;
}

/* n distinct addresses of s, at random (fewer if s has fewer). */
static size_t pick(AddressSet *s, size_t n)
{
        size_t u = 0;

        qsort(s->addr, s->n, sizeof(uint64_t), compare_u64);
        for (size_t i = 0; i < s->n; i++)
                if (u == 0 || FN_START(s->addr[i]) != FN_START(s->addr[u - 1]))
                        s->addr[u++] = s->addr[i];
        s->n = u;
        for (size_t i = 0; i + 1 < s->n; i++) {
                size_t j = i + rng() % (s->n - i);
                uint64_t t = s->addr[i];
                s->addr[i] = s->addr[j];
                s->addr[j] = t;
        }
        s->n = MIN(s->n, n);
        /* Sorted again, for function_index(): the draws pick at random anyway. */
        qsort(s->addr, s->n, sizeof(uint64_t), compare_u64);
        return s->n;
}

static int collect_kernel(AddressSet *set)
{
        _cleanup_fclose_ FILE *f = fopen("/proc/kallsyms", "re");
        char line[512];

        if (!f)
                return -errno;
        while (fgets(line, sizeof(line), f)) {
                uint64_t addr;
                char type;
                if (sscanf(line, "%" SCNx64 " %c", &addr, &type) != 2 || addr == 0 || (type != 't' && type != 'T'))
                        continue;
                if (strchr(line, '['))
                        continue; /* module code: keep to the kernel image */
                if (address_set_add(set, addr, 16) < 0)
                        return -ENOMEM;
        }
        return 0;
}

typedef struct Workload {
        AddressSet user, kernel;
        uint64_t *stacks; /* arg_stacks * arg_depth user frames, innermost first */
        uint8_t *records; /* BATCH records of stride bytes */
        size_t stride;
        uint64_t time_ns;
} Workload;

/* An address in function fn: one of LEAF_IPS instructions where a sample lands in it (its hot ones), or, for a
 * return address, one of CALL_SITES calls in it. */
#define LEAF_IPS 16
#define CALL_SITES 4

static uint64_t address_in(uint64_t fn, unsigned k, unsigned n)
{
        return FN_START(fn) + FN_SIZE(fn) * (k % n + 1) / (n + 1);
}

static void fill_stack(Workload *w, uint64_t *frames)
{
        /* The outermost frames from a few functions (main, a thread start, an event loop), the rest at
         * random: stacks share their roots as real ones do. The leaf's instruction is drawn per sample
         * (make_record()). */
        for (unsigned i = 0; i < arg_depth; i++) {
                size_t pool = i + 4 >= arg_depth ? MIN(w->user.n, (size_t)8) : w->user.n;
                uint64_t fn = w->user.addr[rng() % pool];
                frames[i] = i == 0 ? fn : address_in(fn, (unsigned)rng(), CALL_SITES);
        }
}

/* One record as the BPF program writes it; frames: the user stack, innermost first. */
static const struct vprof_sample *make_record(Workload *w, size_t slot, const uint64_t *frames)
{
        struct vprof_sample *s = (struct vprof_sample *)(w->records + slot * w->stride);
        unsigned kdepth = 0;

        if (w->kernel.n > 0 && rng() % 100 < arg_kernel_percent) {
                kdepth = 2 + (unsigned)(rng() % (MAX_KERNEL_DEPTH - 1));
                for (unsigned i = 0; i < kdepth; i++)
                        s->frames[i] = FN_START(w->kernel.addr[rng() % w->kernel.n]) + 4;
        }
        s->tgid = (uint32_t)getpid();
        s->tid = s->tgid + (uint32_t)(rng() % 4);
        s->cpu = 0;
        s->flags = kdepth > 0 ? VPROF_SAMPLE_KERNEL_MODE : 0;
        s->period = 10000000;
        s->time_ns = (w->time_ns += 1000);
        s->kernel_depth = (uint16_t)kdepth;
        s->user_depth = (uint16_t)arg_depth;
        s->exec_count = 0;
        memcpy(s->comm, "bench-worker", sizeof("bench-worker"));
        s->user_sp = 0x7ffc00001000;
        s->user_bp = s->user_sp + 8 * 4;
        s->window_words = VPROF_STACK_WINDOW_WORDS;
        /* Wherever the leaf's CFI puts its return address, it is the walk's next frame. */
        for (unsigned i = 0; i < VPROF_STACK_WINDOW_WORDS; i++)
                s->user_window[i] = arg_depth > 1 ? frames[1] : 0;
        memcpy(s->frames + kdepth, frames, arg_depth * sizeof(uint64_t));
        s->frames[kdepth] = address_in(frames[0], (unsigned)rng(), LEAF_IPS);
        return s;
}

static void fill_batch(Workload *w, size_t n)
{
        uint64_t fresh[VPROF_MAX_USER_FRAMES];

        for (size_t i = 0; i < n; i++) {
                const uint64_t *frames;
                if (rng() % 1000000 < arg_new_ppm) {
                        fill_stack(w, fresh);
                        frames = fresh;
                } else {
                        double u = rng_unit();
                        frames = w->stacks + (size_t)(u * u * arg_stacks) * arg_depth;
                }
                make_record(w, i, frames);
        }
}

static _noipa_ int add_batch(Drain *d, Target *t, const Workload *w, size_t n)
{
        for (size_t i = 0; i < n; i++) {
                int r = drain_sample(d, t, (const struct vprof_sample *)(w->records + i * w->stride));
                if (r < 0)
                        return r;
                /* The second closes, as the daemon's manager_close_second() closes it (the journal's record left
                 * out): at 999 Hz on two busy CPUs, a second is about --bucket samples. */
                if (t->delta && ++bucket_samples >= arg_bucket) {
                        profile_delta_end(t->delta, t->profile);
                        r = target_close_second(t, bucket_usec += 1000000);
                        if (r < 0)
                                return r;
                        bucket_samples = 0;
                }
        }
        return 0;
}

/* The cold pass, apart from add_batch() so that callgrind's --toggle-collect=add_batch leaves it out (noipa:
 * not folded into it as identical code). */
static _noipa_ int add_cold_batch(Drain *d, Target *t, const Workload *w, size_t n)
{
        for (size_t i = 0; i < n; i++) {
                int r = drain_sample(d, t, (const struct vprof_sample *)(w->records + i * w->stride));
                if (r < 0)
                        return r;
        }
        return 0;
}

static uint64_t now_ns(void)
{
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* Seconds spent in add_batch() for n samples. */
static int timed_samples(Drain *d, Target *t, Workload *w, uint64_t n, double *ret)
{
        uint64_t spent = 0;
        int r;

        for (uint64_t done = 0; done < n;) {
                size_t b = (size_t)MIN(n - done, (uint64_t)BATCH);
                uint64_t start;
                fill_batch(w, b);
                start = now_ns();
                r = add_batch(d, t, w, b);
                spent += now_ns() - start;
                if (r < 0)
                        return r;
                done += b;
        }
        *ret = (double)spent / 1e9;
        return 0;
}

static int compare_double(const void *a, const void *b)
{
        double x = *(const double *)a, y = *(const double *)b;
        return x < y ? -1 : x > y;
}

static double median(double *v, size_t n)
{
        qsort(v, n, sizeof(double), compare_double);
        return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* The aggregation alone: the same kind of stacks as function ids, through profile_add_sample(). */
static __attribute__((noinline)) int add_profile_batch(Profile *p, const uint32_t *ids, const uint32_t *n_frames,
                                                       size_t n)
{
        for (size_t i = 0; i < n; i++) {
                int r = profile_add_sample(p, &(ProfileSample){
                        .tid = 1000 + (uint32_t)(i % 4),
                        .thread_name = "bench-worker",
                        .frames = ids + i * (MAX_KERNEL_DEPTH + VPROF_MAX_USER_FRAMES),
                        .n_frames = n_frames[i],
                        .kind = PROFILE_SAMPLE_USER,
                });
                if (r < 0)
                        return r;
        }
        return 0;
}

/* The index in s of the function of a stack frame: frame 0 of a base stack is the function itself. */
static size_t function_index(const AddressSet *s, uint64_t frame, bool leaf)
{
        uint64_t addr = leaf ? FN_START(frame) : frame;
        size_t lo = 0, hi = s->n;

        while (lo < hi) {
                size_t mid = lo + (hi - lo) / 2;
                if (FN_START(s->addr[mid]) <= addr)
                        lo = mid + 1;
                else
                        hi = mid;
        }
        return lo - 1;
}

static int profile_only(Workload *w, double *ret_rate)
{
        const size_t width = MAX_KERNEL_DEPTH + VPROF_MAX_USER_FRAMES;
        _cleanup_(profile_freep) Profile *p = NULL;
        _cleanup_free_ uint32_t *ids = calloc(BATCH * width, sizeof(uint32_t));
        _cleanup_free_ uint32_t *n_frames = calloc(BATCH, sizeof(uint32_t));
        _cleanup_free_ uint32_t *fn = calloc(w->user.n, sizeof(uint32_t));
        double runs[RUNS_MAX];
        int r;

        if (!ids || !n_frames || !fn)
                return -ENOMEM;
        r = profile_new(99, &p);
        if (r < 0)
                return r;
        profile_set_limits(p, VPROF_MAX_FUNCTIONS_DEFAULT, VPROF_MAX_STACKS_DEFAULT);
        for (size_t i = 0; i < w->user.n; i++) {
                char name[32];
                snprintf(name, sizeof(name), "function_%zu", i);
                r = profile_intern_function(p, i % 7 == 0 ? "libfoo.so" : "bench", name, &fn[i]);
                if (r < 0)
                        return r;
        }
        for (unsigned run = 0; run < arg_runs; run++) {
                uint64_t spent = 0;
                for (uint64_t done = 0; done < arg_samples;) {
                        size_t b = (size_t)MIN(arg_samples - done, (uint64_t)BATCH);
                        uint64_t start;
                        for (size_t i = 0; i < b; i++) {
                                /* Same draw as fill_batch(), user frames as ids: index into user.addr. */
                                uint64_t fresh[VPROF_MAX_USER_FRAMES];
                                const uint64_t *frames;
                                if (rng() % 1000000 < arg_new_ppm) {
                                        fill_stack(w, fresh);
                                        frames = fresh;
                                } else {
                                        double u = rng_unit();
                                        frames = w->stacks + (size_t)(u * u * arg_stacks) * arg_depth;
                                }
                                for (unsigned k = 0; k < arg_depth; k++)
                                        ids[i * width + k] = fn[function_index(&w->user, frames[k], k == 0)];
                                n_frames[i] = arg_depth;
                        }
                        start = now_ns();
                        r = add_profile_batch(p, ids, n_frames, b);
                        spent += now_ns() - start;
                        if (r < 0)
                                return r;
                        done += b;
                }
                runs[run] = (double)arg_samples / ((double)spent / 1e9);
        }
        *ret_rate = median(runs, arg_runs);
        return 0;
}

static void help(void)
{
        printf("%s [OPTIONS]\n\n"
               "Samples per second through drain_sample() (symbolization + aggregation), one core.\n\n"
               "  --samples=N        samples per timed run (%" PRIu64 ")\n"
               "  --runs=N           timed runs, the median is printed (%u)\n"
               "  --functions=N      distinct user functions (%u)\n"
               "  --stacks=N         distinct base stacks (%u)\n"
               "  --depth=N          user frames per stack (%u)\n"
               "  --new-ppm=N        samples per million with a new stack (%u)\n"
               "  --kernel-percent=N samples with kernel frames, if /proc/kallsyms has addresses (%u)\n"
               "  --max-stacks=N     the target's stack limit (%u)\n"
               "  --no-deltas        without the journal's per-second deltas (vprofd --journal-interval=0;\n"
               "                     with --window=0 also, no delta at all)\n"
               "  --window=N         seconds of buckets in the time windows' ring (vprofd --window-seconds;\n"
               "                     %u, 0: no ring)\n"
               "  --bucket=N         samples in a delta before it begins afresh, as after a journal record\n"
               "                     (%u: about a second at 999 Hz on two busy CPUs)\n"
               "  --write-state=DIR  save the target's tables in DIR as the daemon does (targets.state): a\n"
               "                     vprofd started on DIR keeps them as an exited target\n"
               "  --query=PID        instead: time GetFunctions(PID, inclusive, --limit) on the system bus\n"
               "                     ($DBUS_SYSTEM_BUS_ADDRESS) --calls times; prints median, p99, reply bytes\n"
               "  --json             one JSON object instead of text\n",
               program_invocation_short_name, arg_samples, arg_runs, arg_functions, arg_stacks, arg_depth,
               arg_new_ppm, arg_kernel_percent, arg_max_stacks, arg_window, arg_bucket);
}

static int parse_argv(int argc, char *argv[])
{
        enum {
                ARG_SAMPLES = 0x100, ARG_RUNS, ARG_FUNCTIONS, ARG_STACKS, ARG_DEPTH, ARG_NEW_PPM, ARG_KERNEL,
                ARG_MAX_STACKS, ARG_QUERY, ARG_CALLS, ARG_LIMIT, ARG_BUCKET, ARG_WINDOW, ARG_JSON,
                ARG_WRITE_STATE, ARG_NO_DELTAS,
        };
        static const struct option options[] = {
                { "help", no_argument, NULL, 'h' },
                { "samples", required_argument, NULL, ARG_SAMPLES },
                { "runs", required_argument, NULL, ARG_RUNS },
                { "functions", required_argument, NULL, ARG_FUNCTIONS },
                { "stacks", required_argument, NULL, ARG_STACKS },
                { "depth", required_argument, NULL, ARG_DEPTH },
                { "new-ppm", required_argument, NULL, ARG_NEW_PPM },
                { "kernel-percent", required_argument, NULL, ARG_KERNEL },
                { "max-stacks", required_argument, NULL, ARG_MAX_STACKS },
                { "write-state", required_argument, NULL, ARG_WRITE_STATE },
                { "query", required_argument, NULL, ARG_QUERY },
                { "calls", required_argument, NULL, ARG_CALLS },
                { "limit", required_argument, NULL, ARG_LIMIT },
                { "json", no_argument, NULL, ARG_JSON },
                { "bucket", required_argument, NULL, ARG_BUCKET },
                { "window", required_argument, NULL, ARG_WINDOW },
                { "no-deltas", no_argument, NULL, ARG_NO_DELTAS },
                {}
        };
        int c;

        while ((c = getopt_long(argc, argv, "h", options, NULL)) >= 0) {
                unsigned long long v = 0;
                if (c >= ARG_SAMPLES && c < ARG_JSON) {
                        char *end;
                        errno = 0;
                        v = strtoull(optarg, &end, 10);
                        if (errno || *end || optarg == end)
                                return log_error_errno(-EINVAL, "Invalid number: %s", optarg);
                }
                switch (c) {
                case 'h':
                        help();
                        return 0;
                case ARG_SAMPLES:
                        arg_samples = MAX(v, 1ull);
                        break;
                case ARG_RUNS:
                        arg_runs = (unsigned)MIN(MAX(v, 1ull), (unsigned long long)RUNS_MAX);
                        break;
                case ARG_FUNCTIONS:
                        arg_functions = (unsigned)MAX(v, 16ull);
                        break;
                case ARG_STACKS:
                        arg_stacks = (unsigned)MAX(v, 1ull);
                        break;
                case ARG_DEPTH:
                        arg_depth = (unsigned)MIN(MAX(v, 1ull), (unsigned long long)VPROF_MAX_USER_FRAMES);
                        break;
                case ARG_NEW_PPM:
                        arg_new_ppm = (unsigned)MIN(v, 1000000ull);
                        break;
                case ARG_KERNEL:
                        arg_kernel_percent = (unsigned)MIN(v, 100ull);
                        break;
                case ARG_MAX_STACKS:
                        arg_max_stacks = (unsigned)MIN(MAX(v, 1ull), 16777216ull);
                        break;
                case ARG_QUERY:
                        arg_query_pid = (uint32_t)v;
                        break;
                case ARG_CALLS:
                        arg_calls = (unsigned)MIN(MAX(v, 1ull), 100000ull);
                        break;
                case ARG_LIMIT:
                        arg_limit = (uint32_t)MIN(v, (unsigned long long)UINT32_MAX);
                        break;
                case ARG_WRITE_STATE:
                        arg_write_state = optarg;
                        break;
                case ARG_BUCKET:
                        arg_bucket = (unsigned)MIN(MAX(v, 1ull), 100000000ull);
                        break;
                case ARG_WINDOW:
                        arg_window = (unsigned)MIN(v, 86400ull);
                        break;
                case ARG_NO_DELTAS:
                        arg_deltas = false;
                        break;
                case ARG_JSON:
                        arg_json = true;
                        break;
                default:
                        return -EINVAL;
                }
        }
        return 1;
}

/* What target_new() makes, without the pidfd: valgrind 3.19 (Debian 12), for callgrind, lacks pidfd_open(). */
static int target_new_unpinned(const TargetContext *c, Target **ret)
{
        _cleanup_(target_freep) Target *t = calloc(1, sizeof(*t));
        struct timespec ts;
        int r;

        if (!t)
                return -ENOMEM;
        t->pidfd = -1;
        t->pid = getpid();
        clock_gettime(CLOCK_MONOTONIC, &ts);
        t->epoch_ns = (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
        r = proc_info_read(t->pid, &t->info);
        if (r < 0)
                return r;
        r = target_alloc_tables(t, c);
        if (r < 0)
                return r;
        r = address_space_new(c->symbolizer, t->pid, &t->address_space);
        if (r < 0)
                return r;
        *ret = TAKE_PTR(t);
        return 0;
}

/* GetFunctions latency as a client sees it: the call, the daemon's work and the reply's transfer. */
static int query(void)
{
        _cleanup_(sd_bus_flush_close_unrefp) sd_bus *bus = NULL;
        _cleanup_free_ double *ms = calloc(arg_calls, sizeof(double));
        char target[16];
        size_t n_rows = 0;
        int r;

        if (!ms)
                return -ENOMEM;
        snprintf(target, sizeof(target), "%" PRIu32, arg_query_pid);
        r = sd_bus_open_system(&bus);
        if (r < 0)
                return log_error_errno(r, "Cannot connect to the system bus: %m");
        for (unsigned i = 0; i < arg_calls; i++) {
                _cleanup_(sd_bus_message_unrefp) sd_bus_message *reply = NULL;
                sd_bus_error error = SD_BUS_ERROR_NULL;
                uint64_t start = now_ns();

                r = sd_bus_call_method(bus, VPROF_BUS_NAME, VPROF_BUS_PATH, VPROF_BUS_INTERFACE, "GetFunctions",
                                       &error, &reply, "ssut", target, "inclusive", arg_limit, UINT64_C(0));
                ms[i] = (double)(now_ns() - start) / 1e6;
                if (r < 0) {
                        log_error_errno(r, "GetFunctions: %s", error.message ?: "failed");
                        sd_bus_error_free(&error);
                        return r;
                }
        }
        {
                _cleanup_(sd_bus_message_unrefp) sd_bus_message *reply = NULL;
                r = sd_bus_call_method(bus, VPROF_BUS_NAME, VPROF_BUS_PATH, VPROF_BUS_INTERFACE, "GetFunctions",
                                       NULL, &reply, "ssut", target, "inclusive", arg_limit, UINT64_C(0));
                /* The rows of the reply, counted apart from the timed calls. */
                if (r >= 0 && sd_bus_message_skip(reply, "t(tt)") >= 0 &&
                    sd_bus_message_enter_container(reply, 'a', NULL) > 0)
                        while (sd_bus_message_skip(reply, NULL) > 0)
                                n_rows++;
        }
        qsort(ms, arg_calls, sizeof(double), compare_double);
        if (arg_json)
                printf("{\"calls\": %u, \"limit\": %u, \"median_ms\": %.3f, \"p99_ms\": %.3f, \"max_ms\": %.3f, "
                       "\"rows\": %zu}\n",
                       arg_calls, arg_limit, median(ms, arg_calls), ms[(size_t)((arg_calls - 1) * 0.99)],
                       ms[arg_calls - 1], n_rows);
        else
                printf("GetFunctions limit %u: median %.3f ms, p99 %.3f ms over %u calls, %zu rows\n", arg_limit,
                       median(ms, arg_calls), ms[(size_t)((arg_calls - 1) * 0.99)], arg_calls, n_rows);
        return 0;
}

static void workload_done(Workload *w)
{
        free(w->user.addr);
        free(w->kernel.addr);
        free(w->stacks);
        free(w->records);
}

static int run(int argc, char *argv[])
{
        _cleanup_(workload_done) Workload w = {};
        _cleanup_(manager_freep) Manager *m = NULL;
        _cleanup_(state_store_freep) StateStore *state = NULL;
        _cleanup_(target_freep) Target *t = NULL;
        TargetContext context;
        double runs[RUNS_MAX], cold, rate, profile_rate;
        size_t n_functions, n_stacks, window_bytes = 0;
        uint32_t window_buckets = 0;
        pid_t tgid;
        int r;

        r = parse_argv(argc, argv);
        if (r <= 0)
                return r;
        if (arg_query_pid > 0)
                return query();
        elf_version(EV_CURRENT);
        dl_iterate_phdr(collect_object, &w.user);
        if (pick(&w.user, arg_functions) < 16)
                return log_error_errno(-ENOENT, "Found only %zu functions in the loaded objects.", w.user.n);
        if (collect_kernel(&w.kernel) >= 0)
                pick(&w.kernel, KERNEL_FUNCTIONS);
        else
                w.kernel.n = 0;

        w.stride = (VPROF_SAMPLE_SIZE(MAX_KERNEL_DEPTH + arg_depth) + 7) & ~(size_t)7;
        w.records = calloc(BATCH, w.stride);
        w.stacks = calloc((size_t)arg_stacks * arg_depth, sizeof(uint64_t));
        if (!w.records || !w.stacks)
                return log_error_errno(-ENOMEM, "Out of memory.");
        for (unsigned i = 0; i < arg_stacks; i++)
                fill_stack(&w, w.stacks + (size_t)i * arg_depth);

        r = manager_new(&(SamplerConfig){ .frequency = 99 }, &m);
        if (r < 0)
                return log_error_errno(r, "Cannot make a manager: %m");
        m->max_functions = VPROF_MAX_FUNCTIONS_DEFAULT;
        m->max_stacks = arg_max_stacks;
        m->keep_deltas = arg_deltas; /* as vprofd with its default journal */
        m->window_seconds = arg_window; /* and its default windows */
        m->window_bytes = (size_t)VPROF_WINDOW_MIB_DEFAULT << 20;
        context = manager_target_context(m);
        r = target_new(&context, getpid(), 0, 0, &t, &tgid);
        if (r == -ENOSYS)
                r = target_new_unpinned(&context, &t);
        if (r < 0)
                return log_error_errno(r, "Cannot attach this process: %m");
        w.time_ns = t->epoch_ns;

        /* Cold: every base stack once, so every address is symbolized (and every file's symbols read). */
        {
                uint64_t start = now_ns();
                for (unsigned i = 0; i < arg_stacks; i += BATCH) {
                        size_t b = MIN((size_t)(arg_stacks - i), (size_t)BATCH);
                        for (size_t k = 0; k < b; k++)
                                make_record(&w, k, w.stacks + (size_t)(i + k) * arg_depth);
                        r = add_cold_batch(&m->drain, t, &w, b);
                        if (r < 0)
                                return log_error_errno(r, "Cannot add a sample: %m");
                }
                cold = (double)(now_ns() - start) / 1e9;
        }

        for (unsigned i = 0; i < arg_runs; i++) {
                double sec;
                r = timed_samples(&m->drain, t, &w, arg_samples, &sec);
                if (r < 0)
                        return log_error_errno(r, "Cannot add a sample: %m");
                runs[i] = (double)arg_samples / sec;
        }
        rate = median(runs, arg_runs);
        r = profile_only(&w, &profile_rate);
        if (r < 0)
                return log_error_errno(r, "Cannot count a sample: %m");

        n_functions = profile_n_functions(t->profile);
        n_stacks = profile_n_stacks(t->profile);
        if (t->window) {
                window_buckets = profile_window_n_buckets(t->window);
                window_bytes = profile_window_bytes(t->window);
        }
        if (arg_write_state) {
                /* The daemon's own saving: the tables as a target of this process, which will be gone when a
                 * daemon reads them. */
                r = hashmap_put(m->targets, UINT64_TO_PTR((uint64_t)t->pid), t);
                if (r < 0)
                        return log_error_errno(r, "Cannot add the target: %m");
                TAKE_PTR(t);
                state_store_setup(m, arg_write_state, 0, 0, &state);
                if (!state)
                        return log_error_errno(-EIO, "Cannot use %s.", arg_write_state);
                r = state_store_save(state);
                if (r < 0)
                        return r;
        }
        if (arg_json)
                printf("{\"samples_per_sec\": %.0f, \"profile_only_samples_per_sec\": %.0f, \"runs\": %u, "
                       "\"samples_per_run\": %" PRIu64 ", \"cold_pass_sec\": %.4f, \"cold_pass_samples\": %u, "
                       "\"user_functions\": %zu, \"kernel_functions\": %zu, \"base_stacks\": %u, \"depth\": %u, "
                       "\"new_ppm\": %u, \"kernel_percent\": %u, \"profile_functions\": %zu, "
                       "\"profile_stacks\": %zu, \"journal_deltas\": %s, \"window_seconds\": %u, "
                       "\"window_buckets\": %u, \"window_bytes\": %zu}\n",
                       rate, profile_rate, arg_runs, arg_samples, cold, arg_stacks, w.user.n, w.kernel.n, arg_stacks,
                       arg_depth, arg_new_ppm, w.kernel.n ? arg_kernel_percent : 0, n_functions, n_stacks,
                       arg_deltas ? "true" : "false", arg_window, window_buckets, window_bytes);
        else {
                printf("workload: %zu user functions (%zu kernel), %u base stacks of %u user frames, "
                       "%u ppm new stacks, %u%% with kernel frames\n",
                       w.user.n, w.kernel.n, arg_stacks, arg_depth, arg_new_ppm, w.kernel.n ? arg_kernel_percent : 0);
                printf("cold pass (every address symbolized): %u samples in %.1f ms\n", arg_stacks, cold * 1e3);
                printf("drain_sample: %.0f samples/s (median of %u runs of %" PRIu64 ")%s%s\n", rate, arg_runs,
                       arg_samples, arg_deltas || arg_window ? ", with the per-second deltas" : "",
                       arg_window ? " and the windows' ring" : "");
                if (arg_window)
                        printf("window ring: %u buckets of %u samples in %zu bytes\n", window_buckets, arg_bucket,
                               window_bytes);
                printf("profile_add_sample alone: %.0f samples/s (median of %u runs)\n", profile_rate, arg_runs);
                printf("profile: %zu functions, %zu stacks\n", n_functions, n_stacks);
        }
        return 0;
}

int main(int argc, char *argv[])
{
        return run(argc, argv) < 0 ? EXIT_FAILURE : EXIT_SUCCESS;
}
