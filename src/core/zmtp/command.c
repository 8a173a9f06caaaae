/* command.c — ZMTP command frames and the metadata properties READY
 * carries. */
#include <string.h>

#include "zmtp.h"

#define PROPERTY_VALUE_LEN_SIZE 4

static void put_u32_be(uint8_t *out, uint32_t value)
{
    out[0] = (uint8_t)(value >> 24);
    out[1] = (uint8_t)(value >> 16);
    out[2] = (uint8_t)(value >> 8);
    out[3] = (uint8_t)value;
}

static uint32_t get_u32_be(const uint8_t *in)
{
    return (uint32_t)in[0] << 24 | (uint32_t)in[1] << 16 |
           (uint32_t)in[2] << 8 | (uint32_t)in[3];
}

static size_t header_size_for(size_t body_size)
{
    return body_size <= UINT8_MAX ? 2 : ZL_FRAME_HEADER_MAX;
}

int zl_command_parse(const uint8_t *body, size_t len, const uint8_t **name,
                     size_t *name_len, const uint8_t **data, size_t *data_len)
{
    /* The spec gives every command a name of 1 to 255 characters. */
    if (len < 1 || body[0] == 0 || (size_t)body[0] > len - 1)
        return -1;
    *name = body + 1;
    *name_len = body[0];
    *data = body + 1 + body[0];
    *data_len = len - 1 - body[0];
    return 0;
}

bool zl_command_is(const uint8_t *name, size_t name_len, const char *expect)
{
    return strlen(expect) == name_len && memcmp(name, expect, name_len) == 0;
}

size_t zl_command_encode(uint8_t *out, size_t cap, const char *name,
                         const void *data, size_t data_len)
{
    size_t name_len = strlen(name);
    if (name_len == 0 || name_len > UINT8_MAX)
        return 0;
    if (data_len > SIZE_MAX - 1 - name_len - ZL_FRAME_HEADER_MAX)
        return 0;
    size_t body_size = 1 + name_len + data_len;
    size_t frame_size = header_size_for(body_size) + body_size;
    if (frame_size > cap)
        return 0;
    size_t at = zl_frame_header_encode(out, ZL_FRAME_COMMAND, body_size);
    out[at++] = (uint8_t)name_len;
    memcpy(out + at, name, name_len);
    at += name_len;
    if (data_len > 0)
        memcpy(out + at, data, data_len);
    return frame_size;
}

int zl_properties_parse(const uint8_t *data, size_t len, zl_property_fn fn,
                        void *arg)
{
    size_t at = 0;
    while (at < len) {
        size_t name_len = data[at++];
        if (name_len > len - at)
            return -1;
        const uint8_t *name = data + at;
        at += name_len;
        if (len - at < PROPERTY_VALUE_LEN_SIZE)
            return -1;
        uint32_t value_len = get_u32_be(data + at);
        at += PROPERTY_VALUE_LEN_SIZE;
        if (value_len > len - at)
            return -1;
        int rc = fn(arg, name, name_len, data + at, value_len);
        if (rc != 0)
            return rc;
        at += value_len;
    }
    return 0;
}

/* Bytes one property takes, or 0 when it cannot be encoded at all. */
static size_t property_size(const char *name, size_t value_len)
{
    size_t name_len = strlen(name);
    if (name_len == 0 || name_len > UINT8_MAX || value_len > UINT32_MAX)
        return 0;
    return 1 + name_len + PROPERTY_VALUE_LEN_SIZE + value_len;
}

size_t zl_property_encode(uint8_t *out, size_t cap, const char *name,
                          const void *value, size_t value_len)
{
    size_t size = property_size(name, value_len);
    if (size == 0 || size > cap)
        return 0;
    size_t name_len = strlen(name);
    out[0] = (uint8_t)name_len;
    memcpy(out + 1, name, name_len);
    put_u32_be(out + 1 + name_len, (uint32_t)value_len);
    if (value_len > 0)
        memcpy(out + 1 + name_len + PROPERTY_VALUE_LEN_SIZE, value, value_len);
    return size;
}

size_t zl_ready_encode(uint8_t *out, size_t cap, int socket_type,
                       const void *identity, size_t identity_len)
{
    return zl_metadata_command_encode(out, cap, "READY", socket_type, identity,
                                      identity_len);
}

/* As libzmq: the types that route by identity always announce one, even
 * empty; peers log or match on the property's presence. */
static bool with_identity(int socket_type, size_t identity_len)
{
    return identity_len > 0 || zl_socket_type_announces_identity(socket_type);
}

size_t zl_properties_encode(uint8_t *out, size_t cap, int socket_type,
                            const void *identity, size_t identity_len)
{
    const char *type_name = zl_socket_type_name(socket_type);
    if (type_name == NULL)
        return 0;
    size_t type_len = strlen(type_name);
    size_t size = property_size("Socket-Type", type_len);
    if (with_identity(socket_type, identity_len)) {
        size_t identity_size = property_size("Identity", identity_len);
        if (identity_size == 0)
            return 0;
        size += identity_size;
    }
    if (size > cap)
        return 0;
    size_t at =
        zl_property_encode(out, cap, "Socket-Type", type_name, type_len);
    if (with_identity(socket_type, identity_len))
        at += zl_property_encode(out + at, cap - at, "Identity", identity,
                                 identity_len);
    return at;
}

size_t zl_metadata_command_encode(uint8_t *out, size_t cap, const char *name,
                                  int socket_type, const void *identity,
                                  size_t identity_len)
{
    uint8_t properties[ZL_PROPERTIES_MAX];
    size_t properties_len = zl_properties_encode(
        properties, sizeof properties, socket_type, identity, identity_len);
    if (properties_len == 0)
        return 0;
    size_t name_len = strlen(name);
    size_t body_size = 1 + name_len + properties_len;
    size_t frame_size = header_size_for(body_size) + body_size;
    if (frame_size > cap)
        return 0;
    size_t at = zl_frame_header_encode(out, ZL_FRAME_COMMAND, body_size);
    out[at++] = (uint8_t)name_len;
    memcpy(out + at, name, name_len);
    at += name_len;
    memcpy(out + at, properties, properties_len);
    return at + properties_len;
}
