/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "log.h"
#include "state-rejected.h"

#define STAMP_SIZE sizeof("YYYYMMDDTHHMMSSZ") /* with its NUL */
#define SUFFIX ".rejected-"

/* Rename without replacing: RENAME_NOREPLACE, or where the file system lacks it a hard link and an unlink (the
 * link fails on an existing name just the same). */
static int rename_noreplace(int dir_fd, const char *from, const char *to)
{
        if (renameat2(dir_fd, from, dir_fd, to, RENAME_NOREPLACE) >= 0)
                return 0;
        if (!IN_SET(errno, EINVAL, ENOSYS, ENOTSUP))
                return negative_errno();
        if (linkat(dir_fd, from, dir_fd, to, 0) < 0)
                return negative_errno();
        if (unlinkat(dir_fd, from, 0) < 0)
                return negative_errno();
        return 0;
}

typedef struct Rejected {
        char *name;
        char stamp[STAMP_SIZE];
        unsigned long counter; /* 1 for the first of its second */
} Rejected;

static int compare_rejected(const void *a, const void *b)
{
        const Rejected *x = a, *y = b;
        int d = strcmp(x->stamp, y->stamp);

        if (d != 0)
                return d;
        return x->counter < y->counter ? -1 : x->counter > y->counter;
}

/* name's rejected files, oldest first. */
static int list_rejected(int dir_fd, const char *name, Rejected **ret, size_t *ret_n)
{
        size_t name_len = strlen(name), prefix = name_len + strlen(SUFFIX), n = 0, allocated = 0;
        _cleanup_free_ Rejected *list = NULL;
        struct dirent *de;
        DIR *d;
        int fd, r = 0;

        fd = fcntl(dir_fd, F_DUPFD_CLOEXEC, 3);
        if (fd < 0)
                return negative_errno();
        d = fdopendir(fd);
        if (!d) {
                r = negative_errno();
                close(fd);
                return r;
        }
        while ((de = readdir(d))) {
                const char *stamp = de->d_name + prefix, *rest;
                Rejected *x;

                /* NAME.rejected-STAMP, then nothing or .N */
                if (strncmp(de->d_name, name, name_len) != 0 ||
                    strncmp(de->d_name + name_len, SUFFIX, strlen(SUFFIX)) != 0 || strlen(stamp) < STAMP_SIZE - 1)
                        continue;
                rest = stamp + STAMP_SIZE - 1;
                if (*rest && (*rest != '.' || strspn(rest + 1, "0123456789") != strlen(rest + 1) || !rest[1]))
                        continue;
                if (n == allocated) {
                        size_t a = MAX(allocated * 2, (size_t)8);
                        Rejected *grown = realloc(list, a * sizeof(Rejected));
                        if (!grown) {
                                r = -ENOMEM;
                                break;
                        }
                        list = grown;
                        allocated = a;
                }
                x = list + n;
                memcpy(x->stamp, stamp, STAMP_SIZE - 1);
                x->stamp[STAMP_SIZE - 1] = '\0';
                x->counter = *rest ? strtoul(rest + 1, NULL, 10) : 1;
                x->name = strdup(de->d_name);
                if (!x->name) {
                        r = -ENOMEM;
                        break;
                }
                n++;
        }
        closedir(d);
        if (r < 0) {
                for (size_t i = 0; i < n; i++)
                        free(list[i].name);
                return r;
        }
        qsort(list, n, sizeof(Rejected), compare_rejected);
        *ret = TAKE_PTR(list);
        *ret_n = n;
        return 0;
}

static void prune(int dir_fd, const char *directory, const char *name, unsigned keep)
{
        _cleanup_free_ Rejected *list = NULL;
        size_t n = 0;
        int r;

        r = list_rejected(dir_fd, name, &list, &n);
        if (r < 0) {
                log_warning_errno(r, "Failed to list the rejected files of %s/%s: %m", directory, name);
                return;
        }
        for (size_t i = 0; i < n; i++) {
                if (i + keep < n) {
                        if (unlinkat(dir_fd, list[i].name, 0) < 0)
                                log_warning_errno(negative_errno(), "Failed to remove %s/%s: %m", directory,
                                                  list[i].name);
                        else
                                log_notice("Removed the oldest rejected file %s/%s: %u are kept.", directory,
                                           list[i].name, keep);
                }
                free(list[i].name);
        }
}

int state_keep_rejected(int dir_fd, const char *directory, const char *name, unsigned keep, char **ret_kept)
{
        char stamp[STAMP_SIZE], kept[512];
        time_t now = time(NULL);
        struct tm tm;
        int r = -EEXIST;

        if (!gmtime_r(&now, &tm) || strftime(stamp, sizeof(stamp), "%Y%m%dT%H%M%SZ", &tm) != STAMP_SIZE - 1)
                return log_warning_errno(-EINVAL, "Failed to set %s/%s aside: no time to name it by.", directory,
                                         name);
        for (unsigned i = 1; i < 1000 && r == -EEXIST; i++) {
                if (i == 1)
                        snprintf(kept, sizeof(kept), "%s" SUFFIX "%s", name, stamp);
                else
                        snprintf(kept, sizeof(kept), "%s" SUFFIX "%s.%u", name, stamp, i);
                r = rename_noreplace(dir_fd, name, kept);
        }
        if (r < 0)
                return log_warning_errno(r, "Failed to set %s/%s aside: %m", directory, name);
        prune(dir_fd, directory, name, keep);
        if (ret_kept) {
                *ret_kept = strdup(kept);
                if (!*ret_kept)
                        return -ENOMEM;
        }
        return 0;
}
