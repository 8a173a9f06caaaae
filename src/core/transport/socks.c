/* socks.c — SOCKS5's client side over buffers (see socks.h). */
#include "socks.h"

#include <errno.h>
#include <string.h>
#include <uv.h>

#define SOCKS_VERSION 0x05
#define AUTH_VERSION 0x01 /* RFC 1929's subnegotiation */
#define METHOD_NONE 0x00
#define METHOD_USERPASS 0x02
#define CMD_CONNECT 0x01
#define ATYP_IPV4 0x01
#define ATYP_NAME 0x03
#define ATYP_IPV6 0x04

/* "host:port" or "[v6]:port" into host (brackets removed) and port. */
static int split_hostport(const char *hostport, char *host, size_t cap,
                          uint16_t *port)
{
    const char *colon = hostport ? strrchr(hostport, ':') : NULL;
    if (!colon || colon == hostport || colon[1] == '\0' ||
        strlen(colon + 1) > 5)
        return -1;
    unsigned long value = 0;
    for (const char *p = colon + 1; *p; p++) {
        if (*p < '0' || *p > '9')
            return -1;
        value = value * 10 + (unsigned long)(*p - '0');
    }
    if (value > 65535)
        return -1;
    const char *begin = hostport;
    size_t len = (size_t)(colon - hostport);
    if (len >= 2 && begin[0] == '[' && begin[len - 1] == ']') {
        begin++;
        len -= 2;
    }
    if (len == 0 || len >= cap)
        return -1;
    memcpy(host, begin, len);
    host[len] = '\0';
    *port = (uint16_t)value;
    return 0;
}

int zl_socks_encode_request(uint8_t *buf, size_t cap, const char *hostport)
{
    char host[ZL_SOCKS_HOST_MAX + 1];
    uint16_t port;
    if (cap < ZL_SOCKS_REQUEST_MAX ||
        split_hostport(hostport, host, sizeof host, &port) != 0)
        return -1;
    uint8_t *p = buf;
    *p++ = SOCKS_VERSION;
    *p++ = CMD_CONNECT;
    *p++ = 0x00;
    unsigned char ip[16];
    if (uv_inet_pton(AF_INET, host, ip) == 0) {
        *p++ = ATYP_IPV4;
        memcpy(p, ip, 4);
        p += 4;
    } else if (uv_inet_pton(AF_INET6, host, ip) == 0) {
        *p++ = ATYP_IPV6;
        memcpy(p, ip, 16);
        p += 16;
    } else {
        size_t len = strlen(host);
        *p++ = ATYP_NAME;
        *p++ = (uint8_t)len;
        memcpy(p, host, len);
        p += len;
    }
    *p++ = (uint8_t)(port >> 8);
    *p++ = (uint8_t)(port & 0xff);
    return (int)(p - buf);
}

/* RFC 1929's request; -1 when a credential is too long. */
static int encode_auth(uint8_t *buf, const char *username, const char *password)
{
    size_t ulen = strlen(username);
    size_t plen = password ? strlen(password) : 0;
    if (ulen > ZL_SOCKS_CREDENTIAL_MAX || plen > ZL_SOCKS_CREDENTIAL_MAX)
        return -1;
    uint8_t *p = buf;
    *p++ = AUTH_VERSION;
    *p++ = (uint8_t)ulen;
    memcpy(p, username, ulen);
    p += ulen;
    *p++ = (uint8_t)plen;
    if (plen)
        memcpy(p, password, plen);
    p += plen;
    return (int)(p - buf);
}

int zl_socks_client_init(zl_socks_client *c, const char *hostport,
                         const char *username, const char *password)
{
    memset(c, 0, sizeof *c);
    int n = zl_socks_encode_request(c->request, sizeof c->request, hostport);
    if (n < 0)
        return -1;
    c->request_len = (size_t)n;
    c->offer_auth = username && username[0] != '\0';
    if (c->offer_auth) {
        n = encode_auth(c->auth, username, password);
        if (n < 0)
            return -1;
        c->auth_len = (size_t)n;
    } else if (password && strlen(password) > ZL_SOCKS_CREDENTIAL_MAX) {
        return -1;
    }
    c->greeting[0] = SOCKS_VERSION;
    c->greeting[1] = c->offer_auth ? 2 : 1;
    c->greeting[2] = METHOD_NONE;
    c->greeting[3] = METHOD_USERPASS;
    c->greeting_len = c->offer_auth ? 4 : 3;
    c->state = ZL_SOCKS_CHOICE;
    c->send = c->greeting;
    c->send_len = c->greeting_len;
    return 0;
}

void zl_socks_client_sent(zl_socks_client *c)
{
    c->send = NULL;
    c->send_len = 0;
}

/* The size of the answer being read, as far as its bytes so far tell. */
static size_t answer_size(const zl_socks_client *c)
{
    if (c->state != ZL_SOCKS_REPLY)
        return 2;
    if (c->in_len < 4)
        return 4;
    switch (c->in[3]) {
    case ATYP_IPV4:
        return 4 + 4 + 2;
    case ATYP_IPV6:
        return 4 + 16 + 2;
    default: /* ATYP_NAME: the header check let no other through */
        return c->in_len < 5 ? 5 : 5 + (size_t)c->in[4] + 2;
    }
}

size_t zl_socks_client_want(zl_socks_client *c, uint8_t **buf)
{
    *buf = c->in + c->in_len;
    if (c->state != ZL_SOCKS_CHOICE && c->state != ZL_SOCKS_AUTH &&
        c->state != ZL_SOCKS_REPLY)
        return 0;
    return answer_size(c) - c->in_len;
}

static zl_socks_state fail(zl_socks_client *c)
{
    c->state = ZL_SOCKS_FAILED;
    zl_socks_client_sent(c);
    return c->state;
}

/* The next answer starts from an empty buffer, after out is sent. */
static zl_socks_state expect(zl_socks_client *c, zl_socks_state next,
                             const uint8_t *out, size_t out_len)
{
    c->state = next;
    c->in_len = 0;
    c->send = out;
    c->send_len = out_len;
    return next;
}

static zl_socks_state on_choice(zl_socks_client *c)
{
    if (c->in[0] != SOCKS_VERSION)
        return fail(c);
    if (c->in[1] == METHOD_NONE)
        return expect(c, ZL_SOCKS_REPLY, c->request, c->request_len);
    /* 0xFF (none acceptable), and any method we did not offer. */
    if (c->in[1] == METHOD_USERPASS && c->offer_auth)
        return expect(c, ZL_SOCKS_AUTH, c->auth, c->auth_len);
    return fail(c);
}

static zl_socks_state on_auth(zl_socks_client *c)
{
    if (c->in[0] != AUTH_VERSION || c->in[1] != 0x00)
        return fail(c);
    return expect(c, ZL_SOCKS_REPLY, c->request, c->request_len);
}

/* VER REP RSV ATYP: refused or malformed ends it before the address. */
static bool reply_header_ok(const zl_socks_client *c)
{
    return c->in[0] == SOCKS_VERSION && c->in[1] == 0x00 && c->in[2] == 0x00 &&
           (c->in[3] == ATYP_IPV4 || c->in[3] == ATYP_NAME ||
            c->in[3] == ATYP_IPV6);
}

zl_socks_state zl_socks_client_received(zl_socks_client *c, size_t n)
{
    uint8_t *unused;
    if (n == 0 || n > zl_socks_client_want(c, &unused))
        return fail(c);
    c->in_len += n;
    if (c->state == ZL_SOCKS_REPLY && c->in_len == 4 && !reply_header_ok(c))
        return fail(c);
    if (c->in_len < answer_size(c))
        return c->state;
    switch (c->state) {
    case ZL_SOCKS_CHOICE:
        return on_choice(c);
    case ZL_SOCKS_AUTH:
        return on_auth(c);
    default:
        c->state = ZL_SOCKS_DONE;
        return c->state;
    }
}
