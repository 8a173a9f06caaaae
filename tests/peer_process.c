/* peer_process.c — see peer_process.h. */
#define _POSIX_C_SOURCE 200809L /* SIGKILL */

#include "peer_process.h"

#include "testutil.h"

#include <signal.h>
#include <stdio.h>
#include <string.h>

/* What a case leaves behind if an assertion ends it: the peer still
 * running. */
static int running_peer_pid;

static bool file_exists(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (f == NULL)
        return false;
    fclose(f);
    return true;
}

bool peer_find(const char *name, char *path, size_t cap)
{
    char dir[768];
    size_t len = sizeof dir;
    if (uv_os_getenv("ZLINK_TEST_PEER_DIR", dir, &len) != 0)
        return false;
    snprintf(path, cap, "%s/%s", dir, name);
    if (file_exists(path))
        return true;
    snprintf(path, cap, "%s/%s.exe", dir, name);
    return file_exists(path);
}

void peer_kill_running(void)
{
    if (running_peer_pid != 0)
        uv_kill(running_peer_pid, SIGKILL);
    running_peer_pid = 0;
}

static void on_alloc(uv_handle_t *handle, size_t suggested, uv_buf_t *buf)
{
    (void)suggested;
    struct peer *p = handle->data;
    size_t room = sizeof p->line - 1 - p->len;
    if (p->line_done || room == 0)
        *buf = uv_buf_init(p->scratch, sizeof p->scratch);
    else
        *buf = uv_buf_init(p->line + p->len, (unsigned)room);
}

static void on_read(uv_stream_t *stream, ssize_t nread, const uv_buf_t *buf)
{
    struct peer *p = stream->data;
    if (nread < 0) {
        p->out_closed = true;
        uv_read_stop(stream);
        return;
    }
    if (p->line_done || buf->base == p->scratch)
        return;
    p->len += (size_t)nread;
    p->line[p->len] = '\0';
    char *newline = strchr(p->line, '\n');
    if (newline != NULL) {
        *newline = '\0';
        if (newline > p->line && newline[-1] == '\r')
            newline[-1] = '\0';
        p->line_done = true;
    }
}

static void on_peer_exit(uv_process_t *process, int64_t status, int term_signal)
{
    struct peer *p = process->data;
    p->exited = true;
    p->exit_status = status;
    p->term_signal = term_signal;
    running_peer_pid = 0;
}

static void on_timer(uv_timer_t *timer)
{
    struct peer *p = timer->data;
    p->timer_fired = true;
}

bool peer_run_until(struct peer *p, const bool *done, uint64_t timeout_ms)
{
    p->timer_fired = false;
    uv_timer_start(&p->timer, on_timer, timeout_ms, 0);
    while (!*done && !p->timer_fired)
        uv_run(&p->loop, UV_RUN_ONCE);
    uv_timer_stop(&p->timer);
    return *done;
}

void peer_start(struct peer *p, char *const args[], bool with_stdin)
{
    memset(p, 0, sizeof *p);
    p->with_stdin = with_stdin;
    ck_assert_int_eq(uv_loop_init(&p->loop), 0);
    if (with_stdin)
        ck_assert_int_eq(uv_pipe_init(&p->loop, &p->in, 0), 0);
    ck_assert_int_eq(uv_pipe_init(&p->loop, &p->out, 0), 0);
    ck_assert_int_eq(uv_timer_init(&p->loop, &p->timer), 0);
    p->out.data = p;
    p->timer.data = p;
    p->process.data = p;

    uv_stdio_container_t stdio[3];
    if (with_stdin) {
        stdio[0].flags = UV_CREATE_PIPE | UV_READABLE_PIPE;
        stdio[0].data.stream = (uv_stream_t *)&p->in;
    } else {
        stdio[0].flags = UV_IGNORE;
    }
    stdio[1].flags = UV_CREATE_PIPE | UV_WRITABLE_PIPE;
    stdio[1].data.stream = (uv_stream_t *)&p->out;
    stdio[2].flags = UV_INHERIT_FD;
    stdio[2].data.fd = 2;
    uv_process_options_t options = {0};
    options.file = args[0];
    options.args = (char **)args;
    options.stdio = stdio;
    options.stdio_count = 3;
    options.exit_cb = on_peer_exit;

    int rc = uv_spawn(&p->loop, &p->process, &options);
    ck_assert_msg(rc == 0, "uv_spawn %s: %s", args[0], uv_strerror(rc));
    running_peer_pid = p->process.pid;
    rc = uv_read_start((uv_stream_t *)&p->out, on_alloc, on_read);
    ck_assert_msg(rc == 0, "uv_read_start: %s", uv_strerror(rc));
}

const char *peer_read_endpoint(struct peer *p)
{
    p->timer_fired = false;
    uv_timer_start(&p->timer, on_timer, PEER_START_TIMEOUT_MS, 0);
    while (!p->line_done && !p->out_closed && !p->timer_fired)
        uv_run(&p->loop, UV_RUN_ONCE);
    uv_timer_stop(&p->timer);
    ck_assert_msg(p->line_done, "peer printed no endpoint (%s)",
                  p->timer_fired ? "timed out" : "stdout closed");
    return p->line;
}

static void close_handle(uv_handle_t *handle)
{
    if (!uv_is_closing(handle))
        uv_close(handle, NULL);
}

void peer_stop(struct peer *p)
{
    if (p->with_stdin)
        close_handle((uv_handle_t *)&p->in);
}

int peer_wait(struct peer *p)
{
    if (!peer_run_until(p, &p->exited, PEER_EXIT_TIMEOUT_MS)) {
        uv_process_kill(&p->process, SIGKILL);
        peer_run_until(p, &p->exited, PEER_KILL_GRACE_MS);
        ck_abort_msg("peer did not exit within %d ms, killed",
                     PEER_EXIT_TIMEOUT_MS);
    }
    ck_assert_msg(p->term_signal == 0, "peer died of signal %d",
                  p->term_signal);
    return (int)p->exit_status;
}

void peer_close(struct peer *p)
{
    close_handle((uv_handle_t *)&p->process);
    if (p->with_stdin)
        close_handle((uv_handle_t *)&p->in);
    close_handle((uv_handle_t *)&p->out);
    close_handle((uv_handle_t *)&p->timer);
    uv_run(&p->loop, UV_RUN_DEFAULT);
    ck_assert_int_eq(uv_loop_close(&p->loop), 0);
}
