/* fuzz_socks.c — a libFuzzer target for the SOCKS5 client (socks.h). The
 * proxy's bytes are untrusted: whatever it sends, in whatever pieces, the
 * reader must stay inside its buffer, only move forward, and stop exactly
 * at the end of the proxy's reply (a small model of RFC 1928/1929 says
 * where), leaving the peer's first bytes unread.
 *
 * The input: byte 0 picks the credentials (bits 0-1) and the host form
 * (bits 2-3), byte 1 seeds the read lengths, the rest is the proxy's
 * stream, read as socks_connect.c reads it. The whole input is also
 * encoded as a hostport. Seeds go to $ZLINK_FUZZ_SEEDS. */
#include <stdlib.h>
#include <string.h>

#include "fuzz_server.h"
#include "transport/socks.h"

#define CHECK(x)                                                               \
    do {                                                                       \
        if (!(x))                                                              \
            abort();                                                           \
    } while (0)
#define TERMINAL(s) ((s) == ZL_SOCKS_DONE || (s) == ZL_SOCKS_FAILED)

static size_t verdict(zl_socks_state *end, zl_socks_state v, size_t at)
{
    *end = v;
    return at;
}

/* How many bytes of the stream s the exchange takes, where its last answer
 * starts (*last) and how it ends (*end); ZL_SOCKS_REPLY when s ends first. */
static size_t model(const uint8_t *s, size_t len, bool auth, size_t *last,
                    zl_socks_state *end)
{
    *last = 0;
    *end = ZL_SOCKS_REPLY;
    if (len < 2)
        return len;
    if (s[0] != 5 || (s[1] != 0 && (s[1] != 2 || !auth)))
        return verdict(end, ZL_SOCKS_FAILED, 2);
    if (s[1] == 2) {
        *last = 2;
        if (len < 4)
            return len;
        if (s[2] != 1 || s[3] != 0)
            return verdict(end, ZL_SOCKS_FAILED, 4);
    }
    size_t p = *last += 2;
    const uint8_t *r = s + p;
    if (len >= p + 4 && (r[0] != 5 || r[1] != 0 || r[2] != 0 ||
                         (r[3] != 1 && r[3] != 3 && r[3] != 4)))
        return verdict(end, ZL_SOCKS_FAILED, p + 4);
    size_t need = len < p + 5 ? 5 : r[3] == 1 ? 10 : r[3] == 4 ? 22 : 7u + r[4];
    if (len < p + need)
        return len;
    return verdict(end, ZL_SOCKS_DONE, p + need);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    const char *dir = getenv("ZLINK_FUZZ_SEEDS");
    if (!dir || !*dir)
        return 0;
    static const uint8_t v4[] = {0x00, 1, 5, 0, 5, 0,  0,   1,
                                 127,  0, 0, 1, 4, 56, 'h', 'i'};
    static const uint8_t name[] = {0x06, 7, 5, 2,   1,   0,   5, 0,
                                   0,    3, 3, 'a', 'b', 'c', 0, 80};
    static const uint8_t v6[] = {0x0b, 3, 5, 0, 5, 0, 0, 4, 0, 0, 0, 0,  0,  0,
                                 0,    0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 80, 'x'};
    fuzz_write_seed(dir, 0, v4, sizeof v4);
    fuzz_write_seed(dir, 1, name, sizeof name);
    fuzz_write_seed(dir, 2, v6, sizeof v6);
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    uint8_t req[ZL_SOCKS_REQUEST_MAX];
    char *hostport = malloc(size + 1);
    CHECK(hostport);
    memcpy(hostport, data, size);
    hostport[size] = '\0';
    int n = zl_socks_encode_request(req, sizeof req, hostport);
    CHECK(n == -1 || (n > 0 && n <= (int)sizeof req));
    free(hostport);
    if (size < 2)
        return 0;

    static char long_host[ZL_SOCKS_HOST_MAX + 7],
        long_cred[ZL_SOCKS_CREDENTIAL_MAX + 1];
    memset(long_host, 'h', ZL_SOCKS_HOST_MAX);
    memcpy(long_host + ZL_SOCKS_HOST_MAX, ":65535", 7);
    memset(long_cred, 'c', ZL_SOCKS_CREDENTIAL_MAX);
    const char *hosts[] = {"127.0.0.1:1080", "example.com:80", "[::1]:9000",
                           long_host};
    const char *users[] = {NULL, "", "user", long_cred};
    const char *passwords[] = {NULL, "", "pw", long_cred};
    zl_socks_client c;
    CHECK(zl_socks_client_init(&c, hosts[(data[0] >> 2) & 3],
                               users[data[0] & 3],
                               passwords[data[0] & 3]) == 0);
    CHECK(c.offer_auth == ((data[0] & 3) >= 2));

    const uint8_t *s = data + 2;
    size_t len = size - 2, fed = 0;
    uint32_t rng = data[1];
    zl_socks_state prev = c.state;
    while (!TERMINAL(prev)) {
        if (c.send_len > 0) { /* what socks_connect.c would write */
            CHECK(c.send == c.greeting || c.send == c.auth ||
                  c.send == c.request);
            zl_socks_client_sent(&c);
        }
        uint8_t *buf;
        size_t want = zl_socks_client_want(&c, &buf);
        CHECK(buf == c.in + c.in_len && want > 0 &&
              want <= sizeof c.in - c.in_len);
        if (fed == len)
            break; /* the proxy hung up */
        size_t k = fuzz_next_rng(&rng) % (want + 1);
        k = k == 0 || k > want ? want : k;
        k = k > len - fed ? len - fed : k;
        memcpy(buf, s + fed, k);
        fed += k;
        zl_socks_state st = zl_socks_client_received(&c, k);
        CHECK(st == c.state && st >= prev && c.in_len <= ZL_SOCKS_REPLY_MAX);
        CHECK(st != ZL_SOCKS_AUTH || c.offer_auth);
        if (st != prev && !TERMINAL(st))
            CHECK(c.send == (st == ZL_SOCKS_AUTH ? c.auth : c.request) &&
                  c.in_len == 0);
        prev = st;
    }

    size_t last;
    zl_socks_state end;
    CHECK(fed == model(s, len, c.offer_auth, &last, &end));
    CHECK(TERMINAL(end) ? c.state == end : !TERMINAL(c.state));
    if (TERMINAL(c.state)) {
        uint8_t *buf;
        CHECK(c.in_len == fed - last && memcmp(c.in, s + last, c.in_len) == 0);
        CHECK(zl_socks_client_want(&c, &buf) == 0 && c.send_len == 0);
        zl_socks_client_sent(&c);
        CHECK(c.state == end);
        if (end == ZL_SOCKS_FAILED)
            CHECK(zl_socks_client_received(&c, 1) == ZL_SOCKS_FAILED);
    }
    return 0;
}
