/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Code objects of a live /usr/bin/python3.11 (and pyenv's 3.8 to 3.13 where they are here) read through
 * process_vm_readv() (common/python/code-reader.h):
 * the script python-code-target.py prints the addresses of its code objects with their names, files, lines
 * per code unit and bytecode, and a suspended generator's line; the reader must find the same. Then the same
 * objects damaged in a copy laid over the process's memory (huge lengths, wrong types, wild pointers), and the
 * cache (python-code-cache.h): hits, a reused address read anew, its bounds, a process gone. */
#include <check.h>
#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <unistd.h>

#include "check-main.h"
#include "code-reader.h"
#include "macros.h"
#include "python-code-cache.h"
#include "python-strings.h"

static const char *arg_script;

/* Debian's python3.11 (3.11.2), from /usr/include/python3.11 (internal/pycore_frame.h, pycore_runtime.h,
 * cpython/code.h, cpython/unicodeobject.h, cpython/bytesobject.h) by offsetof() on x86-64. Helper A's table
 * (python-offsets.c) replaces it. */
static PythonLayout python_layout_3_11_for_tests(void)
{
        return (PythonLayout){
                .version_hex = 0x030b02f0,
                .runtime_tss_key = 596,
                .runtime_tss_initialized = 592,
                .runtime_interpreters_head = 40,
                .interp_threads_head = 16,
                .tstate_next = 8,
                .tstate_native_thread_id = 160,
                .tstate_cframe = 56,
                .cframe_current_frame = 8,
                .frame_code = 32,
                .frame_previous = 48,
                .frame_instr = 56,
                .frame_is_entry = 68,
                .frame_owner = 69,
                .object_type = 8,
                .code_filename = 112,
                .code_name = 120,
                .code_qualname = 128,
                .code_firstlineno = 72,
                .code_linetable = 136,
                .code_bytecode = 184,
                .unicode_length = 16,
                .unicode_state = 32,
                .unicode_ascii_data = 48,
                .unicode_compact_data = 72,
                .bytes_size = 16,
                .bytes_data = 32,
        };
}

/* pyenv's 3.12.1 and 3.13.0, from their headers the same way: the fields the reader and this test use. From
 * 3.13 the frame's instruction pointer (instr_ptr) points at the instruction itself, not the one before, and
 * the interpreter finds the line from it the same way. */
static PythonLayout python_layout_3_12_or_3_13_for_tests(uint32_t version_hex)
{
        return (PythonLayout){
                .version_hex = version_hex,
                .frame_code = 0,
                .frame_previous = 8,
                .frame_instr = 56,
                .frame_owner = 70,
                .object_type = 8,
                .code_filename = 112,
                .code_name = 120,
                .code_qualname = 128,
                .code_firstlineno = 68,
                .code_linetable = 136,
                .code_bytecode = version_hex >= 0x030d0000 ? 200 : 192,
                .unicode_length = 16,
                .unicode_state = 32,
                .unicode_ascii_data = 40,
                .unicode_compact_data = 56,
                .bytes_size = 16,
                .bytes_data = 32,
                .runtime_tss_key = PYTHON_LAYOUT_NONE,
                .runtime_tss_initialized = PYTHON_LAYOUT_NONE,
                .runtime_interpreters_head = PYTHON_LAYOUT_NONE,
                .interp_threads_head = PYTHON_LAYOUT_NONE,
                .tstate_next = PYTHON_LAYOUT_NONE,
                .tstate_native_thread_id = PYTHON_LAYOUT_NONE,
                .tstate_cframe = PYTHON_LAYOUT_NONE,
                .cframe_current_frame = PYTHON_LAYOUT_NONE,
                .frame_is_entry = PYTHON_LAYOUT_NONE,
        };
}

/* pyenv's 3.8.18, 3.9.18 and 3.10.13, from their headers: one layout (no co_qualname; the bytecode a bytes
 * object of its own, which the reader does not locate: lines by the frame's f_lasti, an index). */
static PythonLayout python_layout_3_8_to_3_10_for_tests(uint32_t version_hex)
{
        return (PythonLayout){
                .version_hex = version_hex,
                .object_type = 8,
                .code_filename = 104,
                .code_name = 112,
                .code_qualname = PYTHON_LAYOUT_NONE,
                .code_firstlineno = 40,
                .code_linetable = 120,
                .code_bytecode = PYTHON_LAYOUT_NONE,
                .unicode_length = 16,
                .unicode_state = 32,
                .unicode_ascii_data = 48,
                .unicode_compact_data = 72,
                .bytes_size = 16,
                .bytes_data = 32,
                .runtime_tss_key = PYTHON_LAYOUT_NONE,
                .runtime_tss_initialized = PYTHON_LAYOUT_NONE,
                .runtime_interpreters_head = PYTHON_LAYOUT_NONE,
                .interp_threads_head = PYTHON_LAYOUT_NONE,
                .tstate_next = PYTHON_LAYOUT_NONE,
                .tstate_native_thread_id = PYTHON_LAYOUT_NONE,
                .tstate_cframe = PYTHON_LAYOUT_NONE,
                .cframe_current_frame = PYTHON_LAYOUT_NONE,
                .frame_code = PYTHON_LAYOUT_NONE,
                .frame_previous = PYTHON_LAYOUT_NONE,
                .frame_instr = PYTHON_LAYOUT_NONE,
                .frame_is_entry = PYTHON_LAYOUT_NONE,
                .frame_owner = PYTHON_LAYOUT_NONE,
        };
}

/* An interpreter to read: Debian's, the target, and pyenv's where this machine has them. */
typedef struct Interpreter {
        const char *path;
        PythonLayout layout;
        uint32_t generator_frame; /* offsetof(PyGenObject, gi_iframe): a generator's frame is inside it */
} Interpreter;

#define MAX_CODES 16
#define MAX_UNITS 512

typedef struct ExpectedCode {
        uint64_t address;
        int firstlineno;
        char qualname[256];
        char filename[256];
        uint8_t bytecode[2 * MAX_UNITS];
        size_t units;
        int lines[MAX_UNITS];
} ExpectedCode;

/* What the script printed. */
typedef struct Target {
        pid_t pid;
        int stdin_fd;
        PythonTypes types;
        ExpectedCode codes[MAX_CODES];
        size_t n_codes;
        uint64_t generator, generator_code;
        int generator_line;
        uint64_t list;
} Target;

/* Bytes laid over the target's memory: what a damaged object would hold. */
typedef struct Overlay {
        uint64_t address;
        uint8_t bytes[64];
        size_t size;
} Overlay;

typedef struct Memory {
        pid_t pid;
        Overlay overlays[4];
        size_t n_overlays;
        unsigned reads;
} Memory;

static int read_memory(void *ctx, uint64_t addr, void *buf, size_t len)
{
        Memory *m = ctx;
        struct iovec local = { .iov_base = buf, .iov_len = len };
        struct iovec remote = { .iov_base = (void *)(uintptr_t)addr, .iov_len = len };
        ssize_t n;

        m->reads++;
        n = process_vm_readv(m->pid, &local, 1, &remote, 1, 0);
        if (n < 0)
                return negative_errno();
        if ((size_t)n != len)
                return -EFAULT;
        for (size_t i = 0; i < m->n_overlays; i++) {
                const Overlay *o = &m->overlays[i];

                for (size_t k = 0; k < o->size; k++)
                        if (o->address + k >= addr && o->address + k - addr < len)
                                ((uint8_t *)buf)[o->address + k - addr] = o->bytes[k];
        }
        return 0;
}

static void overlay_u64(Memory *m, uint64_t address, uint64_t value)
{
        Overlay *o = &m->overlays[m->n_overlays++];

        ck_assert_uint_le(m->n_overlays, ELEMENTSOF(m->overlays));
        o->address = address;
        o->size = sizeof(value);
        memcpy(o->bytes, &value, sizeof(value));
}

static void unhex(const char *hex, char *out, size_t size)
{
        size_t n = strcmp(hex, "-") == 0 ? 0 : strlen(hex) / 2;

        ck_assert_uint_lt(n, size);
        for (size_t i = 0; i < n; i++) {
                unsigned v;

                ck_assert_int_eq(sscanf(hex + 2 * i, "%2x", &v), 1);
                out[i] = (char)v;
        }
        out[n] = '\0';
}

static void parse_line(Target *t, char *line)
{
        char qualname[1024], filename[1024], bytecode[4 * MAX_UNITS + 2];

        if (strncmp(line, "types ", 6) == 0)
                ck_assert_int_eq(sscanf(line, "types %" SCNu64 " %" SCNu64 " %" SCNu64, &t->types.code,
                                        &t->types.unicode, &t->types.bytes), 3);
        else if (strncmp(line, "code ", 5) == 0) {
                ExpectedCode *c = &t->codes[t->n_codes++];

                ck_assert_uint_le(t->n_codes, MAX_CODES);
                ck_assert_int_eq(sscanf(line, "code %" SCNu64 " %d %1023s %1023s %2047s", &c->address,
                                        &c->firstlineno, qualname, filename, bytecode), 5);
                unhex(qualname, c->qualname, sizeof(c->qualname));
                unhex(filename, c->filename, sizeof(c->filename));
                unhex(bytecode, (char *)c->bytecode, sizeof(c->bytecode));
        } else if (strncmp(line, "lines", 5) == 0) {
                ExpectedCode *c = &t->codes[t->n_codes - 1];
                char *p = line + 5, *end;

                for (;;) {
                        long v = strtol(p, &end, 10);

                        if (end == p)
                                break;
                        ck_assert_uint_lt(c->units, MAX_UNITS);
                        c->lines[c->units++] = (int)v;
                        p = end;
                }
        } else if (strncmp(line, "generator ", 10) == 0)
                ck_assert_int_eq(sscanf(line, "generator %" SCNu64 " %" SCNu64 " %d", &t->generator,
                                        &t->generator_code, &t->generator_line), 3);
        else if (strncmp(line, "list ", 5) == 0)
                ck_assert_int_eq(sscanf(line, "list %" SCNu64, &t->list), 1);
        else
                ck_abort_msg("unexpected line: %s", line);
}

/* Starts the script and reads what it printed up to "ready". */
static void target_start(Target *t, const char *python)
{
        int in[2], out[2];
        _cleanup_fclose_ FILE *f = NULL;
        _cleanup_free_ char *line = NULL;
        size_t n = 0;

        *t = (Target){};
        ck_assert_int_eq(pipe(in), 0);
        ck_assert_int_eq(pipe(out), 0);
        t->pid = fork();
        ck_assert_int_ge(t->pid, 0);
        if (t->pid == 0) {
                dup2(in[0], STDIN_FILENO);
                dup2(out[1], STDOUT_FILENO);
                close(in[1]);
                close(out[0]);
                execl(python, python, "-E", "-B", arg_script, (char *)NULL);
                _exit(127);
        }
        close(in[0]);
        close(out[1]);
        t->stdin_fd = in[1];
        f = fdopen(out[0], "r");
        ck_assert_ptr_nonnull(f);
        while (getline(&line, &n, f) > 0) {
                line[strcspn(line, "\n")] = '\0';
                if (strcmp(line, "ready") == 0)
                        break;
                parse_line(t, line);
        }
        ck_assert_uint_ge(t->n_codes, 8);
        ck_assert_uint_ne(t->list, 0);
}

static void target_stop(Target *t)
{
        int status;

        close(t->stdin_fd);
        ck_assert_int_eq(waitpid(t->pid, &status, 0), t->pid);
        ck_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0);
}

static void check_code(const PythonMemory *m, const ExpectedCode *e, const PythonCode *c)
{
        uint8_t bytecode[2 * MAX_UNITS];

        ck_assert_str_eq(c->qualname, e->qualname);
        ck_assert_str_eq(c->filename, e->filename);
        ck_assert_int_eq(c->firstlineno, e->firstlineno);
        /* By index, in every version. */
        for (size_t u = 0; u < e->units; u++) {
                int line = -7, r = python_code_line_at(c, u, &line);

                ck_assert_int_eq(r == -ENOENT ? -1 : line, e->lines[u]);
        }
        if (c->bytecode == 0) {
                ck_assert_int_eq(python_code_line(c, 4096, &(int){ 0 }), -EOPNOTSUPP);
                return;
        }
        /* From 3.11, by instruction pointer. The bytecode is where the layout says: the instructions the
         * interpreter runs. The script zeroes the inline cache entries (opcode CACHE), whose counters 3.12 shows
         * otherwise than it keeps them. */
        ck_assert_int_eq(m->read(m->ctx, c->bytecode, bytecode, 2 * e->units), 0);
        for (size_t u = 0; u < e->units; u++)
                if (e->bytecode[2 * u] != 0 || e->bytecode[2 * u + 1] != 0)
                        ck_assert_mem_eq(bytecode + 2 * u, e->bytecode + 2 * u, 2);
        for (size_t u = 0; u < e->units; u++) {
                int line = -7, r = python_code_line(c, c->bytecode + 2 * u, &line);

                ck_assert_int_eq(r == -ENOENT ? -1 : line, e->lines[u]);
        }
        ck_assert_int_eq(python_code_line(c, c->bytecode + 1, &(int){ 0 }), -EINVAL);
        ck_assert_int_eq(python_code_line(c, c->bytecode - 4, &(int){ 0 }), -ENOENT);
        ck_assert_int_eq(python_code_line(c, c->bytecode + 2 * e->units, &(int){ 0 }), -ENOENT);
}

static void check_interpreter(const Interpreter *in)
{
        const PythonLayout *l = &in->layout;
        Target t;
        Memory mem;
        PythonMemory m = { .read = read_memory, .ctx = &mem };
        _cleanup_(python_code_freep) PythonCode *c = NULL;
        uint64_t frame, code, instr;
        int line = 0;

        target_start(&t, in->path);
        mem = (Memory){ .pid = t.pid };
        for (size_t i = 0; i < t.n_codes; i++) {
                _cleanup_(python_code_freep) PythonCode *one = NULL;

                ck_assert_int_eq(python_code_read(l, &t.types, &m, t.codes[i].address, &one), 0);
                check_code(&m, &t.codes[i], one);
        }
        /* The names the script made to be read: nesting (3.11+), the kinds of str, an unencodable file name. */
        ck_assert_str_eq(t.codes[0].qualname,
                         l->version_hex >= 0x030b0000 ? "Outer.method.<locals>.inner" : "inner");
        ck_assert_str_eq(t.codes[2].qualname, "naïve_ü");
        ck_assert_str_eq(t.codes[3].qualname, "函数");
        ck_assert_str_eq(t.codes[4].qualname, "𠀀");
        ck_assert_str_eq(t.codes[6].filename, "/tmp/vprof test/ünï 名 🐍.py");
        ck_assert_str_eq(t.codes[7].filename, "/tmp/bad\\udcff.py");

        /* A suspended generator's frame, as the frame walker will find frames: its code and instruction pointer
         * give the line the interpreter gives (3.11+: the frame inside the generator). */
        if (in->generator_frame == 0) {
                target_stop(&t);
                fprintf(stderr, "%s: %zu code objects read\n", in->path, t.n_codes);
                return;
        }
        frame = t.generator + in->generator_frame;
        ck_assert_int_eq(m.read(m.ctx, frame + l->frame_code, &code, sizeof(code)), 0);
        ck_assert_uint_eq(code, t.generator_code);
        ck_assert_int_eq(m.read(m.ctx, frame + l->frame_instr, &instr, sizeof(instr)), 0);
        ck_assert_int_eq(python_code_read(l, &t.types, &m, code, &c), 0);
        ck_assert_int_eq(python_code_line(c, instr, &line), 0);
        ck_assert_int_eq(line, t.generator_line);
        ck_assert_str_eq(c->qualname, "counting");
        target_stop(&t);
        fprintf(stderr, "%s: %zu code objects and a generator's frame read\n", in->path, t.n_codes);
}

START_TEST(test_live_code_objects)
{
        const Interpreter interpreters[] = {
                { "/usr/bin/python3.11", python_layout_3_11_for_tests(), 80 },
                { "/root/.pyenv/versions/3.12.1/bin/python3.12", python_layout_3_12_or_3_13_for_tests(0x030c01f0),
                  72 },
                { "/root/.pyenv/versions/3.13.0/bin/python3.13", python_layout_3_12_or_3_13_for_tests(0x030d00f0),
                  72 },
                { "/root/.pyenv/versions/3.10.13/bin/python3.10", python_layout_3_8_to_3_10_for_tests(0x030a0df0), 0 },
                { "/root/.pyenv/versions/3.9.18/bin/python3.9", python_layout_3_8_to_3_10_for_tests(0x030912f0), 0 },
                { "/root/.pyenv/versions/3.8.18/bin/python3.8", python_layout_3_8_to_3_10_for_tests(0x030812f0), 0 },
        };

        for (size_t i = 0; i < ELEMENTSOF(interpreters); i++) {
                if (i > 0 && access(interpreters[i].path, X_OK) < 0) {
                        fprintf(stderr, "%s: not here, skipped\n", interpreters[i].path);
                        continue;
                }
                check_interpreter(&interpreters[i]);
        }
}
END_TEST

/* Reads the code object at address with the overlays set: its error. */
static int read_damaged(const PythonLayout *l, const Target *t, Memory *mem, uint64_t address)
{
        _cleanup_(python_code_freep) PythonCode *c = NULL;
        PythonMemory m = { .read = read_memory, .ctx = mem };
        int r = python_code_read(l, &t->types, &m, address, &c);

        mem->n_overlays = 0;
        ck_assert(r < 0 || (c && c->qualname && c->filename && c->lines));
        return r;
}

START_TEST(test_hostile)
{
        PythonLayout l = python_layout_3_11_for_tests();
        PythonTypes no_types;
        Target t;
        Memory mem;
        PythonMemory m = { .read = read_memory, .ctx = &mem };
        uint64_t code, qualname, linetable;
        _cleanup_(python_code_freep) PythonCode *c = NULL;
        char *s = NULL;

        target_start(&t, "/usr/bin/python3.11");
        mem = (Memory){ .pid = t.pid };
        code = t.codes[2].address; /* naïve_ü: a compact non-ASCII name */
        ck_assert_int_eq(m.read(m.ctx, code + l.code_qualname, &qualname, sizeof(qualname)), 0);
        ck_assert_int_eq(m.read(m.ctx, code + l.code_linetable, &linetable, sizeof(linetable)), 0);

        /* Not a code object; nothing mapped; an address that wraps around. */
        ck_assert_int_eq(read_damaged(&l, &t, &mem, t.list), -EINVAL);
        ck_assert_int_eq(read_damaged(&l, &t, &mem, 0), -EFAULT);
        ck_assert_int_eq(read_damaged(&l, &t, &mem, 16), -EFAULT);
        ck_assert_int_eq(read_damaged(&l, &t, &mem, UINT64_MAX - 64), -EFAULT);
        /* A str where a code object should be, and the types unknown: the type check alone refuses it. */
        ck_assert_int_eq(read_damaged(&l, &t, &mem, qualname), -EINVAL);
        no_types = (PythonTypes){};
        ck_assert_int_eq(python_code_read(&l, &no_types, &m, code, &c), -EINVAL);

        /* The line table's ob_size huge, negative; its pointer wild, or to a str. */
        overlay_u64(&mem, linetable + l.bytes_size, UINT64_C(1) << 40);
        ck_assert_int_eq(read_damaged(&l, &t, &mem, code), -E2BIG);
        overlay_u64(&mem, linetable + l.bytes_size, (uint64_t)-5);
        ck_assert_int_eq(read_damaged(&l, &t, &mem, code), -EINVAL);
        overlay_u64(&mem, code + l.code_linetable, 0x10);
        ck_assert_int_eq(read_damaged(&l, &t, &mem, code), -EFAULT);
        overlay_u64(&mem, code + l.code_linetable, qualname);
        ck_assert_int_eq(read_damaged(&l, &t, &mem, code), -EINVAL);
        /* The table itself damaged: a first byte that starts no entry. */
        overlay_u64(&mem, linetable + l.bytes_data, 0x0101010101010101);
        ck_assert_int_eq(read_damaged(&l, &t, &mem, code), -EBADMSG);

        /* The name's length huge, negative; its state not compact, of a kind that is none; ASCII with a byte
         * above 127. */
        overlay_u64(&mem, qualname + l.unicode_length, UINT64_C(1) << 50);
        ck_assert_int_eq(read_damaged(&l, &t, &mem, code), -E2BIG);
        overlay_u64(&mem, qualname + l.unicode_length, (uint64_t)-1);
        ck_assert_int_eq(read_damaged(&l, &t, &mem, code), -E2BIG);
        overlay_u64(&mem, qualname + l.unicode_state, 1u << 2);
        ck_assert_int_eq(read_damaged(&l, &t, &mem, code), -EINVAL);
        overlay_u64(&mem, qualname + l.unicode_state, (3u << 2) | (1u << 5));
        ck_assert_int_eq(read_damaged(&l, &t, &mem, code), -EINVAL);
        overlay_u64(&mem, qualname + l.unicode_state, (1u << 2) | (1u << 5) | (1u << 6));
        overlay_u64(&mem, qualname + l.unicode_ascii_data, UINT64_MAX);
        ck_assert_int_eq(read_damaged(&l, &t, &mem, code), -EINVAL);
        /* The name's pointer wild; the first line negative. */
        overlay_u64(&mem, code + l.code_qualname, 0xdead00000000);
        ck_assert_int_eq(read_damaged(&l, &t, &mem, code), -EFAULT);
        overlay_u64(&mem, code + l.code_firstlineno, 0xffffffff); /* and the next 4 bytes, unread, 0 */
        ck_assert_int_eq(read_damaged(&l, &t, &mem, code), -EINVAL);

        /* Undamaged once more: nothing stuck. */
        ck_assert_int_eq(read_damaged(&l, &t, &mem, code), 0);

        /* Strings that UTF-8 cannot carry or that hold controls: escaped, valid, one line. */
        ck_assert_int_eq(python_text_to_utf8((const uint16_t[]){ 'a', 0xd800, 'b' }, 3, 2, &s), 0);
        ck_assert_str_eq(s, "a\\ud800b");
        free(s);
        ck_assert_int_eq(python_text_to_utf8((const uint32_t[]){ 0x110000, '\t', 0, 0x85 }, 4, 4, &s), 0);
        ck_assert_str_eq(s, "\\U00110000\\t\\x00\\xc2\\x85");
        free(s);
        ck_assert_int_eq(python_text_to_utf8("x", 1, 3, &s), -EINVAL);
        ck_assert_int_eq(python_text_to_utf8("x", PYTHON_STRING_MAX + 1, 1, &s), -E2BIG);
        target_stop(&t);
}
END_TEST

START_TEST(test_cache)
{
        PythonLayout l = python_layout_3_11_for_tests();
        _cleanup_(python_code_cache_freep) PythonCodeCache *cache = NULL, *small = NULL;
        PythonCodeCacheStats stats;
        const PythonCode *c, *again;
        Target t;
        Memory mem;
        PythonMemory m = { .read = read_memory, .ctx = &mem };
        uint64_t code;
        unsigned reads;

        target_start(&t, "/usr/bin/python3.11");
        mem = (Memory){ .pid = t.pid };
        code = t.codes[0].address;
        cache = python_code_cache_new(64, 1 << 20);
        ck_assert_ptr_nonnull(cache);

        ck_assert_int_eq(python_code_cache_get(cache, &l, &t.types, &m, code, &c), 0);
        ck_assert_str_eq(c->qualname, "Outer.method.<locals>.inner");
        /* Hits in the generation it was read in: no read at all. */
        reads = mem.reads;
        ck_assert_int_eq(python_code_cache_get(cache, &l, &t.types, &m, code, &again), 0);
        ck_assert_ptr_eq(again, c);
        ck_assert_uint_eq(mem.reads, reads);
        /* The first hit of the next generation: one read, of the object's head; the second none. */
        python_code_cache_next_generation(cache);
        ck_assert_int_eq(python_code_cache_get(cache, &l, &t.types, &m, code, &again), 0);
        ck_assert_ptr_eq(again, c);
        ck_assert_uint_eq(mem.reads, reads + 1);
        ck_assert_int_eq(python_code_cache_get(cache, &l, &t.types, &m, code, &again), 0);
        ck_assert_uint_eq(mem.reads, reads + 1);

        /* The address reused by another code object (here: another name): within the generation the kept one
         * stands, in the next it is read anew. */
        {
                uint64_t other_name;

                ck_assert_int_eq(m.read(m.ctx, t.codes[2].address + l.code_qualname, &other_name,
                                        sizeof(other_name)), 0);
                overlay_u64(&mem, code + l.code_qualname, other_name);
        }
        ck_assert_int_eq(python_code_cache_get(cache, &l, &t.types, &m, code, &c), 0);
        ck_assert_str_eq(c->qualname, "Outer.method.<locals>.inner");
        python_code_cache_next_generation(cache);
        ck_assert_int_eq(python_code_cache_get(cache, &l, &t.types, &m, code, &c), 0);
        ck_assert_str_eq(c->qualname, "naïve_ü");
        /* Freed and no code object any more: an error, and dropped. */
        overlay_u64(&mem, code + l.object_type, t.types.unicode);
        python_code_cache_next_generation(cache);
        ck_assert_int_eq(python_code_cache_get(cache, &l, &t.types, &m, code, &c), -EINVAL);
        mem.n_overlays = 0;
        python_code_cache_stats(cache, &stats);
        ck_assert_uint_eq(stats.hits, 4);
        ck_assert_uint_eq(stats.checks, 1);
        ck_assert_uint_eq(stats.misses, 1);
        ck_assert_uint_eq(stats.stale, 2);
        ck_assert_uint_eq(stats.failed, 1);
        ck_assert_uint_eq(stats.entries, 0);
        ck_assert_uint_eq(stats.bytes, 0);

        /* Bounds: two entries at most, then one object's worth of bytes. */
        small = python_code_cache_new(2, 1 << 20);
        for (size_t i = 0; i < t.n_codes; i++) {
                ck_assert_int_eq(python_code_cache_get(small, &l, &t.types, &m, t.codes[i].address, &c), 0);
                ck_assert_int_eq(c->firstlineno, t.codes[i].firstlineno);
                python_code_cache_stats(small, &stats);
                ck_assert_uint_le(stats.entries, 2);
        }
        ck_assert_uint_eq(stats.evicted, t.n_codes - 2);
        small = python_code_cache_free(small);
        small = python_code_cache_new(100, 1);
        for (size_t i = 0; i < t.n_codes; i++) {
                ck_assert_int_eq(python_code_cache_get(small, &l, &t.types, &m, t.codes[i].address, &c), 0);
                ck_assert_str_eq(c->filename, t.codes[i].filename);
                python_code_cache_stats(small, &stats);
                ck_assert_uint_eq(stats.entries, 1);
        }

        /* The process gone (the daemon drains its last records after its exit): a kept object, whose check
         * fails with -ESRCH, is taken as it is; an object never read cannot be. */
        cache = python_code_cache_free(cache);
        cache = python_code_cache_new(64, 1 << 20);
        ck_assert_int_eq(python_code_cache_get(cache, &l, &t.types, &m, code, &c), 0);
        target_stop(&t);
        python_code_cache_next_generation(cache);
        ck_assert_int_eq(python_code_cache_get(cache, &l, &t.types, &m, code, &c), 0);
        ck_assert_str_eq(c->qualname, "Outer.method.<locals>.inner");
        ck_assert_int_eq(python_code_cache_get(cache, &l, &t.types, &m, t.codes[1].address, &c), -ESRCH);
}
END_TEST

int main(int argc, char *argv[])
{
        Suite *s = suite_create("python-code");
        TCase *tc = tcase_create("core");

        if (argc != 2) {
                fprintf(stderr, "usage: %s python-code-target.py\n", argv[0]);
                return 2;
        }
        arg_script = argv[1];
        /* The children must not outlive a failed test's fork. */
        signal(SIGPIPE, SIG_IGN);
        tcase_set_timeout(tc, 60);
        tcase_add_test(tc, test_live_code_objects);
        tcase_add_test(tc, test_hostile);
        tcase_add_test(tc, test_cache);
        suite_add_tcase(s, tc);
        return run_suite(s);
}
