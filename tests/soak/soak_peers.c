/* soak_peers.c — the soak's peers: raw TCP connections, driven by poll from
 * one process, each of one kind (valid, malformed, stalling, vanishing;
 * the growth kinds under --growth) against one of the servers, for a
 * random lifetime, after which another takes its slot. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "soak.h"
#include "zlink.h"
#include "zmtp/zmtp.h"

typedef enum kind {
    K_VALID,          /* handshake, messages both ways, a clean close */
    K_VALID_RESET,    /* the same, ended by a reset */
    K_TRICKLE,        /* a valid message, a byte at a time */
    K_GARBAGE,        /* random bytes for a greeting */
    K_BAD_READY,      /* READY with broken properties */
    K_WRONG_TYPE,     /* READY with a socket type the server refuses */
    K_BAD_FRAME,      /* reserved flag bits after the handshake */
    K_STALL_GREETING, /* part of a greeting, then silence */
    K_STALL_FRAME,    /* part of a frame, then silence */
    K_VANISH_FRAME,   /* part of a frame, then gone */
    K_NON_READER,     /* subscribes to everything, never reads */
    K_OVERSIZE,       /* a frame past MAXMSGSIZE */
    K_CONNECT_ONLY,   /* connects and goes */
    K_DEFAULT_COUNT,
    /* --growth: what only a bounded implementation survives. */
    K_ENDLESS_MORE = K_DEFAULT_COUNT, /* parts with MORE, never a last */
    K_HUGE_FRAME,   /* announces 8 GiB, sends a trickle of it */
    K_CANCEL_FLOOD, /* CANCELs of random topics, at the deaf XPUB */
    K_QUEUE_8K,     /* 8 KiB messages, at the deaf DEALER */
    K_COUNT
} kind;

static const char *const kind_names[K_COUNT] = {
    "valid",        "valid-reset",  "trickle",    "garbage",
    "bad-ready",    "wrong-type",   "bad-frame",  "stall-greeting",
    "stall-frame",  "vanish-frame", "non-reader", "oversize",
    "connect-only", "endless-more", "huge-frame", "cancel-flood",
    "queue-8k"};

#define HUGE_FRAME_SENT (64 * 1024)

typedef struct peer {
    int fd;
    kind kind;
    int target;    /* server index */
    int peer_type; /* the socket type it announces */
    uint64_t deadline;
    uint8_t *out; /* bytes still to send */
    size_t out_len, out_pos, out_cap;
    bool reads;       /* reads what the server sends */
    bool streams;     /* sends more whenever out is empty */
    bool trickles;    /* one byte per round */
    bool reset;       /* ends with a reset, not a FIN */
    size_t huge_sent; /* of a K_HUGE_FRAME body */
} peer;

typedef struct stats {
    uint64_t started[K_COUNT];
    uint64_t closed_by_server[K_COUNT];
    uint64_t bytes_out, bytes_in;
} stats;

typedef struct peers {
    const soak_config *cfg;
    int ports[SOAK_TYPES];
    peer *slots;
    uint32_t rng;
    stats stats;
} peers;

static uint32_t next_rand(peers *ps)
{
    ps->rng ^= ps->rng << 13;
    ps->rng ^= ps->rng >> 17;
    ps->rng ^= ps->rng << 5;
    return ps->rng;
}

static uint32_t rand_in(peers *ps, uint32_t lo, uint32_t hi)
{
    return lo + next_rand(ps) % (hi - lo + 1);
}

static void out_put(peer *p, const void *data, size_t len)
{
    if (p->out_len + len > p->out_cap) {
        size_t cap = p->out_cap ? p->out_cap : 1024;
        while (cap < p->out_len + len)
            cap *= 2;
        p->out = realloc(p->out, cap);
        if (!p->out)
            abort();
        p->out_cap = cap;
    }
    memcpy(p->out + p->out_len, data, len);
    p->out_len += len;
}

static void out_frame(peer *p, uint8_t flags, const void *body, size_t size)
{
    uint8_t header[ZL_FRAME_HEADER_MAX];
    out_put(p, header, zl_frame_header_encode(header, flags, size));
    if (size)
        out_put(p, body, size);
}

static void out_command(peer *p, const char *name, const void *data, size_t len)
{
    uint8_t body[300];
    size_t n = strlen(name);
    body[0] = (uint8_t)n;
    memcpy(body + 1, name, n);
    memcpy(body + 1 + n, data, len);
    out_frame(p, ZL_FRAME_COMMAND, body, 1 + n + len);
}

static void out_greeting(peer *p)
{
    uint8_t greeting[ZL_GREETING_SIZE];
    zl_greeting_encode(greeting, "NULL", false);
    out_put(p, greeting, sizeof greeting);
}

static void out_ready(peer *p, int type)
{
    uint8_t ready[256];
    out_put(p, ready, zl_ready_encode(ready, sizeof ready, type, "", 0));
}

static void out_handshake(peer *p)
{
    out_greeting(p);
    out_ready(p, p->peer_type);
}

/* The type a well-behaved peer of each server has. */
static int compatible_type(int server_type)
{
    switch (server_type) {
    case ZLINK_PUB:
        return ZLINK_SUB;
    case ZLINK_XPUB:
        return ZLINK_XSUB;
    case ZLINK_SUB:
        return ZLINK_PUB;
    case ZLINK_XSUB:
        return ZLINK_XPUB;
    case ZLINK_DEALER:
        return ZLINK_ROUTER;
    case ZLINK_ROUTER:
        return ZLINK_DEALER;
    default:
        return ZLINK_PAIR;
    }
}

/* A round of valid traffic for the peer's type: subscriptions from a
 * subscriber, messages from everyone else. */
static void out_valid_traffic(peers *ps, peer *p)
{
    static uint8_t body[2048];
    char topic[8];
    snprintf(topic, sizeof topic, "t%u", rand_in(ps, 0, 99));
    if (p->peer_type == ZLINK_SUB || p->peer_type == ZLINK_XSUB) {
        if (rand_in(ps, 0, 3) == 0)
            out_command(p, "CANCEL", topic, strlen(topic));
        else
            out_command(p, "SUBSCRIBE", topic, strlen(topic));
        if (rand_in(ps, 0, 7) == 0)
            out_command(p, "PING", "\x00\x0a", 2);
        return;
    }
    int parts = (int)rand_in(ps, 1, 3);
    for (int i = 0; i < parts; i++) {
        size_t size = rand_in(ps, 0, 7) == 0 ? rand_in(ps, 256, sizeof body)
                                             : rand_in(ps, 1, 64);
        memset(body, 'a' + i, size);
        out_frame(p, i + 1 < parts ? ZL_FRAME_MORE : 0, body, size);
    }
}

static void out_growth_traffic(peers *ps, peer *p)
{
    if (p->kind == K_ENDLESS_MORE) {
        for (int i = 0; i < 64; i++)
            out_frame(p, ZL_FRAME_MORE, "xy", 2);
    } else if (p->kind == K_HUGE_FRAME && p->huge_sent < HUGE_FRAME_SENT) {
        /* The point is what the announcement reserves, not the bytes
         * that follow: they stop at a modest amount. */
        static const uint8_t chunk[1024];
        out_put(p, chunk, sizeof chunk);
        p->huge_sent += sizeof chunk;
    } else if (p->kind == K_QUEUE_8K) {
        static uint8_t body[8192];
        for (int i = 0; i < 4; i++)
            out_frame(p, 0, body, sizeof body);
    } else if (p->kind == K_CANCEL_FLOOD) {
        char topic[16];
        for (int i = 0; i < 64; i++) {
            snprintf(topic, sizeof topic, "never%u", next_rand(ps));
            out_command(p, "CANCEL", topic, strlen(topic));
        }
    }
}

/* Fills the peer's first bytes and sets how it behaves. */
static void script(peers *ps, peer *p)
{
    static const uint8_t oversize_body[SOAK_MAXMSGSIZE + 64];
    uint64_t now = soak_now_ms();
    uint32_t life = rand_in(ps, 50, 1500);
    p->reads = true;
    switch (p->kind) {
    case K_VALID:
    case K_VALID_RESET:
        out_handshake(p);
        out_valid_traffic(ps, p);
        p->streams = true;
        p->reset = p->kind == K_VALID_RESET;
        break;
    case K_TRICKLE:
        out_handshake(p);
        out_valid_traffic(ps, p);
        p->trickles = true;
        break;
    case K_GARBAGE: {
        uint8_t junk[200];
        size_t n = rand_in(ps, 1, sizeof junk);
        for (size_t i = 0; i < n; i++)
            junk[i] = (uint8_t)next_rand(ps);
        if (rand_in(ps, 0, 1))
            junk[0] = 0xff; /* past the signature's first byte */
        out_put(p, junk, n);
        break;
    }
    case K_BAD_READY: {
        out_greeting(p);
        /* A property whose value length runs past the command. */
        static const uint8_t bad[] = "\x05READY\x0bSocket-Type\xff\xff\xff\x7f"
                                     "DEALER";
        out_frame(p, ZL_FRAME_COMMAND, bad, sizeof bad - 1);
        break;
    }
    case K_WRONG_TYPE: {
        /* PUB pairs with none of the servers but SUB and XSUB, SUB with
         * neither of those. */
        int server = soak_types[p->target];
        out_greeting(p);
        out_ready(p, server == ZLINK_SUB || server == ZLINK_XSUB ? ZLINK_SUB
                                                                 : ZLINK_PUB);
        break;
    }
    case K_BAD_FRAME:
        out_handshake(p);
        /* By hand: the encoder keeps only the flags it knows. */
        out_put(p,
                "\xf8\x03"
                "bad",
                5);
        break;
    case K_STALL_GREETING:
        out_greeting(p);
        p->out_len = rand_in(ps, 1, ZL_GREETING_SIZE - 1);
        p->reads = false;
        life = rand_in(ps, 500, 3000);
        break;
    case K_STALL_FRAME:
    case K_VANISH_FRAME: {
        out_handshake(p);
        uint8_t header[ZL_FRAME_HEADER_MAX];
        out_put(p, header, zl_frame_header_encode(header, 0, 1000));
        out_put(p, "0123456789", rand_in(ps, 0, 10));
        if (p->kind == K_STALL_FRAME) {
            p->reads = false;
            life = rand_in(ps, 500, 3000);
        } else {
            life = rand_in(ps, 5, 200);
            p->reset = rand_in(ps, 0, 1);
        }
        break;
    }
    case K_NON_READER:
        out_handshake(p);
        if (p->peer_type == ZLINK_SUB || p->peer_type == ZLINK_XSUB)
            out_command(p, "SUBSCRIBE", "", 0);
        p->reads = false;
        life = rand_in(ps, 500, 3000);
        break;
    case K_OVERSIZE:
        out_handshake(p);
        out_frame(p, 0, oversize_body, sizeof oversize_body);
        break;
    case K_CONNECT_ONLY:
        life = 0;
        p->reset = rand_in(ps, 0, 1);
        break;
    case K_ENDLESS_MORE:
    case K_HUGE_FRAME:
    case K_CANCEL_FLOOD:
    case K_QUEUE_8K:
        out_handshake(p);
        if (p->kind == K_HUGE_FRAME) {
            uint8_t header[ZL_FRAME_HEADER_MAX];
            out_put(p, header,
                    zl_frame_header_encode(header, 0, (uint64_t)8 << 30));
        }
        p->streams = true;
        life = rand_in(ps, 1000, 4000);
        break;
    default:
        break;
    }
    p->deadline = now + life;
}

int soak_kind_from_name(const char *name)
{
    for (int k = 0; k < K_COUNT; k++)
        if (strcmp(name, kind_names[k]) == 0)
            return k;
    return -1;
}

static void start_peer(peers *ps, peer *p)
{
    int kinds = ps->cfg->growth ? K_COUNT : K_DEFAULT_COUNT;
    *p = (peer){.fd = -1, .out = p->out, .out_cap = p->out_cap};
    p->kind = (kind)rand_in(ps, 0, (uint32_t)kinds - 1);
    while ((int)p->kind == ps->cfg->skip_kind)
        p->kind = (kind)rand_in(ps, 0, (uint32_t)kinds - 1);
    if (ps->cfg->only_kind >= 0)
        p->kind = (kind)ps->cfg->only_kind;
    int servers = ps->cfg->growth ? SOAK_TYPES : SOAK_DEAF_XPUB;
    p->target = p->kind == K_CANCEL_FLOOD ? SOAK_DEAF_XPUB
                : p->kind == K_QUEUE_8K
                    ? SOAK_DEAF_DEALER
                    : (int)rand_in(ps, 0, (uint32_t)servers - 1);
    p->peer_type = compatible_type(soak_types[p->target]);
    p->out_len = p->out_pos = 0;
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return; /* out of fds: the slot tries again next round */
    int on = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &on, sizeof on);
    struct sockaddr_in addr = {.sin_family = AF_INET,
                               .sin_port =
                                   htons((uint16_t)ps->ports[p->target]),
                               .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    if (connect(fd, (struct sockaddr *)&addr, sizeof addr) != 0 &&
        errno != EINPROGRESS) {
        close(fd);
        return;
    }
    p->fd = fd;
    ps->stats.started[p->kind]++;
    script(ps, p);
}

static void end_peer(peer *p)
{
    if (p->fd < 0)
        return;
    if (p->reset) {
        struct linger lg = {1, 0};
        setsockopt(p->fd, SOL_SOCKET, SO_LINGER, &lg, sizeof lg);
    }
    close(p->fd);
    p->fd = -1;
}

static void closed_by_server(peers *ps, peer *p)
{
    ps->stats.closed_by_server[p->kind]++;
    end_peer(p);
}

static void peer_write(peers *ps, peer *p)
{
    if (p->out_pos == p->out_len && p->streams) {
        p->out_len = p->out_pos = 0;
        if (p->kind >= K_DEFAULT_COUNT)
            out_growth_traffic(ps, p);
        else
            out_valid_traffic(ps, p);
    }
    size_t left = p->out_len - p->out_pos;
    if (left == 0)
        return;
    if (p->trickles)
        left = 1;
    ssize_t n = send(p->fd, p->out + p->out_pos, left, MSG_NOSIGNAL);
    if (n > 0) {
        p->out_pos += (size_t)n;
        ps->stats.bytes_out += (uint64_t)n;
    } else if (n < 0 && errno != EAGAIN && errno != EINTR &&
               errno != ENOTCONN) {
        closed_by_server(ps, p);
    }
}

static void peer_read(peers *ps, peer *p)
{
    uint8_t buf[16384];
    for (int i = 0; i < 4; i++) {
        ssize_t n = recv(p->fd, buf, sizeof buf, 0);
        if (n > 0) {
            ps->stats.bytes_in += (uint64_t)n;
            continue;
        }
        if (n == 0 || (errno != EAGAIN && errno != EINTR))
            closed_by_server(ps, p);
        return;
    }
}

/* Runs the slots for ms milliseconds, then ends every peer. */
static void churn(peers *ps, uint64_t ms)
{
    int count = ps->cfg->peers;
    struct pollfd *fds = calloc((size_t)count, sizeof *fds);
    if (!fds)
        abort();
    uint64_t end = soak_now_ms() + ms;
    while (soak_now_ms() < end) {
        uint64_t now = soak_now_ms();
        for (int i = 0; i < count; i++) {
            peer *p = &ps->slots[i];
            if (p->fd >= 0 && now >= p->deadline)
                end_peer(p);
            if (p->fd < 0)
                start_peer(ps, p);
            fds[i].fd = p->fd;
            fds[i].events =
                (short)((p->reads ? POLLIN : POLLRDHUP) |
                        (p->out_pos < p->out_len || p->streams ? POLLOUT : 0));
            fds[i].revents = 0;
        }
        if (poll(fds, (nfds_t)count, 5) < 0 && errno != EINTR)
            break;
        for (int i = 0; i < count; i++) {
            peer *p = &ps->slots[i];
            if (p->fd < 0 || fds[i].fd != p->fd)
                continue;
            if (fds[i].revents & (POLLIN | POLLHUP | POLLERR)) {
                if (p->reads)
                    peer_read(ps, p);
                else if (fds[i].revents & (POLLHUP | POLLERR))
                    closed_by_server(ps, p);
            }
            if (p->fd >= 0 && !p->reads && (fds[i].revents & POLLRDHUP))
                closed_by_server(ps, p);
            if (p->fd >= 0 && (fds[i].revents & POLLOUT))
                peer_write(ps, p);
        }
    }
    for (int i = 0; i < count; i++)
        end_peer(&ps->slots[i]);
    free(fds);
}

static bool wait_line(int ctl, const char *want, char *buf, size_t cap)
{
    size_t len = 0;
    while (len + 1 < cap) {
        ssize_t n = read(ctl, buf + len, cap - 1 - len);
        if (n <= 0)
            return false;
        len += (size_t)n;
        buf[len] = '\0';
        if (strstr(buf, want))
            return true;
    }
    return false;
}

static void say(int ctl, const char *line)
{
    size_t len = strlen(line);
    if (write(ctl, line, len) != (ssize_t)len)
        exit(1);
}

static void print_stats(const peers *ps)
{
    uint64_t total = 0;
    for (int k = 0; k < K_COUNT; k++)
        total += ps->stats.started[k];
    printf("soak: %llu peer connections, %llu bytes sent, %llu received\n",
           (unsigned long long)total, (unsigned long long)ps->stats.bytes_out,
           (unsigned long long)ps->stats.bytes_in);
    for (int k = 0; k < K_COUNT; k++)
        if (ps->stats.started[k] && ps->cfg->verbose)
            printf("soak:   %-14s %6llu started, %6llu closed by zlink\n",
                   kind_names[k], (unsigned long long)ps->stats.started[k],
                   (unsigned long long)ps->stats.closed_by_server[k]);
    fflush(stdout);
}

int soak_run_peers(const soak_config *cfg, int ctl)
{
    peers ps = {.cfg = cfg, .rng = cfg->seed ? cfg->seed : 1};
    char line[256];
    if (!wait_line(ctl, "\n", line, sizeof line))
        return 1;
    char *cursor = line;
    for (int i = 0; i < SOAK_TYPES; i++)
        ps.ports[i] = (int)strtol(cursor, &cursor, 10);
    ps.slots = calloc((size_t)cfg->peers, sizeof *ps.slots);
    if (!ps.slots)
        return 1;
    for (int i = 0; i < cfg->peers; i++)
        ps.slots[i].fd = -1;

    churn(&ps, 2000);
    say(ctl, "paused\n");
    if (!wait_line(ctl, "go\n", line, sizeof line))
        return 1;
    memset(&ps.stats, 0, sizeof ps.stats);
    churn(&ps, (uint64_t)cfg->seconds * 1000u);
    print_stats(&ps);
    say(ctl, "done\n");
    for (int i = 0; i < cfg->peers; i++)
        free(ps.slots[i].out);
    free(ps.slots);
    return 0;
}
