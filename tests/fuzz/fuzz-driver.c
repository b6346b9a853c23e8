/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* main() of a parser fuzz harness when libFuzzer is not at hand (the compiler is gcc, as in the sanitizer
 * build that tools/test.sh runs): it replays the seed inputs, then mutates them at random for a time budget.
 * Without coverage feedback it keeps a pool of recent mutants to mutate further, so that mutations stack up.
 *
 *   fuzz-NAME [--seconds=N] [--runs=N] [--seed=N] [--max-len=N] [--timeout=N] [--artifacts=DIR] INPUT...
 *
 * INPUT: seed files, or directories of them. --seconds=0 replays the inputs only (to reproduce a crash). A
 * crash, a sanitizer report or an input running longer than --timeout seconds leaves the input in DIR as
 * NAME-crash-SEED-PID or NAME-timeout-SEED-PID, and the driver dies of it; --seed=SEED replays the run. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "fuzz-input.h"
#include "fuzz-random.h"
#include "macros.h"

/* The harness may have no initializer; the sanitizers offer a hook to run before they end the process. */
__attribute__((weak)) int LLVMFuzzerInitialize(int *argc, char ***argv);
__attribute__((weak)) void __sanitizer_set_death_callback(void (*callback)(void));

#define POOL_MAX 256

typedef struct Input {
        uint8_t *data;
        size_t size;
} Input;

typedef struct Corpus {
        Input *inputs;
        size_t n, allocated;
} Corpus;

static uint64_t arg_seconds = 20, arg_runs, arg_seed, arg_max_len = 1 << 20, arg_timeout = 10;
static const char *arg_artifacts = ".";

/* What the signal handlers save: the input being run. */
static const uint8_t *current_data;
static size_t current_size;
static char crash_path[PATH_MAX], timeout_path[PATH_MAX];

static void save_current(const char *path)
{
        int fd;

        if (!current_data)
                return;
        fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
        if (fd < 0)
                return;
        for (size_t done = 0; done < current_size;) {
                ssize_t n = write(fd, current_data + done, current_size - done);
                if (n <= 0)
                        break;
                done += (size_t)n;
        }
        close(fd);
        (void)!write(STDERR_FILENO, "fuzz-driver: input saved to ", 28);
        (void)!write(STDERR_FILENO, path, strlen(path));
        (void)!write(STDERR_FILENO, "\n", 1);
        current_data = NULL;
}

static void on_death(void)
{
        save_current(crash_path);
}

static void on_fatal_signal(int sig)
{
        save_current(sig == SIGALRM ? timeout_path : crash_path);
        if (sig == SIGALRM)
                (void)!write(STDERR_FILENO, "fuzz-driver: an input ran past the timeout\n", 43);
        signal(sig == SIGALRM ? SIGABRT : sig, SIG_DFL);
        raise(sig == SIGALRM ? SIGABRT : sig);
}

static uint64_t now_usec(void)
{
        struct timespec ts;

        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (uint64_t)ts.tv_sec * 1000000 + (uint64_t)ts.tv_nsec / 1000;
}

static int corpus_add(Corpus *c, const uint8_t *data, size_t size)
{
        uint8_t *copy = malloc(MAX(size, (size_t)1));

        if (!copy)
                return -ENOMEM;
        memcpy(copy, data, size);
        if (c->n == c->allocated) {
                size_t a = MAX(c->allocated * 2, (size_t)16);
                Input *inputs = realloc(c->inputs, a * sizeof(Input));

                if (!inputs) {
                        free(copy);
                        return -ENOMEM;
                }
                c->inputs = inputs;
                c->allocated = a;
        }
        c->inputs[c->n++] = (Input) { .data = copy, .size = size };
        return 0;
}

static void corpus_done(Corpus *c)
{
        for (size_t i = 0; i < c->n; i++)
                free(c->inputs[i].data);
        free(c->inputs);
}

static int load_file(Corpus *c, const char *path)
{
        _cleanup_close_ int fd = open(path, O_RDONLY | O_CLOEXEC);
        _cleanup_free_ uint8_t *buf = NULL;
        size_t size = 0;
        ssize_t n;

        if (fd < 0)
                return negative_errno();
        buf = malloc(arg_max_len + 1);
        if (!buf)
                return -ENOMEM;
        while (size < arg_max_len && (n = read(fd, buf + size, arg_max_len - size)) > 0)
                size += (size_t)n;
        return corpus_add(c, buf, size);
}

static void closedirp(DIR **d)
{
        if (*d)
                closedir(*d);
}

static int load_inputs(Corpus *c, const char *path)
{
        _cleanup_(closedirp) DIR *d = NULL;
        struct dirent *de;
        struct stat st;
        int r;

        if (stat(path, &st) < 0)
                return negative_errno();
        if (!S_ISDIR(st.st_mode))
                return load_file(c, path);
        d = opendir(path);
        if (!d)
                return negative_errno();
        while ((de = readdir(d))) {
                char p[PATH_MAX];

                if (de->d_name[0] == '.')
                        continue;
                snprintf(p, sizeof(p), "%s/%s", path, de->d_name);
                if (stat(p, &st) < 0 || !S_ISREG(st.st_mode))
                        continue;
                r = load_file(c, p);
                if (r < 0)
                        return r;
        }
        return 0;
}

static void run(const uint8_t *data, size_t size)
{
        current_data = data;
        current_size = size;
        alarm((unsigned)arg_timeout);
        LLVMFuzzerTestOneInput(data, size);
        alarm(0);
        current_data = NULL;
}

/* Values at the edges of integer types and of sizes, where parsers go wrong. */
static const uint64_t interesting[] = {
        0, 1, 2, 3, 4, 7, 8, 15, 16, 31, 32, 63, 64, 127, 128, 255, 256, 512, 1000, 1024, 4095, 4096, 32767,
        32768, 65535, 65536, 0x7fffffff, 0x80000000, 0xfffffffe, 0xffffffff, UINT64_C(0x100000000),
        UINT64_C(0x7fffffffffffffff), UINT64_C(0x8000000000000000), UINT64_C(0xfffffffffffffffe),
        UINT64_C(0xffffffffffffffff),
};

static void put_int(uint8_t *p, size_t width, uint64_t v, bool big_endian)
{
        for (size_t i = 0; i < width; i++)
                p[big_endian ? width - 1 - i : i] = (uint8_t)(v >> (8 * i));
}

static uint64_t get_int(const uint8_t *p, size_t width)
{
        uint64_t v = 0;

        for (size_t i = 0; i < width; i++)
                v |= (uint64_t)p[i] << (8 * i);
        return v;
}

/* One mutation of buf (size bytes of capacity arg_max_len) in place; returns the new size. */
static size_t mutate_once(Rng *rng, uint8_t *buf, size_t size, const Corpus *corpus)
{
        static const size_t widths[] = { 1, 2, 4, 8 };
        size_t width, at, len;
        uint64_t value;

        switch (rng_below(rng, 11)) {
        case 0: /* flip a few bits */
                for (uint64_t i = 0, n = 1 + rng_below(rng, 4); size > 0 && i < n; i++)
                        buf[rng_below(rng, size)] ^= (uint8_t)(1u << rng_below(rng, 8));
                return size;
        case 1: /* a random byte */
                if (size > 0)
                        buf[rng_below(rng, size)] = (uint8_t)rng_next(rng);
                return size;
        case 2: /* an interesting integer */
        case 3:
                width = RNG_PICK(rng, widths);
                if (size < width)
                        return size;
                at = rng_below(rng, size - width + 1);
                /* Mostly a value from the table, sometimes the input's size or a neighbour of it. */
                value = rng_chance(rng, 20) ? size + rng_below(rng, 3) - 1 : RNG_PICK(rng, interesting);
                put_int(buf + at, width, value, rng_chance(rng, 20));
                return size;
        case 4: /* a small step up or down */
                width = RNG_PICK(rng, widths);
                if (size < width)
                        return size;
                at = rng_below(rng, size - width + 1);
                put_int(buf + at, width, get_int(buf + at, width) + rng_below(rng, 33) - 16, false);
                return size;
        case 5: /* cut the end */
                return size > 0 ? rng_below(rng, size) : 0;
        case 6: /* delete a block */
                if (size < 2)
                        return size;
                at = rng_below(rng, size);
                len = 1 + rng_below(rng, MIN(size - at, (size_t)256));
                memmove(buf + at, buf + at + len, size - at - len);
                return size - len;
        case 7: /* insert random bytes, or one byte repeated */
                len = 1 + rng_below(rng, 64);
                if (size + len > arg_max_len)
                        return size;
                at = rng_below(rng, size + 1);
                memmove(buf + at + len, buf + at, size - at);
                if (rng_chance(rng, 50))
                        memset(buf + at, (uint8_t)rng_next(rng), len);
                else
                        for (size_t i = 0; i < len; i++)
                                buf[at + i] = (uint8_t)rng_next(rng);
                return size + len;
        case 8: /* copy a block over another place of the input */
                if (size < 2)
                        return size;
                len = 1 + rng_below(rng, MIN(size / 2, (size_t)64));
                memmove(buf + rng_below(rng, size - len + 1), buf + rng_below(rng, size - len + 1), len);
                return size;
        default: { /* splice another input in: its tail after our head, or a chunk of it inserted */
                const Input *other = &corpus->inputs[rng_below(rng, corpus->n)];
                size_t from;

                if (other->size == 0)
                        return size;
                from = rng_below(rng, other->size);
                if (rng_chance(rng, 50)) {
                        at = size > 0 ? rng_below(rng, size) : 0;
                        len = MIN(other->size - from, arg_max_len - at);
                        memcpy(buf + at, other->data + from, len);
                        return at + len;
                }
                len = 1 + rng_below(rng, 256); /* not inside MIN(), which evaluates it twice */
                len = MIN(other->size - from, len);
                if (size + len > arg_max_len)
                        return size;
                at = rng_below(rng, size + 1);
                memmove(buf + at + len, buf + at, size - at);
                memcpy(buf + at, other->data + from, len);
                return size + len;
        }
        }
}

static int parse_number(const char *s, uint64_t *ret)
{
        char *end;

        errno = 0;
        *ret = strtoull(s, &end, 0);
        return errno == 0 && end != s && *end == '\0' ? 0 : -EINVAL;
}

int main(int argc, char *argv[])
{
        enum { ARG_SECONDS = 0x100, ARG_RUNS, ARG_SEED, ARG_MAX_LEN, ARG_TIMEOUT, ARG_ARTIFACTS };
        static const struct option options[] = {
                { "seconds", required_argument, NULL, ARG_SECONDS },
                { "runs", required_argument, NULL, ARG_RUNS },
                { "seed", required_argument, NULL, ARG_SEED },
                { "max-len", required_argument, NULL, ARG_MAX_LEN },
                { "timeout", required_argument, NULL, ARG_TIMEOUT },
                { "artifacts", required_argument, NULL, ARG_ARTIFACTS },
                {},
        };
        Corpus seeds = {}, pool = {};
        _cleanup_free_ uint8_t *buf = NULL;
        uint64_t start, deadline, elapsed, runs = 0;
        Rng rng;
        int c, r;

        if (LLVMFuzzerInitialize)
                LLVMFuzzerInitialize(&argc, &argv);

        arg_seed = (uint64_t)time(NULL) ^ ((uint64_t)getpid() << 32);
        while ((c = getopt_long(argc, argv, "", options, NULL)) >= 0) {
                uint64_t *target = c == ARG_SECONDS ? &arg_seconds
                                   : c == ARG_RUNS   ? &arg_runs
                                   : c == ARG_SEED   ? &arg_seed
                                   : c == ARG_MAX_LEN ? &arg_max_len
                                   : c == ARG_TIMEOUT ? &arg_timeout
                                                      : NULL;

                if (c == ARG_ARTIFACTS)
                        arg_artifacts = optarg;
                else if (!target || parse_number(optarg, target) < 0) {
                        fprintf(stderr, "%s: bad arguments; see the top of tests/fuzz/fuzz-driver.c\n",
                                argv[0]);
                        return EXIT_FAILURE;
                }
        }
        if (arg_max_len == 0 || arg_max_len > (UINT64_C(1) << 30) || arg_timeout == 0) {
                fprintf(stderr, "%s: --max-len and --timeout must be positive\n", argv[0]);
                return EXIT_FAILURE;
        }
        for (int i = optind; i < argc; i++) {
                r = load_inputs(&seeds, argv[i]);
                if (r < 0) {
                        fprintf(stderr, "%s: cannot read %s: %s\n", argv[0], argv[i], strerror(-r));
                        return EXIT_FAILURE;
                }
        }
        if (seeds.n == 0 && corpus_add(&seeds, (const uint8_t *)"", 0) < 0)
                return EXIT_FAILURE;

        snprintf(crash_path, sizeof(crash_path), "%s/%s-crash-%" PRIu64 "-%d", arg_artifacts,
                 program_invocation_short_name, arg_seed, (int)getpid());
        snprintf(timeout_path, sizeof(timeout_path), "%s/%s-timeout-%" PRIu64 "-%d", arg_artifacts,
                 program_invocation_short_name, arg_seed, (int)getpid());
        if (__sanitizer_set_death_callback)
                __sanitizer_set_death_callback(on_death);
        for (const int *s = (const int[]) { SIGSEGV, SIGBUS, SIGABRT, SIGFPE, SIGILL, SIGALRM, 0 }; *s; s++)
                signal(*s, on_fatal_signal);

        start = now_usec();
        for (size_t i = 0; i < seeds.n; i++, runs++)
                run(seeds.inputs[i].data, seeds.inputs[i].size);

        buf = malloc(arg_max_len);
        if (!buf)
                return EXIT_FAILURE;
        rng.state = arg_seed;
        deadline = start + arg_seconds * 1000000;
        /* The clock is read every 16 runs: a run of the small parsers takes a few microseconds. */
        while (arg_seconds > 0 && (arg_runs == 0 || runs < arg_runs) &&
               ((runs & 15) != 0 || now_usec() < deadline)) {
                const Input *base = pool.n > 0 && rng_chance(&rng, 50)
                                            ? &pool.inputs[rng_below(&rng, pool.n)]
                                            : &seeds.inputs[rng_below(&rng, seeds.n)];
                size_t size = MIN(base->size, (size_t)arg_max_len);

                memcpy(buf, base->data, size);
                for (uint64_t k = 0, n = 1 + rng_below(&rng, 6); k < n; k++)
                        size = mutate_once(&rng, buf, size, &seeds);
                run(buf, size);
                runs++;

                /* A few mutants stay, to be mutated again: a random walk away from the seeds. */
                if (rng_chance(&rng, 2)) {
                        if (pool.n < POOL_MAX)
                                (void)corpus_add(&pool, buf, size);
                        else {
                                Input *victim = &pool.inputs[rng_below(&rng, pool.n)];
                                uint8_t *copy = malloc(MAX(size, (size_t)1));

                                if (copy) {
                                        memcpy(copy, buf, size);
                                        free(victim->data);
                                        *victim = (Input) { .data = copy, .size = size };
                                }
                        }
                }
        }
        elapsed = MAX(now_usec() - start, (uint64_t)1);
        fprintf(stderr, "fuzz-driver: %" PRIu64 " runs in %.1f s (%.0f/s), %zu seeds, --seed=%" PRIu64 "\n",
                runs, (double)elapsed / 1e6, (double)runs * 1e6 / (double)elapsed, seeds.n, arg_seed);
        corpus_done(&seeds);
        corpus_done(&pool);
        return EXIT_SUCCESS;
}
