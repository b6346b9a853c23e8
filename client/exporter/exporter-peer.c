/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <arpa/inet.h>
#include <errno.h>
#include <linux/inet_diag.h>
#include <linux/netlink.h>
#include <linux/sock_diag.h>
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "exporter-peer.h"
#include "macros.h"

/* The kernel's enum tcp_state: a client's socket that is connected, or half-closed by the client. */
#define TCP_STATE_ESTABLISHED 1
#define TCP_STATE_FIN_WAIT1 4
#define TCP_STATE_FIN_WAIT2 5

bool exporter_address_is_loopback(const struct sockaddr *sa)
{
        if (sa->sa_family == AF_INET)
                return (ntohl(((const struct sockaddr_in *)sa)->sin_addr.s_addr) >> 24) == 127;
        if (sa->sa_family == AF_INET6) {
                const struct in6_addr *a = &((const struct sockaddr_in6 *)sa)->sin6_addr;

                return IN6_IS_ADDR_LOOPBACK(a) || (IN6_IS_ADDR_V4MAPPED(a) && a->s6_addr[12] == 127);
        }
        return false;
}

/* An IPv4 address and port from sa, AF_INET or a v4-mapped AF_INET6: what a dual-stack listener sees of a
 * client's IPv4 socket, which the kernel knows as AF_INET. */
static bool as_ipv4(const struct sockaddr *sa, struct sockaddr_in *ret)
{
        if (sa->sa_family == AF_INET) {
                *ret = *(const struct sockaddr_in *)sa;
                return true;
        }
        if (sa->sa_family == AF_INET6 && IN6_IS_ADDR_V4MAPPED(&((const struct sockaddr_in6 *)sa)->sin6_addr)) {
                const struct sockaddr_in6 *in6 = (const struct sockaddr_in6 *)sa;

                *ret = (struct sockaddr_in){ .sin_family = AF_INET, .sin_port = in6->sin6_port };
                memcpy(&ret->sin_addr, in6->sin6_addr.s6_addr + 12, 4);
                return true;
        }
        return false;
}

int exporter_socket_owner(const struct sockaddr *src, const struct sockaddr *dst, uid_t *ret)
{
        struct {
                struct nlmsghdr nlh;
                struct inet_diag_req_v2 req;
        } request = {
                .nlh = { .nlmsg_len = sizeof(request), .nlmsg_type = SOCK_DIAG_BY_FAMILY,
                         .nlmsg_flags = NLM_F_REQUEST },
                .req = { .sdiag_family = (uint8_t)src->sa_family, .sdiag_protocol = IPPROTO_TCP,
                         .idiag_states = ~0U,
                         .id = { .idiag_cookie = { INET_DIAG_NOCOOKIE, INET_DIAG_NOCOOKIE } } },
        };
        struct sockaddr_nl kernel = { .nl_family = AF_NETLINK };
        /* The answer: one inet_diag_msg (no attributes were asked for), or an error. */
        union {
                struct nlmsghdr nlh;
                char buf[1024];
        } reply;
        _cleanup_close_ int fd = -1;
        const struct nlmsghdr *h;
        ssize_t n;

        if (src->sa_family != dst->sa_family)
                return -EAFNOSUPPORT;
        if (src->sa_family == AF_INET) {
                const struct sockaddr_in *s = (const struct sockaddr_in *)src, *d = (const struct sockaddr_in *)dst;

                request.req.id.idiag_sport = s->sin_port;
                request.req.id.idiag_dport = d->sin_port;
                memcpy(request.req.id.idiag_src, &s->sin_addr, 4);
                memcpy(request.req.id.idiag_dst, &d->sin_addr, 4);
        } else if (src->sa_family == AF_INET6) {
                const struct sockaddr_in6 *s = (const struct sockaddr_in6 *)src,
                                          *d = (const struct sockaddr_in6 *)dst;

                request.req.id.idiag_sport = s->sin6_port;
                request.req.id.idiag_dport = d->sin6_port;
                memcpy(request.req.id.idiag_src, &s->sin6_addr, 16);
                memcpy(request.req.id.idiag_dst, &d->sin6_addr, 16);
        } else
                return -EAFNOSUPPORT;

        fd = socket(AF_NETLINK, SOCK_DGRAM | SOCK_CLOEXEC, NETLINK_SOCK_DIAG);
        if (fd < 0)
                return -errno;
        if (sendto(fd, &request, sizeof(request), 0, (struct sockaddr *)&kernel, sizeof(kernel)) < 0)
                return -errno;
        /* The kernel answers an exact lookup at once, before sendto() returns. */
        n = recv(fd, &reply, sizeof(reply), MSG_DONTWAIT);
        if (n < 0)
                return errno == EAGAIN ? -EIO : -errno;
        h = &reply.nlh;
        if (!NLMSG_OK(h, (size_t)n))
                return -EBADMSG;
        if (h->nlmsg_type == NLMSG_ERROR) {
                const struct nlmsgerr *e = NLMSG_DATA(h);

                if (h->nlmsg_len < NLMSG_LENGTH(sizeof(*e)))
                        return -EBADMSG;
                return e->error < 0 ? e->error : -EBADMSG;
        }
        if (h->nlmsg_type != SOCK_DIAG_BY_FAMILY || h->nlmsg_len < NLMSG_LENGTH(sizeof(struct inet_diag_msg)))
                return -EBADMSG;
        {
                const struct inet_diag_msg *m = NLMSG_DATA(h);

                /* Only a connected socket of exactly this pair, that a process holds, tells the client's user.
                 * The kernel's lookup falls back to a listening socket on the port when no connection has the
                 * pair (the client gone), and a socket its process closed may be a time-wait stub that the
                 * kernel reports as root's (UID 0, no inode): either would hand another user's rights to this
                 * client. */
                if (!IN_SET(m->idiag_state, TCP_STATE_ESTABLISHED, TCP_STATE_FIN_WAIT1, TCP_STATE_FIN_WAIT2) ||
                    m->idiag_inode == 0 || m->id.idiag_sport != request.req.id.idiag_sport ||
                    m->id.idiag_dport != request.req.id.idiag_dport ||
                    memcmp(m->id.idiag_src, request.req.id.idiag_src, sizeof(m->id.idiag_src)) != 0 ||
                    memcmp(m->id.idiag_dst, request.req.id.idiag_dst, sizeof(m->id.idiag_dst)) != 0)
                        return -ENOENT;
                *ret = m->idiag_uid;
        }
        return 0;
}

static void format_address(const struct sockaddr *sa, char *buf, size_t size)
{
        char text[INET6_ADDRSTRLEN] = "?";

        if (sa->sa_family == AF_INET) {
                const struct sockaddr_in *in = (const struct sockaddr_in *)sa;

                inet_ntop(AF_INET, &in->sin_addr, text, sizeof(text));
                snprintf(buf, size, "%s:%u", text, ntohs(in->sin_port));
        } else if (sa->sa_family == AF_INET6) {
                const struct sockaddr_in6 *in6 = (const struct sockaddr_in6 *)sa;

                inet_ntop(AF_INET6, &in6->sin6_addr, text, sizeof(text));
                snprintf(buf, size, "[%s]:%u", text, ntohs(in6->sin6_port));
        } else
                snprintf(buf, size, "?");
}

int exporter_peer_identify(int fd, ExporterPeer *ret)
{
        struct sockaddr_storage local, remote;
        socklen_t local_len = sizeof(local), remote_len = sizeof(remote);
        struct sockaddr_in local4, remote4;
        uid_t uid;
        int r;

        *ret = (ExporterPeer){};
        snprintf(ret->address, sizeof(ret->address), "?");
        if (getsockname(fd, (struct sockaddr *)&local, &local_len) < 0)
                return -errno;
        if (local.ss_family == AF_UNIX) {
                struct ucred cred;
                socklen_t len = sizeof(cred);

                snprintf(ret->address, sizeof(ret->address), "unix");
                ret->local = true;
                if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) < 0)
                        return -errno;
                if (len != sizeof(cred) || cred.uid == (uid_t)-1)
                        return -ENODATA;
                ret->uid = cred.uid;
                ret->known = true;
                return 0;
        }
        if (getpeername(fd, (struct sockaddr *)&remote, &remote_len) < 0)
                return -errno;
        format_address((struct sockaddr *)&remote, ret->address, sizeof(ret->address));
        if (!exporter_address_is_loopback((struct sockaddr *)&remote))
                return 0;
        ret->local = true;
        /* The client's socket: its local end is our remote one. */
        if (as_ipv4((struct sockaddr *)&remote, &remote4) && as_ipv4((struct sockaddr *)&local, &local4)) {
                r = exporter_socket_owner((struct sockaddr *)&remote4, (struct sockaddr *)&local4, &uid);
                /* A client's AF_INET6 socket connected to ::ffff:127.0.0.1 is known by its mapped addresses. */
                if (r == -ENOENT && remote.ss_family == AF_INET6)
                        r = exporter_socket_owner((struct sockaddr *)&remote, (struct sockaddr *)&local, &uid);
        } else
                r = exporter_socket_owner((struct sockaddr *)&remote, (struct sockaddr *)&local, &uid);
        if (r < 0)
                return r;
        ret->uid = uid;
        ret->known = true;
        return 0;
}
