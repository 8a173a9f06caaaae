/* wslay_smoke.c — the wslay a build links (Debian's, or the cross-built
 * static one under Wine) frames and unframes masked binary messages across
 * all three WebSocket length encodings. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <wslay/wslay.h>

/* 0 and 125: 7-bit length; 126 and 65535: 16-bit; 65536 and up: 64-bit,
 * where a wrong byte order (ntohl/htonl on Windows) would show. */
static const size_t sizes[] = {0, 1, 125, 126, 65535, 65536, 200000};
#define N_SIZES (sizeof sizes / sizeof sizes[0])

struct wire {
    uint8_t *bytes;
    size_t length;
    size_t capacity;
    size_t read;
};

static ssize_t wire_send(const uint8_t *data, size_t length, int flags,
                         void *user_data)
{
    (void)flags;
    struct wire *wire = user_data;
    if (length > wire->capacity - wire->length)
        return WSLAY_ERR_INVALID_CALLBACK;
    memcpy(wire->bytes + wire->length, data, length);
    wire->length += length;
    return (ssize_t)length;
}

static ssize_t wire_recv(uint8_t *buf, size_t length, int flags,
                         void *user_data)
{
    (void)flags;
    struct wire *wire = user_data;
    size_t left = wire->length - wire->read;
    if (left == 0)
        return WSLAY_ERR_WANT_READ;
    if (length > left)
        length = left;
    memcpy(buf, wire->bytes + wire->read, length);
    wire->read += length;
    return (ssize_t)length;
}

static int wire_mask(uint8_t *buf, size_t length, void *user_data)
{
    (void)user_data;
    for (size_t i = 0; i < length; i++)
        buf[i] = (uint8_t)(0xA5 + i * 17);
    return 0;
}

static int fail(const char *what, size_t size)
{
    fprintf(stderr, "wslay_smoke: %s (payload of %zu bytes)\n", what, size);
    return 1;
}

static int round_trip(struct wire *wire, uint8_t *payload, size_t size)
{
    const struct wslay_frame_callbacks callbacks = {wire_send, wire_recv,
                                                    wire_mask};
    wslay_frame_context_ptr client, server;
    if (wslay_frame_context_init(&client, &callbacks, wire) != 0 ||
        wslay_frame_context_init(&server, &callbacks, wire) != 0)
        return fail("context init", size);
    for (size_t i = 0; i < size; i++)
        payload[i] = (uint8_t)(i * 31 + (i >> 8));
    wire->length = wire->read = 0;

    struct wslay_frame_iocb out = {1,       0,   WSLAY_BINARY_FRAME, size, 1,
                                   payload, size};
    size_t sent = 0;
    do {
        ssize_t n = wslay_frame_send(client, &out);
        if (n < 0)
            return fail("wslay_frame_send failed", size);
        sent += (size_t)n;
        out.data += n;
        out.data_length -= (size_t)n;
    } while (sent < size);
    uint8_t length_code = size < 126 ? (uint8_t)size : size < 65536 ? 126 : 127;
    if (wire->length < 2 || wire->bytes[0] != 0x82 ||
        wire->bytes[1] != (0x80 | length_code))
        return fail("unexpected frame header", size);

    size_t received = 0;
    int header_seen = 0;
    for (;;) {
        struct wslay_frame_iocb in;
        memset(&in, 0, sizeof in);
        ssize_t n = wslay_frame_recv(server, &in);
        if (n == WSLAY_ERR_WANT_READ)
            break;
        if (n < 0)
            return fail("wslay_frame_recv failed", size);
        if (in.opcode != WSLAY_BINARY_FRAME || !in.fin || !in.mask ||
            in.payload_length != size)
            return fail("decoded header differs", size);
        if (received + (size_t)n > size ||
            (n > 0 && memcmp(in.data, payload + received, (size_t)n) != 0))
            return fail("decoded payload differs", size);
        received += (size_t)n;
        header_seen = 1;
        if (received == size)
            break;
    }
    wslay_frame_context_free(client);
    wslay_frame_context_free(server);
    if (!header_seen || received != size || wire->read != wire->length)
        return fail("frame not consumed whole", size);
    return 0;
}

int main(void)
{
    struct wire wire = {0};
    wire.capacity = sizes[N_SIZES - 1] + 64;
    wire.bytes = malloc(wire.capacity);
    uint8_t *payload = malloc(sizes[N_SIZES - 1]);
    if (!wire.bytes || !payload)
        return fail("out of memory", 0);
    int failed = 0;
    for (size_t i = 0; i < N_SIZES; i++)
        failed |= round_trip(&wire, payload, sizes[i]);
    free(payload);
    free(wire.bytes);
    if (!failed)
        printf("wslay %s: %zu frames round-tripped\n", WSLAY_VERSION, N_SIZES);
    return failed;
}
