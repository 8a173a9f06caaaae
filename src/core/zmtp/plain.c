/* plain.c — the parts of ZMTP-PLAIN (rfc.zeromq.org spec 24) a client
 * writes or reads beyond READY's: its HELLO, and the status code in a
 * server's ERROR. */
#include <string.h>

#include "zmtp.h"

size_t zl_plain_hello_encode(uint8_t *out, size_t cap, const void *username,
                             size_t username_len, const void *password,
                             size_t password_len)
{
    uint8_t body[2 + 2 * UINT8_MAX];
    if (username_len > UINT8_MAX || password_len > UINT8_MAX)
        return 0;
    size_t at = 0;
    body[at++] = (uint8_t)username_len;
    if (username_len)
        memcpy(body + at, username, username_len);
    at += username_len;
    body[at++] = (uint8_t)password_len;
    if (password_len)
        memcpy(body + at, password, password_len);
    at += password_len;
    return zl_command_encode(out, cap, "HELLO", body, at);
}

bool zl_plain_libzmq43_error(const uint8_t *body, size_t len,
                             const uint8_t **data, size_t *data_len)
{
    static const uint8_t name[] = {0x5e, 'R', 'R', 'O', 'R'};
    if (len < sizeof name || memcmp(body, name, sizeof name) != 0)
        return false;
    *data = body + sizeof name;
    *data_len = len - sizeof name;
    return true;
}

int zl_error_status_code(const uint8_t *data, size_t len)
{
    /* The reason is a short string: one length byte, then the text. */
    if (len < 4 || data[0] != 3)
        return 0;
    const uint8_t *code = data + 1;
    if (code[0] < '3' || code[0] > '5' || code[1] != '0' || code[2] != '0')
        return 0;
    return (code[0] - '0') * 100;
}
