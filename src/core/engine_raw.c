/* engine_raw.c — a STREAM socket's connection: no greeting, no handshake
 * and no framing. What a read brings becomes one message; each message
 * sent goes out as its bytes alone (engine_output.c). The application
 * hears of the connection and of its end as empty messages, as libzmq's
 * raw engine announces them (ZLINK_STREAM_NOTIFY). */
#include <errno.h>
#include <string.h>

#include "engine_private.h"

/* The announcement carries the connection's properties (Peer-Address).
 * A full pipe holds it back as it holds bytes back, until the application
 * reads. */
static void notify(zl_engine *e)
{
    if (!e->raw_notify || !e->session || e->input_stopped)
        return;
    zlink_msg_t msg;
    zlink_msg_init(&msg);
    zl_engine_push_input(e, &msg);
    zl_session_flush(e->session);
}

bool zl_engine_raw_start(zl_engine *e)
{
    zl_engine_make_bare_metadata(e);
    /* The pipe is named on the socket's side (stream.c). */
    static const zl_blob no_id = {.len = 0};
    if (zl_session_engine_ready(e->session, &no_id) != 0) {
        zl_engine_fail_io(e, -ENOMEM);
        return false;
    }
    notify(e);
    return true;
}

void zl_engine_raw_notify_end(zl_engine *e)
{
    notify(e); /* lost if the pipe is full: the connection is gone */
}

/* A message takes at most this much of a read, as libzmq's raw decoder
 * (its in_batch_size): RCVHWM messages then hold at most RCVHWM times
 * this, whatever size the reads are. */
#define RAW_MESSAGE_MAX (8 * 1024)

bool zl_engine_raw_input(zl_engine *e)
{
    size_t len = e->in_end - e->in_pos;
    if (len > RAW_MESSAGE_MAX)
        len = RAW_MESSAGE_MAX;
    zlink_msg_t msg;
    if (zlink_msg_init_size(&msg, len) != 0) {
        zl_engine_fail_io(e, -ENOMEM);
        return false;
    }
    memcpy(zlink_msg_data(&msg), (const uint8_t *)e->in_block->data + e->in_pos,
           len);
    e->in_pos += len;
    e->frames_this_read++;
    return zl_engine_push_input(e, &msg);
}
