/* frame.c — ZMTP frame headers: the flags byte and the short or long size. */
#include "zmtp.h"

#include "msg.h"

/* msg.h gives MORE and COMMAND the frame's bit values, so the mapping is a
 * mask either way. */
_Static_assert(ZL_MSG_MORE == ZL_FRAME_MORE &&
                   ZL_MSG_COMMAND == ZL_FRAME_COMMAND,
               "message flags match frame flags");

uint8_t zl_frame_flags_of_msg(uint8_t msg_flags)
{
    return msg_flags & (ZL_FRAME_MORE | ZL_FRAME_COMMAND);
}

uint8_t zl_msg_flags_of_frame(uint8_t frame_flags)
{
    return frame_flags & (ZL_MSG_MORE | ZL_MSG_COMMAND);
}

size_t zl_frame_header_encode(uint8_t *out, uint8_t flags, uint64_t size)
{
    /* The size decides LONG; reserved bits must never reach the wire. */
    flags &= ZL_FRAME_MORE | ZL_FRAME_COMMAND;
    if (size <= UINT8_MAX) {
        out[0] = flags;
        out[1] = (uint8_t)size;
        return 2;
    }
    out[0] = flags | ZL_FRAME_LONG;
    for (int i = 8; i >= 1; i--) {
        out[i] = (uint8_t)(size & 0xff);
        size >>= 8;
    }
    return ZL_FRAME_HEADER_MAX;
}

/* A whole data frame with these flags (besides LONG) at the start of the
 * n bytes at b. */
static bool whole_data_frame(const uint8_t *b, size_t n, uint8_t flags,
                             int64_t max_msg_size, size_t *header, size_t *size)
{
    if (n < 2 || (b[0] & ~ZL_FRAME_LONG) != flags)
        return false;
    uint64_t body = b[1];
    size_t head = 2;
    if (b[0] & ZL_FRAME_LONG) {
        if (n < ZL_FRAME_HEADER_MAX)
            return false;
        body = 0;
        for (size_t i = 1; i < ZL_FRAME_HEADER_MAX; i++)
            body = (body << 8) | b[i];
        head = ZL_FRAME_HEADER_MAX;
    }
    if (body > n - head || (max_msg_size >= 0 && body > (uint64_t)max_msg_size))
        return false;
    *header = head;
    *size = (size_t)body;
    return true;
}

bool zl_frame_whole_message(const uint8_t *b, size_t n, bool delimited,
                            int64_t max_msg_size, int64_t max_msg_parts,
                            size_t *body_at, size_t *size)
{
    size_t at = 0, header;
    if (delimited) {
        /* The empty delimiter: MORE, size 0, in either header form. */
        size_t empty;
        if ((max_msg_parts >= 0 && max_msg_parts < 2) ||
            !whole_data_frame(b, n, ZL_FRAME_MORE, 0, &at, &empty))
            return false;
    }
    if (!whole_data_frame(b + at, n - at, 0, max_msg_size, &header, size))
        return false;
    *body_at = at + header;
    return true;
}
