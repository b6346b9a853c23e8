/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>

#include "code-reader.h"
#include "pidfd-alive.h"
#include "python-code-cache.h"
#include "target-python.h"

struct TargetPython {
        pid_t pid;
        int pidfd; /* the target's, for the reads of one target_python_frame(): -1 once it exited */
        PythonLayout layout;
        PythonTypes types;
        PythonCodeCache *cache;
};

/* One bounded read of the target: all of it or -EFAULT (PythonReadFn). */
static int read_target(void *ctx, uint64_t addr, void *buf, size_t len)
{
        TargetPython *p = ctx;
        struct iovec local = { .iov_base = buf, .iov_len = len };
        struct iovec remote = { .iov_base = (void *)(uintptr_t)addr, .iov_len = len };
        ssize_t n;

        /* Once the target exited its PID may name another process, another user's: a read counts only if the
         * target's pidfd says it ran before and after it (a successor's names must not reach this profile). */
        if (pidfd_alive(p->pidfd) < 0)
                return -ESRCH;
        n = process_vm_readv(p->pid, &local, 1, &remote, 1, 0);
        if (n < 0)
                return errno == ESRCH ? -ESRCH : -EFAULT;
        if (pidfd_alive(p->pidfd) < 0)
                return -ESRCH;
        return (size_t)n == len ? 0 : -EFAULT;
}

TargetPython *target_python_free(TargetPython *p)
{
        if (!p)
                return NULL;
        python_code_cache_free(p->cache);
        free(p);
        return NULL;
}

int target_python_set(TargetPython **p, pid_t pid, const PythonLayout *l, uint64_t code_type)
{
        TargetPython *n = *p;

        if (n && n->pid == pid && n->types.code == code_type && memcmp(&n->layout, l, sizeof(*l)) == 0)
                return 0;
        n = calloc(1, sizeof(*n));
        if (!n)
                return -ENOMEM;
        n->cache = python_code_cache_new(TARGET_PYTHON_CODES_MAX, TARGET_PYTHON_BYTES_MAX);
        if (!n->cache) {
                free(n);
                return -ENOMEM;
        }
        n->pid = pid;
        n->layout = *l;
        n->types = (PythonTypes){ .code = code_type };
        target_python_free(*p);
        *p = n;
        return 0;
}

void target_python_next_generation(TargetPython *p)
{
        if (p)
                python_code_cache_next_generation(p->cache);
}

int target_python_frame(TargetPython *p, int pidfd, uint64_t code, uint64_t offset, TargetPythonFrame *ret)
{
        const PythonMemory m = { .read = read_target, .ctx = p };
        const PythonCode *c;
        int line, r;

        p->pidfd = pidfd;
        r = python_code_cache_get(p->cache, &p->layout, &p->types, &m, code, &c);
        if (r < 0)
                return r;
        /* The offset is of prev_instr from the first code unit: one unit before it (not started) wraps
         * around to it again here, and python_code_line() takes that as the first line. */
        if (python_code_line(c, c->bytecode + offset, &line) < 0)
                line = c->firstlineno;
        *ret = (TargetPythonFrame){ .qualname = c->qualname, .filename = c->filename,
                                    .firstlineno = c->firstlineno, .line = line };
        return 0;
}
