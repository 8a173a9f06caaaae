/* decoder.c — the incremental ZMTP frame decoder: header, the limits on a
 * message (size of all its parts, number of parts), and bodies copied from
 * the input, shared with it, or read straight into the message. */
#include <assert.h>
#include <string.h>

#include "msg.h"
#include "small_copy.h"
#include "zmtp.h"

enum decoder_state {
    DECODING_HEADER, /* header[0..header_have) received */
    DECODING_BODY,   /* d->msg is live, body_have of body_size filled */
    DECODER_FAILED   /* a protocol error; the connection must close */
};

static void start_header(zl_decoder *d)
{
    d->state = DECODING_HEADER;
    d->header_have = 0;
    d->header_need = 1;
    d->flags = 0;
    d->body_size = 0;
    d->body_have = 0;
    d->body_room = 0;
}

static zl_decode_result fail(zl_decoder *d, zl_decode_error error)
{
    if (d->state == DECODING_BODY)
        zlink_msg_close(&d->msg);
    d->state = DECODER_FAILED;
    d->error = error;
    return ZL_DECODE_ERROR;
}

void zl_decoder_init(zl_decoder *d, int64_t max_msg_size)
{
    memset(d, 0, sizeof *d);
    d->max_msg_size = max_msg_size;
    d->max_msg_parts = -1;
    d->max_frame_size = -1;
    d->error = ZL_DECODE_ERR_NONE;
    start_header(d);
}

void zl_decoder_set_max_parts(zl_decoder *d, int64_t max_msg_parts)
{
    d->max_msg_parts = max_msg_parts;
}

void zl_decoder_set_max_frame(zl_decoder *d, int64_t max_frame_size)
{
    d->max_frame_size = max_frame_size;
}

void zl_decoder_destroy(zl_decoder *d)
{
    if (d->state == DECODING_BODY)
        zlink_msg_close(&d->msg);
    d->state = DECODER_FAILED;
}

bool zl_decoder_at_message_start(const zl_decoder *d)
{
    return d->state == DECODING_HEADER && d->header_have == 0 &&
           d->msg_parts == 0;
}

/* A data frame of size bytes ends: the message in progress goes on after
 * it (MORE) or is complete. Commands are not parts of a message. */
static void count_part(zl_decoder *d, uint8_t frame_flags, uint64_t size)
{
    if (frame_flags & ZL_FRAME_COMMAND)
        return;
    if (frame_flags & ZL_FRAME_MORE) {
        d->msg_parts++;
        d->msg_bytes += size;
    } else {
        d->msg_parts = 0;
        d->msg_bytes = 0;
    }
}

/* Hands the finished body to the caller and gets ready for the next frame. */
static zl_decode_result finish_frame(zl_decoder *d, zlink_msg_t *out)
{
    zl_msg_set_flags(&d->msg, zl_msg_flags_of_frame(d->flags));
    count_part(d, d->flags, d->body_size);
    *out = d->msg;
    start_header(d);
    return ZL_DECODE_FRAME;
}

static bool flags_valid(uint8_t flags)
{
    return !(flags & ZL_FRAME_RESERVED) &&
           !((flags & ZL_FRAME_COMMAND) && (flags & ZL_FRAME_MORE));
}

/* Rejects a bad flags byte before the size arrives, so that a peer speaking
 * garbage is cut off as early as possible. */
static zl_decode_result check_flags(zl_decoder *d)
{
    uint8_t flags = d->header[0];
    if (flags & ZL_FRAME_RESERVED)
        return fail(d, ZL_DECODE_ERR_RESERVED_FLAGS);
    if (!flags_valid(flags))
        return fail(d, ZL_DECODE_ERR_BAD_COMMAND_FLAGS);
    d->flags = flags;
    d->header_need = (flags & ZL_FRAME_LONG) ? ZL_FRAME_HEADER_MAX : 2;
    return ZL_DECODE_NEED_MORE;
}

/* MAXMSGSIZE bounds a whole message: this frame and the parts before it
 * (msg_bytes never exceeds the limit, so the subtraction is safe). */
static bool over_max_size(const zl_decoder *d, uint8_t frame_flags,
                          uint64_t size)
{
    if (d->max_msg_size < 0)
        return false;
    uint64_t before = (frame_flags & ZL_FRAME_COMMAND) ? 0 : d->msg_bytes;
    return size > (uint64_t)d->max_msg_size - before;
}

/* A message in progress may not grow past max_msg_parts parts. Every part
 * holds a pipe slot until the last one arrives, whatever its size. */
static bool over_max_parts(const zl_decoder *d, uint8_t frame_flags)
{
    return d->max_msg_parts >= 0 && !(frame_flags & ZL_FRAME_COMMAND) &&
           d->msg_parts >= (uint64_t)d->max_msg_parts;
}

static bool size_too_large(const zl_decoder *d, uint64_t size)
{
    if (size > (uint64_t)INT64_MAX)
        return true;
    if (d->max_frame_size >= 0 && size > (uint64_t)d->max_frame_size)
        return true;
#if SIZE_MAX < UINT64_MAX
    if (size > SIZE_MAX)
        return true;
#endif
    return over_max_size(d, d->flags, size);
}

/* The body size a complete header announces: one byte, or eight in
 * network order for a LONG frame. */
static uint64_t header_size(const uint8_t *header)
{
    if (!(header[0] & ZL_FRAME_LONG))
        return header[1];
    uint64_t size = 0;
    for (size_t i = 1; i < ZL_FRAME_HEADER_MAX; i++)
        size = (size << 8) | header[i];
    return size;
}

/* The header is complete: check the limits, then allocate the body, whole
 * up to ZL_DECODER_RESERVE_AHEAD bytes. Nothing is allocated for a frame
 * we are going to refuse. */
static zl_decode_result start_body(zl_decoder *d)
{
    uint64_t size = header_size(d->header);
    if (over_max_parts(d, d->flags))
        return fail(d, ZL_DECODE_ERR_TOO_MANY_PARTS);
    if (size_too_large(d, size))
        return fail(d, ZL_DECODE_ERR_TOO_LARGE);
    int rc = size <= ZL_DECODER_RESERVE_AHEAD
                 ? zlink_msg_init_size(&d->msg, (size_t)size)
                 : zl_msg_init_growable(&d->msg, (size_t)size,
                                        ZL_DECODER_RESERVE_AHEAD);
    if (rc != 0)
        return fail(d, ZL_DECODE_ERR_NO_MEMORY);
    d->state = DECODING_BODY;
    d->body_size = size;
    d->body_have = 0;
    d->body_room = size <= ZL_DECODER_RESERVE_AHEAD ? (size_t)size
                                                    : ZL_DECODER_RESERVE_AHEAD;
    return ZL_DECODE_NEED_MORE;
}

/* Room for need bytes of the body (at most its size): the room at least
 * doubles, so a body grows in few steps, and never holds more than twice
 * what has arrived (or ZL_DECODER_RESERVE_AHEAD). */
static bool reserve_body(zl_decoder *d, uint64_t need)
{
    if (need <= d->body_room)
        return true;
    uint64_t room = (uint64_t)d->body_room * 2;
    if (room < need)
        room = need;
    if (room > d->body_size)
        room = d->body_size;
    if (zl_msg_grow(&d->msg, (size_t)room) != 0)
        return false;
    d->body_room = (size_t)room;
    return true;
}

static zl_decode_result take_header(zl_decoder *d, const uint8_t *data,
                                    size_t len, size_t *pos)
{
    /* The sizeof bound is implied by header_need; it is spelled out for
     * gcc's -O3 overflow analysis. */
    while (*pos < len && d->header_have < d->header_need &&
           d->header_have < sizeof d->header) {
        d->header[d->header_have++] = data[(*pos)++];
        if (d->header_have == 1 && check_flags(d) == ZL_DECODE_ERROR)
            return ZL_DECODE_ERROR;
    }
    if (d->header_have < d->header_need)
        return ZL_DECODE_NEED_MORE;
    return start_body(d);
}

static zl_decode_result take_body(zl_decoder *d, const uint8_t *data,
                                  size_t len, size_t *pos)
{
    size_t available = len - *pos;
    uint64_t missing = d->body_size - d->body_have;
    size_t n = missing < available ? (size_t)missing : available;
    if (n == 0)
        return ZL_DECODE_NEED_MORE;
    if (!reserve_body(d, d->body_have + n))
        return fail(d, ZL_DECODE_ERR_NO_MEMORY);
    uint8_t *body = zlink_msg_data(&d->msg);
    memcpy(body + d->body_have, data + *pos, n);
    d->body_have += n;
    *pos += n;
    return ZL_DECODE_NEED_MORE;
}

/* Whether the bodies of the input ending at end may share its block: only
 * when the whole large bodies from data on fill at least half of it, so
 * that the block never pins more than twice the payload that keeps it
 * alive. Otherwise each is copied out, and the block is written again by
 * the next read. Decided at the input's first large body, by a walk over
 * the frame headers that follow. */
static bool may_share(zl_decoder *d, const uint8_t *data, size_t len)
{
    const uint8_t *end = data + len;
    if (d->share_end == end)
        return d->share;
    uint64_t shareable = 0;
    size_t at = 0;
    while (len - at >= 2) {
        size_t header_len =
            (data[at] & ZL_FRAME_LONG) ? ZL_FRAME_HEADER_MAX : 2;
        if (len - at < header_len)
            break;
        uint64_t size = header_size(data + at);
        if (size > len - at - header_len)
            break;
        if (size >= ZL_DECODER_DIRECT_MIN)
            shareable += size;
        at += header_len + (size_t)size;
    }
    d->share_end = end;
    d->share = shareable >= d->input_owner->size / 2;
    return d->share;
}

/* A whole frame at the start of the input, the usual case on a busy
 * connection, decoded without the byte-by-byte header state: short frames
 * and long ones (every body over 255 bytes) alike. Returns false to leave
 * anything else (partial, invalid, too large, no memory) to the general
 * path, which reports it. */
static bool decode_whole_frame(zl_decoder *d, const uint8_t *data, size_t len,
                               size_t *consumed, zlink_msg_t *out)
{
    if (d->state != DECODING_HEADER || d->header_have != 0 || len < 2)
        return false;
    uint8_t frame_flags = data[0];
    if (!flags_valid(frame_flags))
        return false;
    size_t header_len = (frame_flags & ZL_FRAME_LONG) ? ZL_FRAME_HEADER_MAX : 2;
    if (len < header_len)
        return false;
    uint64_t size = header_size(data);
    if (size > len - header_len || over_max_size(d, frame_flags, size) ||
        over_max_parts(d, frame_flags))
        return false;
    if (d->input_owner && size >= ZL_DECODER_DIRECT_MIN &&
        may_share(d, data, len)) {
        /* The input stays untouched while the message lives (see
         * zl_decoder_set_input_owner), so the body need not be copied. */
        zl_msg_init_shared(out, d->input_owner, (uint8_t *)data + header_len,
                           (size_t)size);
    } else {
        if (zlink_msg_init_size(out, (size_t)size) != 0)
            return false;
        if (size < ZL_COPY_SMALL_MAX)
            zl_copy_small(zlink_msg_data(out), data + header_len, (size_t)size);
        else
            memcpy(zlink_msg_data(out), data + header_len, (size_t)size);
    }
    zl_msg_set_flags(out, zl_msg_flags_of_frame(frame_flags));
    count_part(d, frame_flags, size);
    *consumed = header_len + (size_t)size;
    return true;
}

zl_decode_result zl_decoder_decode(zl_decoder *d, const uint8_t *data,
                                   size_t len, size_t *consumed,
                                   zlink_msg_t *out)
{
    size_t pos = 0;
    zl_decode_result result = ZL_DECODE_NEED_MORE;
    if (decode_whole_frame(d, data, len, consumed, out))
        return ZL_DECODE_FRAME;
    *consumed = 0;
    if (d->state == DECODER_FAILED)
        return ZL_DECODE_ERROR;
    if (d->state == DECODING_HEADER)
        result = take_header(d, data, len, &pos);
    /* One frame per call: the header (if it completed) and as much body as
     * there is. A zero-length body completes with no input left. */
    if (d->state == DECODING_BODY) {
        result = take_body(d, data, len, &pos);
        if (result != ZL_DECODE_ERROR && d->body_have == d->body_size)
            result = finish_frame(d, out);
    }
    *consumed = pos;
    return result;
}

void zl_decoder_set_input_owner(zl_decoder *d, struct zl_content *owner)
{
    d->input_owner = owner;
    d->share_end = NULL;
}

bool zl_decoder_direct_buffer(zl_decoder *d, void **buf, size_t *len)
{
    if (d->state != DECODING_BODY || d->body_size < ZL_DECODER_DIRECT_MIN ||
        d->body_have == d->body_size)
        return false;
    if (d->body_have == d->body_room &&
        !reserve_body(d, (uint64_t)d->body_room + 1)) {
        fail(d, ZL_DECODE_ERR_NO_MEMORY);
        return false;
    }
    *buf = (uint8_t *)zlink_msg_data(&d->msg) + d->body_have;
    *len = d->body_room - (size_t)d->body_have;
    return true;
}

zl_decode_result zl_decoder_direct_done(zl_decoder *d, size_t n,
                                        zlink_msg_t *out)
{
    if (d->state != DECODING_BODY)
        return d->state == DECODER_FAILED ? ZL_DECODE_ERROR
                                          : ZL_DECODE_NEED_MORE;
    /* More than zl_decoder_direct_buffer offered is the caller's bug, and
     * it has already written past the body. */
    assert(n <= d->body_room - d->body_have);
    d->body_have += n;
    if (d->body_have < d->body_size)
        return ZL_DECODE_NEED_MORE;
    return finish_frame(d, out);
}
