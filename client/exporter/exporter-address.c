/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <stddef.h>
#include <string.h>
#include <sys/un.h>
#include <unistd.h>

#include "exporter-address.h"
#include "macros.h"
#include "parse-util.h"

int exporter_address_parse(const char *s, ExporterAddress *ret)
{
        char host[INET6_ADDRSTRLEN];
        const char *colon, *port_s;
        ExporterAddress a = {};
        uint32_t port;
        size_t n;

        if (s[0] == '[') {
                const char *close = strchr(s, ']');

                if (!close || close[1] != ':')
                        return -EINVAL;
                n = (size_t)(close - s - 1);
                if (n == 0 || n >= sizeof(host))
                        return -EINVAL;
                memcpy(host, s + 1, n);
                host[n] = '\0';
                port_s = close + 2;
        } else {
                colon = strrchr(s, ':');
                if (!colon)
                        return -EINVAL;
                n = (size_t)(colon - s);
                if (n == 0 || n >= sizeof(host))
                        return -EINVAL;
                memcpy(host, s, n);
                host[n] = '\0';
                port_s = colon + 1;
        }
        if (parse_u32(port_s, 0, 65535, &port) < 0)
                return -EINVAL;

        if (s[0] == '[') {
                struct sockaddr_in6 *in6 = (struct sockaddr_in6 *)&a.sa;

                if (inet_pton(AF_INET6, host, &in6->sin6_addr) != 1)
                        return -EINVAL;
                in6->sin6_family = AF_INET6;
                in6->sin6_port = htons((uint16_t)port);
                a.len = sizeof(*in6);
        } else {
                struct sockaddr_in *in4 = (struct sockaddr_in *)&a.sa;

                if (inet_pton(AF_INET, host, &in4->sin_addr) != 1)
                        return -EINVAL;
                in4->sin_family = AF_INET;
                in4->sin_port = htons((uint16_t)port);
                a.len = sizeof(*in4);
        }
        *ret = a;
        return 0;
}

int exporter_address_listen(const ExporterAddress *a, int backlog)
{
        _cleanup_close_ int fd = -1;
        int one = 1;

        fd = socket(a->sa.ss_family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
        if (fd < 0)
                return -errno;
        if (setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) < 0)
                return -errno;
        /* [::] means IPv6 only: an IPv4 listener is a Listen= of its own. */
        if (a->sa.ss_family == AF_INET6 && setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof(one)) < 0)
                return -errno;
        if (bind(fd, (const struct sockaddr *)&a->sa, a->len) < 0)
                return -errno;
        if (listen(fd, backlog) < 0)
                return -errno;
        return TAKE_FD(fd);
}

int exporter_socket_name(int fd, char *buf, size_t size)
{
        struct sockaddr_storage sa;
        socklen_t len = sizeof(sa);
        char host[INET6_ADDRSTRLEN];

        if (getsockname(fd, (struct sockaddr *)&sa, &len) < 0)
                return -errno;
        if (sa.ss_family == AF_INET) {
                struct sockaddr_in *in4 = (struct sockaddr_in *)&sa;

                if (!inet_ntop(AF_INET, &in4->sin_addr, host, sizeof(host)))
                        return -errno;
                snprintf(buf, size, "%s:%u", host, ntohs(in4->sin_port));
        } else if (sa.ss_family == AF_INET6) {
                struct sockaddr_in6 *in6 = (struct sockaddr_in6 *)&sa;

                if (!inet_ntop(AF_INET6, &in6->sin6_addr, host, sizeof(host)))
                        return -errno;
                snprintf(buf, size, "[%s]:%u", host, ntohs(in6->sin6_port));
        } else if (sa.ss_family == AF_UNIX) {
                const struct sockaddr_un *un = (const struct sockaddr_un *)&sa;

                snprintf(buf, size, "unix:%.*s", (int)(len - offsetof(struct sockaddr_un, sun_path)), un->sun_path);
        } else
                snprintf(buf, size, "(a socket of family %d)", sa.ss_family);
        return 0;
}
