/* session_zap.c — a session's one ZAP exchange: a pipe to the handler the
 * application bound at inproc://zeromq.zap.01, the engine's request on it,
 * and the reply handed back to the engine. The pipe lives on the session's
 * I/O thread; commands for it after it is let go are dropped (pipe.h). */
#include <errno.h>

#include "ctx.h"
#include "engine.h"
#include "session.h"
#include "socket.h"
#include "transport/inproc.h"
#include "zap.h"

int zl_session_ask_zap(zl_session *s, const zl_zap_request *r)
{
    zl_session_close_zap(s);
    zl_pipe *p;
    if (zl_inproc_connect_pipe(zl_ctx_inproc(s->socket->ctx), ZL_ZAP_ENDPOINT,
                               &s->base.thread->mailbox, s, &p) != 0)
        return -1;
    s->zap = p;
    if (!zl_zap_send_request(p, r)) {
        zl_session_close_zap(s);
        errno = ENOMEM;
        return -1;
    }
    /* Our end sleeps until the reply wakes it. Should the reply be there
     * already, it is read on the next pass, once the engine waits for it. */
    if (zl_pipe_check_read(p)) {
        zl_cmd cmd = {.type = ZL_CMD_ACTIVATE_READ, .target = s, .pipe = p};
        zl_pipe_ref(p);
        zl_mailbox_send(&s->base.thread->mailbox, &cmd);
    }
    return 0;
}

void zl_session_close_zap(zl_session *s)
{
    if (!s->zap)
        return;
    zl_pipe_terminate(s->zap);
    zl_pipe_release(s->zap);
    s->zap = NULL;
}

void zl_session_zap_command(zl_session *s, const zl_cmd *cmd)
{
    if (cmd->type != ZL_CMD_ACTIVATE_READ && cmd->type != ZL_CMD_PIPE_TERM)
        return; /* HWM news: the exchange is one message each way */
    zl_zap_reply reply;
    uint32_t reason;
    zl_zap_read r = zl_zap_read_reply(s->zap, &reply, &reason);
    if (r == ZL_ZAP_PENDING && cmd->type == ZL_CMD_ACTIVATE_READ)
        return;
    if (r == ZL_ZAP_PENDING) {
        r = ZL_ZAP_BAD; /* the handler went away without a reply */
        reason = ZLINK_PROTOCOL_ERROR_ZAP_UNSPECIFIED;
    }
    zl_session_close_zap(s);
    if (s->engine)
        zl_engine_zap_replied(s->engine, r == ZL_ZAP_REPLY ? &reply : NULL,
                              reason); /* may end s */
    else if (r == ZL_ZAP_REPLY)
        zlink_msg_close(&reply.metadata);
}
