/* address.c — endpoint parsing and name resolution (through libuv, so no
 * OS calls here). */
#include "address.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <uv.h>

#include "backend.h"
#include "zlink.h"

int zl_endpoint_split(const char *endpoint, zl_transport *transport,
                      const char **rest)
{
    if (!endpoint) {
        errno = EINVAL;
        return -1;
    }
    const char *sep = strstr(endpoint, "://");
    if (!sep || sep == endpoint || sep[3] == '\0') {
        errno = EINVAL;
        return -1;
    }
    size_t n = (size_t)(sep - endpoint);
    if (n == 3 && memcmp(endpoint, "tcp", 3) == 0)
        *transport = ZL_TRANSPORT_TCP;
    else if (n == 3 && memcmp(endpoint, "ipc", 3) == 0 && zl_backend_has_ipc())
        *transport = ZL_TRANSPORT_IPC;
    else if (n == 6 && memcmp(endpoint, "inproc", 6) == 0)
        *transport = ZL_TRANSPORT_INPROC;
#if defined(ZLINK_HAVE_TLS)
    else if (n == 3 && memcmp(endpoint, "tls", 3) == 0)
        *transport = ZL_TRANSPORT_TLS;
#endif
#if defined(ZLINK_WITH_WS)
    else if (n == 2 && memcmp(endpoint, "ws", 2) == 0)
        *transport = ZL_TRANSPORT_WS;
#endif
#if defined(ZLINK_WITH_WSS)
    else if (n == 3 && memcmp(endpoint, "wss", 3) == 0)
        *transport = ZL_TRANSPORT_WSS;
#endif
    else {
        errno = EPROTONOSUPPORT;
        return -1;
    }
    *rest = sep + 3;
    return 0;
}

const char *zl_transport_scheme(zl_transport t)
{
    switch (t) {
    case ZL_TRANSPORT_IPC:
        return "ipc";
    case ZL_TRANSPORT_INPROC:
        return "inproc";
    case ZL_TRANSPORT_TLS:
        return "tls";
    case ZL_TRANSPORT_WS:
        return "ws";
    case ZL_TRANSPORT_WSS:
        return "wss";
    case ZL_TRANSPORT_TCP:
    default:
        return "tcp";
    }
}

int zl_tcp_host(const char *hostport, char *buf, size_t cap)
{
    const char *semi = strrchr(hostport, ';');
    if (semi)
        hostport = semi + 1; /* "src;dst": the host is dst's */
    const char *colon = strrchr(hostport, ':');
    size_t n = colon ? (size_t)(colon - hostport) : 0;
    if (n >= 2 && hostport[0] == '[' && hostport[n - 1] == ']') {
        hostport++;
        n -= 2;
    }
    if (!colon || n >= cap) {
        errno = EINVAL;
        return -1;
    }
    memcpy(buf, hostport, n);
    buf[n] = '\0';
    return 0;
}

static int parse_port(const char *s, bool allow_wildcard, int *port)
{
    if (allow_wildcard && strcmp(s, "*") == 0) {
        *port = 0;
        return 0;
    }
    char *end;
    long v = strtol(s, &end, 10);
    if (*s == '\0' || *end != '\0' || v < 0 || v > 65535 ||
        (v == 0 && !allow_wildcard)) {
        errno = EINVAL;
        return -1;
    }
    *port = (int)v;
    return 0;
}

static int resolve_name(const char *host, bool ipv6, zl_addr *out)
{
    uv_loop_t loop;
    if (uv_loop_init(&loop) != 0) {
        errno = ENOMEM;
        return -1;
    }
    struct addrinfo hints;
    memset(&hints, 0, sizeof hints);
    hints.ai_family = ipv6 ? AF_UNSPEC : AF_INET;
    hints.ai_socktype = SOCK_STREAM;
    uv_getaddrinfo_t req;
    int rc = uv_getaddrinfo(&loop, &req, NULL, host, NULL, &hints);
    if (rc == 0) {
        struct addrinfo *ai = req.addrinfo;
        /* Prefer IPv4 when both exist, as libzmq does. */
        for (struct addrinfo *p = ai; p; p = p->ai_next)
            if (p->ai_family == AF_INET) {
                ai = p;
                break;
            }
        memcpy(&out->u.storage, ai->ai_addr, ai->ai_addrlen);
        out->len = (zl_socklen)ai->ai_addrlen;
        uv_freeaddrinfo(req.addrinfo);
    }
    uv_loop_close(&loop);
    if (rc != 0) {
        errno = ENODEV;
        return -1;
    }
    return 0;
}

/* The first address of the named interface (libzmq's "tcp://eth0:5555"):
 * IPv4, or with ipv6 IPv6 first and then IPv4. */
static int resolve_interface(const char *name, bool ipv6, zl_addr *out)
{
    uv_interface_address_t *list;
    int count;
    if (uv_interface_addresses(&list, &count) != 0)
        return -1;
    int found = -1;
    for (int pass = 0; pass < 2 && found < 0; pass++) {
        int family = ipv6 && pass == 0 ? AF_INET6 : AF_INET;
        if (pass == 1 && !ipv6)
            break;
        for (int i = 0; i < count && found < 0; i++)
            if (strcmp(list[i].name, name) == 0 &&
                list[i].address.address4.sin_family == family)
                found = i;
    }
    if (found >= 0) {
        if (list[found].address.address4.sin_family == AF_INET6) {
            out->u.in6 = list[found].address.address6;
            out->len = sizeof out->u.in6;
        } else {
            out->u.in4 = list[found].address.address4;
            out->len = sizeof out->u.in4;
        }
    }
    uv_free_interface_addresses(list, count);
    return found >= 0 ? 0 : -1;
}

/* What a host may be. Binds take "*", interface names and DNS names;
 * connects take DNS names; a connect's source takes "*", interface names
 * and then DNS names. A connect takes an IPv6 literal even on an IPv4
 * socket: the endpoint names the family. */
typedef struct host_rules {
    bool wildcard, nic, dns, any_literal;
} host_rules;

static int resolve_host(const char *host, host_rules rules, bool ipv6,
                        zl_addr *out)
{
    if (strcmp(host, "*") == 0) {
        if (!rules.wildcard) {
            errno = EINVAL;
            return -1;
        }
        if (ipv6) {
            out->u.in6.sin6_family = AF_INET6;
            out->u.in6.sin6_addr = in6addr_any;
            out->len = sizeof out->u.in6;
        } else {
            out->u.in4.sin_family = AF_INET;
            out->len = sizeof out->u.in4;
        }
        return 0;
    }
    if (uv_inet_pton(AF_INET, host, &out->u.in4.sin_addr) == 0) {
        out->u.in4.sin_family = AF_INET;
        out->len = sizeof out->u.in4;
        return 0;
    }
    if (uv_inet_pton(AF_INET6, host, &out->u.in6.sin6_addr) == 0) {
        /* A bind without ZLINK_IPV6 is IPv4 only, literals included, as
         * libzmq (no such device: not an address it can use). */
        if (!ipv6 && !rules.any_literal) {
            errno = ENODEV;
            return -1;
        }
        out->u.in6.sin6_family = AF_INET6;
        out->len = sizeof out->u.in6;
        return 0;
    }
    if (rules.nic && resolve_interface(host, ipv6, out) == 0)
        return 0;
    if (rules.dns)
        return resolve_name(host, ipv6, out);
    errno = ENODEV;
    return -1;
}

static int resolve_hostport(const char *hostport, host_rules rules,
                            bool port_wildcard, bool ipv6, zl_addr *out)
{
    memset(out, 0, sizeof *out);
    const char *colon = strrchr(hostport, ':');
    if (!colon || colon == hostport) {
        errno = EINVAL;
        return -1;
    }
    int port;
    if (parse_port(colon + 1, port_wildcard, &port) != 0)
        return -1;
    char host[256];
    size_t hlen = (size_t)(colon - hostport);
    if (hlen >= sizeof host) {
        errno = EINVAL;
        return -1;
    }
    memcpy(host, hostport, hlen);
    host[hlen] = '\0';
    if (hlen >= 2 && host[0] == '[' && host[hlen - 1] == ']') {
        memmove(host, host + 1, hlen - 2);
        host[hlen - 2] = '\0';
    }
    if (resolve_host(host, rules, ipv6, out) != 0)
        return -1;
    if (out->u.sa.sa_family == AF_INET6)
        out->u.in6.sin6_port = htons((uint16_t)port);
    else
        out->u.in4.sin_port = htons((uint16_t)port);
    return 0;
}

int zl_tcp_resolve(const char *hostport, bool for_bind, bool ipv6, zl_addr *out)
{
    host_rules rules = {.wildcard = for_bind,
                        .nic = for_bind,
                        .dns = true,
                        .any_literal = !for_bind};
    return resolve_hostport(hostport, rules, for_bind, ipv6, out);
}

/* A host name as libzmq's connect checks it: letters, digits, '-', '.' and
 * '_' (a name with spaces or other bytes can never resolve). */
static bool plausible_name(const char *host)
{
    if (*host == '\0' || strlen(host) > 253)
        return false;
    for (const char *p = host; *p; p++)
        if (!isalnum((unsigned char)*p) && *p != '-' && *p != '.' && *p != '_')
            return false;
    return true;
}

int zl_tcp_connect_target(const char *hostport, bool ipv6, zl_addr *out,
                          bool *is_name)
{
    /* Literals only here: a name is looked up at each attempt. */
    host_rules rules = {.any_literal = true};
    *is_name = false;
    if (resolve_hostport(hostport, rules, false, ipv6, out) == 0)
        return 0;
    if (errno != ENODEV)
        return -1;
    char host[256];
    if (zl_tcp_host(hostport, host, sizeof host) != 0 ||
        !plausible_name(host)) {
        errno = EINVAL;
        return -1;
    }
    *is_name = true;
    return 0;
}

int zl_tcp_resolve_connect(const char *rest, bool ipv6, zl_addr *dst,
                           bool *dst_is_name, zl_addr *src, bool *has_src)
{
    const char *semi = strrchr(rest, ';');
    *has_src = semi != NULL;
    if (!semi)
        return zl_tcp_connect_target(rest, ipv6, dst, dst_is_name);
    char source[300];
    size_t n = (size_t)(semi - rest);
    if (n == 0 || n >= sizeof source) {
        errno = EINVAL;
        return -1;
    }
    memcpy(source, rest, n);
    source[n] = '\0';
    /* A source without a port (no ':' at all) takes any port. */
    if (!strchr(source, ':') && n + 2 < sizeof source)
        memcpy(source + n, ":0", 3);
    host_rules rules = {
        .wildcard = true, .nic = true, .dns = true, .any_literal = true};
    if (resolve_hostport(source, rules, true, ipv6, src) != 0)
        return -1;
    return zl_tcp_connect_target(semi + 1, ipv6, dst, dst_is_name);
}

static bool is_any_address(const zl_addr *a)
{
    if (a->u.sa.sa_family == AF_INET)
        return a->u.in4.sin_addr.s_addr == INADDR_ANY;
    static const unsigned char zero[16];
    return a->u.sa.sa_family == AF_INET6 &&
           memcmp(&a->u.in6.sin6_addr, zero, sizeof zero) == 0;
}

int zl_tcp_connect_source(const zl_addr *src, const zl_addr *dst, zl_addr *out)
{
    *out = *src;
    int family = dst->u.sa.sa_family;
    if (src->u.sa.sa_family == family)
        return 0;
    if (!is_any_address(src))
        return -1;
    /* "*:port" means any local address, of whichever family dst is. */
    uint16_t port = src->u.sa.sa_family == AF_INET6 ? src->u.in6.sin6_port
                                                    : src->u.in4.sin_port;
    memset(out, 0, sizeof *out);
    if (family == AF_INET6) {
        out->u.in6.sin6_family = AF_INET6;
        out->u.in6.sin6_port = port;
        out->len = sizeof out->u.in6;
    } else {
        out->u.in4.sin_family = AF_INET;
        out->u.in4.sin_port = port;
        out->len = sizeof out->u.in4;
    }
    return 0;
}

static int make_tmpdir(char *tmpdir, size_t cap)
{
    char base[400];
    size_t len = sizeof base;
    if (uv_os_tmpdir(base, &len) != 0)
        snprintf(base, sizeof base, "/tmp");
    char tmpl[450];
    snprintf(tmpl, sizeof tmpl, "%s/zlink-XXXXXX", base);
    uv_fs_t req;
    int rc = uv_fs_mkdtemp(NULL, &req, tmpl, NULL);
    if (rc == 0)
        snprintf(tmpdir, cap, "%s", req.path);
    uv_fs_req_cleanup(&req);
    if (rc != 0) {
        errno = EADDRNOTAVAIL;
        return -1;
    }
    return 0;
}

int zl_ipc_resolve(const char *path, bool for_bind, zl_addr *out, char *tmpdir,
                   size_t tmpdir_cap)
{
    memset(out, 0, sizeof *out);
    if (tmpdir_cap)
        tmpdir[0] = '\0';
    char built[sizeof out->u.un.sun_path + 64];
    if (strcmp(path, "*") == 0) {
        if (!for_bind || make_tmpdir(tmpdir, tmpdir_cap) != 0) {
            errno = EINVAL;
            return -1;
        }
        snprintf(built, sizeof built, "%s/socket", tmpdir);
        path = built;
    }
    size_t n = strlen(path);
    if (strcmp(path, "@") == 0) {
        errno = EINVAL; /* an abstract name must have one, as in libzmq */
        return -1;
    }
    if (n == 0 || n >= sizeof out->u.un.sun_path) {
        errno = ENAMETOOLONG;
        return -1;
    }
    out->u.un.sun_family = AF_UNIX;
    memcpy(out->u.un.sun_path, path, n);
    size_t base = offsetof(struct sockaddr_un, sun_path);
    if (path[0] == '@') {
        /* Linux abstract namespace: leading NUL, length without a trailing
         * NUL. */
        out->u.un.sun_path[0] = '\0';
        out->len = (zl_socklen)(base + n);
    } else {
        out->len = (zl_socklen)(base + n + 1);
    }
    return 0;
}

int zl_addr_format(const zl_addr *addr, char *buf, size_t cap)
{
    char host[64];
    switch (addr->u.sa.sa_family) {
    case AF_INET:
        uv_ip4_name(&addr->u.in4, host, sizeof host);
        snprintf(buf, cap, "tcp://%s:%d", host, ntohs(addr->u.in4.sin_port));
        return 0;
    case AF_INET6:
        uv_ip6_name(&addr->u.in6, host, sizeof host);
        snprintf(buf, cap, "tcp://[%s]:%d", host, ntohs(addr->u.in6.sin6_port));
        return 0;
    case AF_UNIX: {
        size_t base = offsetof(struct sockaddr_un, sun_path);
        if (addr->len > (zl_socklen)base && addr->u.un.sun_path[0] == '\0') {
            size_t n = (size_t)addr->len - base;
            snprintf(buf, cap, "ipc://@%.*s", (int)(n - 1),
                     addr->u.un.sun_path + 1);
        } else {
            snprintf(buf, cap, "ipc://%s", addr->u.un.sun_path);
        }
        return 0;
    }
    default:
        errno = EINVAL;
        return -1;
    }
}
