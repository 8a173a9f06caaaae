/* peer_process.h — the interop suites' libzmq peer process, run under libuv. */
#ifndef ZL_PEER_PROCESS_H
#define ZL_PEER_PROCESS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <uv.h>

/* Every wait on the peer is bounded, so a broken peer or a broken zlink
 * fails the case instead of hanging the suite. */
/* A peer's first move (its endpoint line, its first message, its DEALER
 * becoming reachable) also waits for its start: a cold JVM on a machine
 * running other CI stages took more than 10 s. */
#define PEER_START_TIMEOUT_MS 40000
#define PEER_EXIT_TIMEOUT_MS 20000
#define PEER_KILL_GRACE_MS 5000

/* The peer process: its stdout gives the endpoint it bound; with_stdin
 * gives it a stdin pipe, whose staying open keeps a publishing peer
 * publishing. */
struct peer {
    uv_loop_t loop;
    uv_process_t process;
    uv_pipe_t in, out;
    uv_timer_t timer;
    char line[1024];
    size_t len;
    char scratch[256];
    bool with_stdin;
    bool line_done;
    bool out_closed;
    bool exited;
    bool timer_fired;
    int64_t exit_status;
    int term_signal;
};

/* Writes "$ZLINK_TEST_PEER_DIR/<name>" (or "<name>.exe") into path; true if
 * that file exists. */
bool peer_find(const char *name, char *path, size_t cap);
/* Spawns args[0] with args (NULL-terminated) and starts reading its stdout. */
void peer_start(struct peer *p, char *const args[], bool with_stdin);
/* Runs the peer's loop until *done or until timeout_ms; true if done. */
bool peer_run_until(struct peer *p, const bool *done, uint64_t timeout_ms);
/* The endpoint a binding peer printed (its ZMQ_LAST_ENDPOINT). */
const char *peer_read_endpoint(struct peer *p);
/* Closing its stdin tells a publishing peer to stop (with_stdin only). */
void peer_stop(struct peer *p);
/* Waits for the peer to exit, killing it past the bound; its exit code. */
int peer_wait(struct peer *p);
void peer_close(struct peer *p);
/* Kills the peer still running, if any (a case ended by an assertion). */
void peer_kill_running(void);

#endif
