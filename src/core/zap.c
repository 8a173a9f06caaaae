/* zap.c — one ZAP exchange (rfc.zeromq.org spec 27): the request a session
 * writes to the application's handler, and the checks libzmq makes of the
 * reply. */
#include "zap.h"

#include <string.h>

#include "msg.h"

#define REPLY_FRAMES 7

static bool write_frame(zl_pipe *p, const void *data, size_t len, bool more)
{
    zlink_msg_t msg;
    if (zl_msg_init_buffer(&msg, data, len) != 0)
        return false;
    if (more)
        zl_msg_set_flags(&msg, ZL_MSG_MORE);
    if (!zl_pipe_write(p, &msg)) {
        zlink_msg_close(&msg);
        return false;
    }
    return true;
}

static bool write_blob(zl_pipe *p, const zl_blob *b, bool more)
{
    return write_frame(p, b ? b->data : NULL, b ? b->len : 0, more);
}

bool zl_zap_send_request(zl_pipe *p, const zl_zap_request *r)
{
    /* The empty delimiter first, as a REQ would: the handler is usually a
     * REP. The request id is always "1": one request per pipe. */
    bool ok = write_frame(p, NULL, 0, true) && write_frame(p, "1.0", 3, true) &&
              write_frame(p, "1", 1, true) &&
              write_frame(p, r->domain, strlen(r->domain), true) &&
              write_frame(p, r->address, strlen(r->address), true) &&
              write_blob(p, r->identity, true) &&
              write_frame(p, r->mechanism, strlen(r->mechanism),
                          r->username != NULL || r->curve_key != NULL);
    /* NULL's request ends at the mechanism: it has no credentials. */
    if (ok && r->username)
        ok = write_blob(p, r->username, true) &&
             write_blob(p, r->password, false);
    else if (ok && r->curve_key)
        ok = write_frame(p, r->curve_key, 32, false);
    if (!ok) {
        zl_pipe_rollback(p);
        return false;
    }
    zl_pipe_flush(p);
    return true;
}

static bool frame_is(const zlink_msg_t *m, const char *text)
{
    size_t len = strlen(text);
    return zlink_msg_size((zlink_msg_t *)m) == len &&
           memcmp(zlink_msg_data((zlink_msg_t *)m), text, len) == 0;
}

/* libzmq's checks, in libzmq's order and with its reasons. */
static uint32_t check_reply(zlink_msg_t *f, zl_zap_reply *out)
{
    if (zlink_msg_size(&f[0]) != 0)
        return ZLINK_PROTOCOL_ERROR_ZAP_MALFORMED_REPLY;
    if (!frame_is(&f[1], "1.0"))
        return ZLINK_PROTOCOL_ERROR_ZAP_BAD_VERSION;
    if (!frame_is(&f[2], "1"))
        return ZLINK_PROTOCOL_ERROR_ZAP_BAD_REQUEST_ID;
    if (frame_is(&f[3], "200"))
        out->status = 200;
    else if (frame_is(&f[3], "300"))
        out->status = 300;
    else if (frame_is(&f[3], "400"))
        out->status = 400;
    else if (frame_is(&f[3], "500"))
        out->status = 500;
    else
        return ZLINK_PROTOCOL_ERROR_ZAP_INVALID_STATUS_CODE;
    size_t id_len = zlink_msg_size(&f[5]);
    if (id_len > 255)
        return ZLINK_PROTOCOL_ERROR_ZAP_INVALID_METADATA;
    out->user_id.len = (uint8_t)id_len;
    if (id_len)
        memcpy(out->user_id.data, zlink_msg_data(&f[5]), id_len);
    return 0;
}

zl_zap_read zl_zap_read_reply(zl_pipe *p, zl_zap_reply *out, uint32_t *reason)
{
    zlink_msg_t f[REPLY_FRAMES];
    int n = 0;
    bool more = true, whole = false;
    *reason = ZLINK_PROTOCOL_ERROR_ZAP_UNSPECIFIED;
    while (more) {
        zlink_msg_t part;
        zlink_msg_init(&part);
        zl_pipe_read_result r = zl_pipe_read(p, &part);
        if (r == ZL_PIPE_EMPTY && n == 0)
            return ZL_ZAP_PENDING; /* the reader sees whole messages only */
        if (r != ZL_PIPE_MSG)
            break; /* the handler went away */
        more = (zl_msg_flags(&part) & ZL_MSG_MORE) != 0;
        if (n < REPLY_FRAMES)
            f[n] = part;
        else
            zlink_msg_close(&part);
        n++;
        whole = !more;
    }
    if (whole && n != REPLY_FRAMES)
        *reason = ZLINK_PROTOCOL_ERROR_ZAP_MALFORMED_REPLY;
    else if (whole)
        *reason = check_reply(f, out);
    int kept = n < REPLY_FRAMES ? n : REPLY_FRAMES;
    if (whole && *reason == 0) {
        out->metadata = f[6];
        kept = 6;
    }
    for (int i = 0; i < kept; i++)
        zlink_msg_close(&f[i]);
    return whole && *reason == 0 ? ZL_ZAP_REPLY : ZL_ZAP_BAD;
}
