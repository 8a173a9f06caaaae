/* ws_http.c — parsing and writing the WebSocket upgrade's HTTP. Strict on
 * purpose: CRLF line ends only, no folded headers, no NUL or control
 * bytes, each field we rely on exactly once, and a bounded header block.
 * Anything else is a 400, since a peer that gets HTTP subtly wrong is
 * either broken or probing. */
#include "ws_http.h"

#include <ctype.h>
#include <stdio.h>
#include <string.h>
#include <uv.h>

#include <mbedtls/base64.h>
#include <mbedtls/sha1.h>
#include <mbedtls/version.h>

#if MBEDTLS_VERSION_NUMBER < 0x03000000
#define mbedtls_sha1 mbedtls_sha1_ret
#endif

#define MAX_HEADERS 64

static const char WS_GUID[] = "258EAFA5-E914-47DA-95CA-C5AB0DC85B11";

/* A span of the input. */
typedef struct span {
    const char *p;
    size_t n;
} span;

static bool span_is(span s, const char *lit)
{
    size_t n = strlen(lit);
    return s.n == n && memcmp(s.p, lit, n) == 0;
}

static bool span_is_nocase(span s, const char *lit)
{
    size_t n = strlen(lit);
    if (s.n != n)
        return false;
    for (size_t i = 0; i < n; i++)
        if (tolower((unsigned char)s.p[i]) != tolower((unsigned char)lit[i]))
            return false;
    return true;
}

static span trim(span s)
{
    while (s.n && (s.p[0] == ' ' || s.p[0] == '\t')) {
        s.p++;
        s.n--;
    }
    while (s.n && (s.p[s.n - 1] == ' ' || s.p[s.n - 1] == '\t'))
        s.n--;
    return s;
}

/* Whether the comma-separated list holds token (case-insensitive when
 * nocase: Connection and Upgrade; subprotocol names are exact). */
static bool list_has(span list, const char *token, bool nocase)
{
    while (list.n) {
        const char *comma = memchr(list.p, ',', list.n);
        size_t n = comma ? (size_t)(comma - list.p) : list.n;
        span item = trim((span){list.p, n});
        if (nocase ? span_is_nocase(item, token) : span_is(item, token))
            return true;
        if (!comma)
            break;
        list.p = comma + 1;
        list.n -= n + 1;
    }
    return false;
}

static bool is_tchar(char c)
{
    return isalnum((unsigned char)c) || strchr("!#$%&'*+-.^_`|~", c);
}

/* Finds the end of the header block ("\r\n\r\n"); its length including
 * that, or 0. */
static size_t header_block_len(const uint8_t *buf, size_t len)
{
    for (size_t i = 3; i < len; i++)
        if (buf[i] == '\n' && buf[i - 1] == '\r' && buf[i - 2] == '\n' &&
            buf[i - 3] == '\r')
            return i + 1;
    return 0;
}

/* Splits the block into CRLF lines; false on a byte no header may hold
 * (NUL, a bare CR or LF, other controls but tab). */
static bool next_line(span *block, span *line)
{
    const char *p = block->p;
    for (size_t i = 0; i + 1 < block->n; i++) {
        unsigned char c = (unsigned char)p[i];
        if (c == '\r') {
            if (p[i + 1] != '\n')
                return false;
            *line = (span){p, i};
            block->p += i + 2;
            block->n -= i + 2;
            return true;
        }
        if ((c < 0x20 && c != '\t') || c == 0x7f)
            return false;
    }
    return false;
}

/* "Name: value" into its parts; false when malformed. */
static bool split_header(span line, span *name, span *value)
{
    const char *colon = memchr(line.p, ':', line.n);
    if (!colon || colon == line.p)
        return false;
    *name = (span){line.p, (size_t)(colon - line.p)};
    for (size_t i = 0; i < name->n; i++)
        if (!is_tchar(name->p[i]))
            return false; /* also refuses folded lines and "Name :" */
    *value = trim((span){colon + 1, line.n - name->n - 1});
    return true;
}

static bool copy_field(char *dst, size_t cap, span v)
{
    if (v.n >= cap)
        return false;
    memcpy(dst, v.p, v.n);
    dst[v.n] = '\0';
    return true;
}

static bool key_valid(span v)
{
    unsigned char raw[32];
    size_t n = 0;
    return v.n == ZL_WS_KEY_LEN &&
           mbedtls_base64_decode(raw, sizeof raw, &n,
                                 (const unsigned char *)v.p, v.n) == 0 &&
           n == 16;
}

/* "GET /path HTTP/1.1" */
static bool parse_request_line(span line, zl_ws_request *out)
{
    if (line.n < 4 || memcmp(line.p, "GET ", 4) != 0)
        return false;
    span rest = {line.p + 4, line.n - 4};
    const char *sp = memchr(rest.p, ' ', rest.n);
    if (!sp)
        return false;
    span target = {rest.p, (size_t)(sp - rest.p)};
    span version = {sp + 1, rest.n - target.n - 1};
    if (!span_is(version, "HTTP/1.1") || target.n == 0 || target.p[0] != '/')
        return false;
    const char *query = memchr(target.p, '?', target.n);
    if (query)
        target.n = (size_t)(query - target.p);
    for (size_t i = 0; i < target.n; i++)
        if ((unsigned char)target.p[i] <= 0x20 || target.p[i] == 0x7f)
            return false;
    return copy_field(out->path, sizeof out->path, target);
}

typedef struct request_fields {
    int host, upgrade, connection, key, version, origin;
    bool protocol_null, protocol_raw;
} request_fields;

int zl_ws_request_parse(const uint8_t *buf, size_t len, zl_ws_request *out)
{
    size_t scan = len < ZL_WS_HTTP_MAX ? len : ZL_WS_HTTP_MAX;
    size_t block_len = header_block_len(buf, scan);
    if (!block_len)
        return len >= ZL_WS_HTTP_MAX ? -400 : 0;
    memset(out, 0, sizeof *out);
    span block = {(const char *)buf, block_len};
    span line;
    if (!next_line(&block, &line) || !parse_request_line(line, out))
        return -400;
    request_fields seen = {0};
    int count = 0;
    bool version_ok = false;
    while (next_line(&block, &line) && line.n > 0) {
        span name, value;
        if (++count > MAX_HEADERS || !split_header(line, &name, &value))
            return -400;
        if (span_is_nocase(name, "Host")) {
            if (seen.host++ || value.n == 0 ||
                !copy_field(out->host, sizeof out->host, value))
                return -400;
        } else if (span_is_nocase(name, "Upgrade")) {
            if (seen.upgrade++ || !list_has(value, "websocket", true))
                return -400;
        } else if (span_is_nocase(name, "Connection")) {
            if (seen.connection++ || !list_has(value, "upgrade", true))
                return -400;
        } else if (span_is_nocase(name, "Sec-WebSocket-Key")) {
            if (seen.key++ || !key_valid(value))
                return -400;
            memcpy(out->key, value.p, ZL_WS_KEY_LEN);
        } else if (span_is_nocase(name, "Sec-WebSocket-Version")) {
            if (seen.version++)
                return -400;
            version_ok = span_is(value, "13");
        } else if (span_is_nocase(name, "Origin")) {
            if (seen.origin++ ||
                !copy_field(out->origin, sizeof out->origin, value))
                return -400;
        } else if (span_is_nocase(name, "Sec-WebSocket-Protocol")) {
            /* May be repeated; the lists add up. */
            seen.protocol_null |= list_has(value, "ZWS2.0/NULL", false);
            seen.protocol_raw |= list_has(value, "ZWS2.0", false);
        }
        /* Extensions (permessage-deflate) and the rest are ignored: an
         * extension we do not echo is declined. */
    }
    if (!seen.host || !seen.upgrade || !seen.connection || !seen.key ||
        !seen.version)
        return -400;
    if (!version_ok)
        return -426; /* RFC 6455 §4.2.2: say which version we speak */
    if (!seen.protocol_null && !seen.protocol_raw)
        return -400;
    /* The mechanism-named form is libzmq's; the plain one is the browsers'
     * (jszmq) and needs no handshake of its own. */
    out->framing =
        seen.protocol_null ? ZL_FRAMING_ZWS_NULL : ZL_FRAMING_ZWS_RAW;
    return (int)block_len;
}

static const char *framing_protocol(zl_framing framing)
{
    return framing == ZL_FRAMING_ZWS_RAW ? "ZWS2.0" : "ZWS2.0/NULL";
}

static size_t finish(int n, size_t cap)
{
    return n > 0 && (size_t)n < cap ? (size_t)n : 0;
}

size_t zl_ws_response_accept(char *buf, size_t cap, const char *key,
                             zl_framing framing)
{
    char accept[ZL_WS_ACCEPT_LEN + 1];
    if (zl_ws_accept_hash(key, accept) != 0)
        return 0;
    int n = snprintf(buf, cap,
                     "HTTP/1.1 101 Switching Protocols\r\n"
                     "Upgrade: websocket\r\n"
                     "Connection: Upgrade\r\n"
                     "Sec-WebSocket-Accept: %s\r\n"
                     "Sec-WebSocket-Protocol: %s\r\n\r\n",
                     accept, framing_protocol(framing));
    return finish(n, cap);
}

size_t zl_ws_response_refuse(char *buf, size_t cap, int status)
{
    const char *reason = status == 403   ? "Forbidden"
                         : status == 404 ? "Not Found"
                         : status == 426 ? "Upgrade Required"
                                         : "Bad Request";
    int n = snprintf(buf, cap,
                     "HTTP/1.1 %d %s\r\n"
                     "%s"
                     "Connection: close\r\n"
                     "Content-Length: 0\r\n\r\n",
                     status, reason,
                     status == 426 ? "Sec-WebSocket-Version: 13\r\n" : "");
    return finish(n, cap);
}

size_t zl_ws_request_build(char *buf, size_t cap, const char *host,
                           const char *path, const char *key)
{
    int n = snprintf(buf, cap,
                     "GET %s HTTP/1.1\r\n"
                     "Host: %s\r\n"
                     "Upgrade: websocket\r\n"
                     "Connection: Upgrade\r\n"
                     "Sec-WebSocket-Key: %s\r\n"
                     "Sec-WebSocket-Version: 13\r\n"
                     "Sec-WebSocket-Protocol: ZWS2.0/NULL, ZWS2.0\r\n\r\n",
                     path, host, key);
    return finish(n, cap);
}

int zl_ws_response_parse(const uint8_t *buf, size_t len, const char *key,
                         zl_framing *framing)
{
    size_t scan = len < ZL_WS_HTTP_MAX ? len : ZL_WS_HTTP_MAX;
    size_t block_len = header_block_len(buf, scan);
    if (!block_len)
        return len >= ZL_WS_HTTP_MAX ? -1 : 0;
    span block = {(const char *)buf, block_len};
    span line;
    if (!next_line(&block, &line) || line.n < 13 || line.p[12] != ' ')
        return -1;
    if (memcmp(line.p, "HTTP/1.1 404", 12) == 0)
        return ZL_WS_NOT_FOUND;
    if (memcmp(line.p, "HTTP/1.1 101", 12) != 0)
        return -1;
    char expected[ZL_WS_ACCEPT_LEN + 1];
    if (zl_ws_accept_hash(key, expected) != 0)
        return -1;
    int upgrade = 0, connection = 0, accept = 0, protocol = 0, count = 0;
    while (next_line(&block, &line) && line.n > 0) {
        span name, value;
        if (++count > MAX_HEADERS || !split_header(line, &name, &value))
            return -1;
        if (span_is_nocase(name, "Upgrade")) {
            if (upgrade++ || !span_is_nocase(value, "websocket"))
                return -1;
        } else if (span_is_nocase(name, "Connection")) {
            if (connection++ || !list_has(value, "upgrade", true))
                return -1;
        } else if (span_is_nocase(name, "Sec-WebSocket-Accept")) {
            if (accept++ || !span_is(value, expected))
                return -1;
        } else if (span_is_nocase(name, "Sec-WebSocket-Protocol")) {
            if (protocol++)
                return -1;
            if (span_is(value, "ZWS2.0/NULL"))
                *framing = ZL_FRAMING_ZWS_NULL;
            else if (span_is(value, "ZWS2.0"))
                *framing = ZL_FRAMING_ZWS_RAW;
            else
                return -1;
        } else if (span_is_nocase(name, "Sec-WebSocket-Extensions")) {
            return -1; /* we offered none */
        }
    }
    if (!upgrade || !connection || !accept || !protocol)
        return -1;
    return (int)block_len;
}

int zl_ws_accept_hash(const char *key, char *out)
{
    unsigned char input[ZL_WS_KEY_LEN + sizeof WS_GUID];
    size_t key_len = strlen(key);
    if (key_len != ZL_WS_KEY_LEN)
        return -1;
    memcpy(input, key, key_len);
    memcpy(input + key_len, WS_GUID, sizeof WS_GUID - 1);
    unsigned char digest[20];
    if (mbedtls_sha1(input, key_len + sizeof WS_GUID - 1, digest) != 0)
        return -1;
    size_t n = 0;
    if (mbedtls_base64_encode((unsigned char *)out, ZL_WS_ACCEPT_LEN + 1, &n,
                              digest, sizeof digest) != 0 ||
        n != ZL_WS_ACCEPT_LEN)
        return -1;
    out[n] = '\0';
    return 0;
}

int zl_ws_key_generate(char *out)
{
    unsigned char raw[16];
    size_t n = 0;
    if (uv_random(NULL, NULL, raw, sizeof raw, 0, NULL) != 0 ||
        mbedtls_base64_encode((unsigned char *)out, ZL_WS_KEY_LEN + 1, &n, raw,
                              sizeof raw) != 0 ||
        n != ZL_WS_KEY_LEN)
        return -1;
    out[n] = '\0';
    return 0;
}
