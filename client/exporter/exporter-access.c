/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "exporter-access.h"
#include "macros.h"

/* Whether name (of length len) is s, without regard to case. */
static bool name_is(const char *name, size_t len, const char *s)
{
        return s && strlen(s) == len && strncasecmp(name, s, len) == 0;
}

/* The host part of Listen=: "192.0.2.1" of "192.0.2.1:6068", "[::1]" of "[::1]:6068". */
static bool listen_host_is(const char *listen, const char *name, size_t len)
{
        const char *colon;

        if (!listen)
                return false;
        colon = strrchr(listen, ':');
        return colon && (size_t)(colon - listen) == len && strncasecmp(listen, name, len) == 0;
}

bool exporter_host_allowed(const ExporterConfig *config, const char *host, const char *local_name,
                           unsigned local_port)
{
        const char *port = NULL;
        size_t len;

        if (!host)
                return false;
        if (host[0] == '[') {
                const char *end = strchr(host, ']');

                if (!end)
                        return false;
                len = (size_t)(end - host) + 1;
                if (end[1] == ':')
                        port = end + 2;
                else if (end[1] != '\0')
                        return false;
        } else {
                const char *colon = strchr(host, ':');

                len = colon ? (size_t)(colon - host) : strlen(host);
                if (colon)
                        port = colon + 1;
        }
        if (len == 0 || len > 255)
                return false;
        if (port) {
                unsigned p = 0;

                if (port[0] == '\0' || strlen(port) > 5)
                        return false;
                for (const char *d = port; *d; d++) {
                        if (*d < '0' || *d > '9')
                                return false;
                        p = p * 10 + (unsigned)(*d - '0');
                }
                /* On a unix socket there is no port to compare: any is the client's way to say localhost. */
                if (local_name && p != local_port)
                        return false;
        }
        if (name_is(host, len, "localhost") || name_is(host, len, "127.0.0.1") || name_is(host, len, "[::1]") ||
            name_is(host, len, local_name) || listen_host_is(config->listen, host, len))
                return true;
        for (size_t i = 0; i < config->n_allow_hosts; i++)
                if (name_is(host, len, config->allow_hosts[i]))
                        return true;
        return false;
}

bool exporter_bearer_matches(const char *header, const char *token, size_t token_len)
{
        unsigned char diff;
        size_t given_len;

        if (!header || strncasecmp(header, "Bearer ", 7) != 0)
                return false;
        header += 7;
        while (*header == ' ')
                header++;
        given_len = strlen(header);
        while (given_len > 0 && header[given_len - 1] == ' ')
                given_len--;
        /* Every byte of the token is compared, whatever the guess: the time tells its length and no more. */
        diff = given_len != token_len;
        for (size_t i = 0; i < token_len; i++)
                diff |= (unsigned char)token[i] ^ (unsigned char)(i < given_len ? header[i] : 0);
        return diff == 0;
}

int exporter_token_load(const char *path, char **ret)
{
        _cleanup_close_ int fd = -1;
        _cleanup_free_ char *buf = NULL;
        size_t n = 0;
        struct stat st;

        fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
        if (fd < 0)
                return -errno;
        if (fstat(fd, &st) < 0)
                return -errno;
        if (!S_ISREG(st.st_mode))
                return -EINVAL;
        buf = malloc(EXPORTER_TOKEN_MAX + 2);
        if (!buf)
                return -ENOMEM;
        /* One byte more than a token may have: a file that fills it is too large. */
        while (n < EXPORTER_TOKEN_MAX + 2) {
                ssize_t k = read(fd, buf + n, EXPORTER_TOKEN_MAX + 2 - n);

                if (k < 0)
                        return -errno;
                if (k == 0)
                        break;
                n += (size_t)k;
        }
        if (n > 0 && buf[n - 1] == '\n')
                n--;
        if (n > 0 && buf[n - 1] == '\r')
                n--;
        if (n > EXPORTER_TOKEN_MAX)
                return -EFBIG;
        if (n == 0)
                return -EINVAL;
        for (size_t i = 0; i < n; i++)
                if (buf[i] <= ' ' || buf[i] >= 0x7f)
                        return -EINVAL;
        buf[n] = '\0';
        *ret = TAKE_PTR(buf);
        return 0;
}

bool exporter_log_limit(ExporterLogLimit *l, const char *address, uint64_t now_usec, uint64_t *ret_suppressed)
{
        size_t oldest = 0;

        for (size_t i = 0; i < ELEMENTSOF(l->slots); i++) {
                if (l->slots[i].address[0] && strcmp(l->slots[i].address, address) == 0) {
                        if (now_usec - l->slots[i].last_usec < EXPORTER_AUTH_LOG_INTERVAL_USEC) {
                                l->slots[i].suppressed++;
                                return false;
                        }
                        *ret_suppressed = l->slots[i].suppressed;
                        l->slots[i].suppressed = 0;
                        l->slots[i].last_usec = now_usec;
                        return true;
                }
                if (!l->slots[i].address[0] || l->slots[i].last_usec < l->slots[oldest].last_usec)
                        oldest = i;
        }
        snprintf(l->slots[oldest].address, sizeof(l->slots[oldest].address), "%s", address);
        l->slots[oldest].last_usec = now_usec;
        l->slots[oldest].suppressed = 0;
        *ret_suppressed = 0;
        return true;
}
