/* test_pipe.c — pipes: order, multipart atomicity, rollback, the HWM and
 * sleep handshakes, pacing, termination, release, and a two-thread
 * stress. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <uv.h>

#include "atomics.h"
#include "mailbox.h"
#include "msg.h"
#include "pipe.h"
#include "testutil.h"

/* ---- One mailbox per end, counting what arrives ----------------------- */

typedef struct end_box {
    zl_mailbox mb;
    int signals;
    int counts[ZL_CMD_CALL + 1];
} end_box;

static void box_signal(void *arg)
{
    ((end_box *)arg)->signals++;
}

static void box_init(end_box *box, zl_pipe *p)
{
    memset(box, 0, sizeof *box);
    ck_assert_int_eq(zl_mailbox_init(&box->mb, box_signal, box), 0);
    zl_pipe_set_owner(p, &box->mb, box);
}

/* Receives what is queued as an owner would; returns how many arrived. */
static int box_drain(end_box *box, zl_pipe *expect)
{
    zl_cmd cmd;
    int n = 0;
    while (zl_mailbox_recv(&box->mb, &cmd)) {
        ck_assert_ptr_eq(cmd.target, box);
        ck_assert_ptr_eq(cmd.pipe, expect);
        box->counts[cmd.type]++;
        zl_pipe_unref(cmd.pipe);
        n++;
    }
    return n;
}

static int frees;

static void count_free(void *data, void *hint)
{
    frees++;
}

static void make_msg(zlink_msg_t *msg, uint32_t value, uint8_t flags)
{
    ck_assert_int_eq(zlink_msg_init_size(msg, sizeof value), 0);
    memcpy(zlink_msg_data(msg), &value, sizeof value);
    zl_msg_set_flags(msg, flags);
}

/* A message whose body is freed through count_free. */
static void make_counted_msg(zlink_msg_t *msg, uint8_t flags)
{
    static char body[200];
    ck_assert_int_eq(
        zlink_msg_init_data(msg, body, sizeof body, count_free, NULL), 0);
    zl_msg_set_flags(msg, flags);
}

static void write_value(zl_pipe *p, uint32_t value, uint8_t flags)
{
    zlink_msg_t msg;
    make_msg(&msg, value, flags);
    ck_assert(zl_pipe_write(p, &msg));
    /* The pipe took the message; we hold an empty one. */
    ck_assert_uint_eq(zlink_msg_size(&msg), 0);
    zlink_msg_close(&msg);
}

static void read_value(zl_pipe *p, uint32_t expect, uint8_t flags)
{
    zlink_msg_t msg;
    ck_assert_int_eq(zl_pipe_read(p, &msg), ZL_PIPE_MSG);
    ck_assert_uint_eq(zlink_msg_size(&msg), sizeof expect);
    uint32_t value;
    memcpy(&value, zlink_msg_data(&msg), sizeof value);
    ck_assert_uint_eq(value, expect);
    ck_assert_uint_eq(zl_msg_flags(&msg) & ZL_MSG_MORE, flags & ZL_MSG_MORE);
    zlink_msg_close(&msg);
}

static void expect_empty(zl_pipe *p)
{
    zlink_msg_t msg;
    ck_assert_int_eq(zl_pipe_read(p, &msg), ZL_PIPE_EMPTY);
}

typedef struct fixture {
    zl_pipe *a, *b;
    end_box box_a, box_b;
} fixture;

static void setup_pair(fixture *f, int a_to_b_hwm, int b_to_a_hwm)
{
    ck_assert_int_eq(zl_pipe_pair(&f->a, &f->b, a_to_b_hwm, b_to_a_hwm), 0);
    box_init(&f->box_a, f->a);
    box_init(&f->box_b, f->b);
}

static void teardown_pair(fixture *f)
{
    zl_pipe_release(f->a);
    zl_pipe_release(f->b);
    zl_mailbox_destroy(&f->box_a.mb);
    zl_mailbox_destroy(&f->box_b.mb);
}

/* ---- Single thread ---------------------------------------------------- */

START_TEST(test_order)
{
    fixture f;
    setup_pair(&f, 0, 0);
    /* Several chunks' worth, so the reader hands chunks back for reuse. */
    for (int round = 0; round < 3; round++) {
        for (uint32_t i = 0; i < 1000; i++)
            write_value(f.a, i, 0);
        zl_pipe_flush(f.a);
        ck_assert_uint_eq(zl_pipe_readable_count(f.b), 1000);
        for (uint32_t i = 0; i < 1000; i++)
            read_value(f.b, i, 0);
        ck_assert_uint_eq(zl_pipe_readable_count(f.b), 0);
    }
    /* The other direction is independent. */
    write_value(f.b, 42, 0);
    zl_pipe_flush(f.b);
    read_value(f.a, 42, 0);
    expect_empty(f.a);
    /* Nothing unflushed is visible. */
    write_value(f.a, 7, 0);
    expect_empty(f.b);
    teardown_pair(&f);
}
END_TEST

START_TEST(test_multipart_atomic)
{
    fixture f;
    setup_pair(&f, 0, 0);
    write_value(f.a, 1, ZL_MSG_MORE);
    write_value(f.a, 2, ZL_MSG_MORE);
    ck_assert(f.a->in_message);
    zl_pipe_flush(f.a);
    expect_empty(f.b);
    ck_assert(!zl_pipe_check_read(f.b));
    ck_assert_uint_eq(zl_pipe_readable_count(f.b), 0);
    /* A flush that published nothing does not wake the reader. */
    ck_assert_int_eq(box_drain(&f.box_b, f.b), 0);

    write_value(f.a, 3, 0);
    ck_assert(!f.a->in_message);
    expect_empty(f.b);
    zl_pipe_flush(f.a);
    ck_assert_int_eq(box_drain(&f.box_b, f.b), 1);
    ck_assert_int_eq(f.box_b.counts[ZL_CMD_ACTIVATE_READ], 1);
    ck_assert_uint_eq(zl_pipe_readable_count(f.b), 1);
    ck_assert(zl_pipe_check_read(f.b));
    read_value(f.b, 1, ZL_MSG_MORE);
    read_value(f.b, 2, ZL_MSG_MORE);
    read_value(f.b, 3, 0);
    expect_empty(f.b);
    teardown_pair(&f);
}
END_TEST

START_TEST(test_multipart_across_chunks)
{
    fixture f;
    setup_pair(&f, 0, 0);
    /* One 1000-part message spans four chunks and is published whole. */
    for (uint32_t i = 0; i < 999; i++) {
        write_value(f.a, i, ZL_MSG_MORE);
        zl_pipe_flush(f.a);
        ck_assert(!zl_pipe_check_read(f.b));
    }
    write_value(f.a, 999, 0);
    zl_pipe_flush(f.a);
    for (uint32_t i = 0; i < 1000; i++)
        read_value(f.b, i, i < 999 ? ZL_MSG_MORE : 0);
    expect_empty(f.b);
    teardown_pair(&f);
}
END_TEST

/* Chunks follow the queue's depth, not how many messages passed: a pipe
 * that never holds more than a few messages stays in small chunks, and one
 * that holds many grows to full ones. */
START_TEST(test_chunks_follow_depth)
{
    fixture f;
    setup_pair(&f, 0, 0);
    uint32_t next_write = 0, next_read = 0;
    for (int i = 0; i < 4; i++)
        write_value(f.a, next_write++, 0);
    for (int i = 0; i < 5000; i++) {
        write_value(f.a, next_write++, 0);
        zl_pipe_flush(f.a);
        read_value(f.b, next_read++, 0);
    }
    int shallow = zl_pipe_write_chunk_slots(f.a);
    ck_assert_int_le(shallow, 16);
    /* A deep queue grows its chunks, and keeps them once drained. */
    for (int i = 0; i < 2000; i++)
        write_value(f.a, next_write++, 0);
    zl_pipe_flush(f.a);
    while (next_read < next_write)
        read_value(f.b, next_read++, 0);
    ck_assert_int_eq(zl_pipe_write_chunk_slots(f.a), 256);
    for (int i = 0; i < 1000; i++) {
        write_value(f.a, next_write++, 0);
        zl_pipe_flush(f.a);
        read_value(f.b, next_read++, 0);
    }
    ck_assert_int_eq(zl_pipe_write_chunk_slots(f.a), 256);
    expect_empty(f.b);
    /* The other direction passed nothing: still its first chunk. */
    ck_assert_int_eq(zl_pipe_write_chunk_slots(f.b), 2);
    teardown_pair(&f);
}
END_TEST

START_TEST(test_rollback)
{
    fixture f;
    setup_pair(&f, 0, 0);
    frees = 0;
    write_value(f.a, 1, 0);
    zlink_msg_t msg;
    make_counted_msg(&msg, ZL_MSG_MORE);
    ck_assert(zl_pipe_write(f.a, &msg));
    make_counted_msg(&msg, ZL_MSG_MORE);
    ck_assert(zl_pipe_write(f.a, &msg));
    zl_pipe_rollback(f.a);
    ck_assert_int_eq(frees, 2);
    ck_assert(!f.a->in_message);
    write_value(f.a, 2, 0);
    zl_pipe_flush(f.a);
    read_value(f.b, 1, 0);
    read_value(f.b, 2, 0);
    expect_empty(f.b);

    /* A rollback across chunk boundaries; the chunks it leaves behind are
     * reused by the writes that follow. */
    for (int i = 0; i < 600; i++) {
        make_counted_msg(&msg, ZL_MSG_MORE);
        ck_assert(zl_pipe_write(f.a, &msg));
    }
    zl_pipe_flush(f.a);
    expect_empty(f.b);
    zl_pipe_rollback(f.a);
    ck_assert_int_eq(frees, 602);
    for (uint32_t i = 0; i < 1000; i++)
        write_value(f.a, i, 0);
    zl_pipe_flush(f.a);
    for (uint32_t i = 0; i < 1000; i++)
        read_value(f.b, i, 0);
    expect_empty(f.b);
    /* Rolling back with nothing unfinished changes nothing. */
    zl_pipe_rollback(f.a);
    write_value(f.a, 5, 0);
    zl_pipe_flush(f.a);
    read_value(f.b, 5, 0);
    teardown_pair(&f);
}
END_TEST

START_TEST(test_hwm)
{
    fixture f;
    setup_pair(&f, 10, 0); /* lwm is 5 */
    for (int stall = 0; stall < 3; stall++) {
        uint32_t written = 0;
        while (zl_pipe_check_write(f.a))
            write_value(f.a, written++, 0);
        ck_assert_uint_eq(written, 10);
        /* A second refusal arms nothing more. */
        ck_assert(!zl_pipe_check_write(f.a));
        /* The stall published what was written, or no one could drain. */
        ck_assert_uint_eq(zl_pipe_readable_count(f.b), 10);
        for (uint32_t i = 0; i < 4; i++)
            read_value(f.b, i, 0);
        ck_assert_int_eq(box_drain(&f.box_a, f.a), 0); /* 6 left */
        read_value(f.b, 4, 0);                         /* 5 left: lwm */
        ck_assert_int_eq(box_drain(&f.box_a, f.a), 1);
        ck_assert_int_eq(f.box_a.counts[ZL_CMD_ACTIVATE_WRITE], stall + 1);
        for (uint32_t i = 5; i < 10; i++)
            read_value(f.b, i, 0);
        expect_empty(f.b);
        ck_assert_int_eq(box_drain(&f.box_a, f.a), 0);
        ck_assert(zl_pipe_check_write(f.a));
        /* The reader slept once per stall. */
        ck_assert_int_eq(box_drain(&f.box_b, f.b), stall == 0 ? 0 : 1);
    }
    teardown_pair(&f);
}
END_TEST

/* Refused at the HWM, the writer gets back in only when the reader has
 * drained the queue to the lwm, as libzmq's: then in a batch, not one
 * message per message read. */
START_TEST(test_refused_until_lwm)
{
    fixture f;
    setup_pair(&f, 10, 0); /* lwm is 5 */
    uint32_t written = 0, read = 0;
    while (zl_pipe_check_write(f.a))
        write_value(f.a, written++, 0);
    ck_assert_uint_eq(written, 10);
    while (read < 4) {
        read_value(f.b, read++, 0);
        ck_assert(!zl_pipe_check_write(f.a)); /* 9 to 6 queued */
    }
    read_value(f.b, read++, 0); /* 5 queued: the lwm */
    while (zl_pipe_check_write(f.a))
        write_value(f.a, written++, 0);
    ck_assert_uint_eq(written, 15);
    /* Refused again at 10: one read is not enough this time either. */
    read_value(f.b, read++, 0);
    ck_assert(!zl_pipe_check_write(f.a));
    while (read < written)
        read_value(f.b, read++, 0);
    expect_empty(f.b);
    ck_assert(zl_pipe_check_write(f.a));
    teardown_pair(&f);
}
END_TEST

START_TEST(test_hwm_multipart_counts_messages)
{
    fixture f;
    setup_pair(&f, 2, 0);
    /* Parts are free; whole messages count. */
    for (uint32_t m = 0; m < 2; m++) {
        ck_assert(zl_pipe_check_write(f.a));
        for (uint32_t i = 0; i < 5; i++)
            write_value(f.a, m * 10 + i, i < 4 ? ZL_MSG_MORE : 0);
    }
    ck_assert(!zl_pipe_check_write(f.a));
    for (uint32_t i = 0; i < 4; i++)
        read_value(f.b, i, ZL_MSG_MORE);
    ck_assert_int_eq(box_drain(&f.box_a, f.a), 0);
    read_value(f.b, 4, 0); /* 1 left: lwm */
    ck_assert_int_eq(box_drain(&f.box_a, f.a), 1);
    ck_assert(zl_pipe_check_write(f.a));
    teardown_pair(&f);
}
END_TEST

/* zl_pipe_send: the HWM check on a first part only, and a flush exactly
 * when a message is whole. */
START_TEST(test_send_checks_first_part_and_flushes_last)
{
    fixture f;
    setup_pair(&f, 1, 0);
    zlink_msg_t msg;
    /* A two-part message: nothing is readable until its last part. */
    make_msg(&msg, 1, ZL_MSG_MORE);
    ck_assert(zl_pipe_send(f.a, &msg, true));
    zlink_msg_close(&msg);
    ck_assert_uint_eq(zl_pipe_readable_count(f.b), 0);
    make_msg(&msg, 2, 0);
    ck_assert(zl_pipe_send(f.a, &msg, false));
    zlink_msg_close(&msg);
    ck_assert_uint_eq(zl_pipe_readable_count(f.b), 1);

    /* At the HWM a first part is refused and left to the caller... */
    make_msg(&msg, 3, 0);
    errno = 0;
    ck_assert(!zl_pipe_send(f.a, &msg, true));
    ck_assert_int_eq(errno, EAGAIN);
    ck_assert_uint_eq(zlink_msg_size(&msg), sizeof(uint32_t));
    /* ...while a later part is not checked: parts are free. */
    ck_assert(zl_pipe_send(f.a, &msg, false));
    zlink_msg_close(&msg);
    ck_assert_uint_eq(zl_pipe_readable_count(f.b), 2);

    read_value(f.b, 1, ZL_MSG_MORE);
    read_value(f.b, 2, 0);
    read_value(f.b, 3, 0);
    expect_empty(f.b);

    /* After terminate, every part is refused with EAGAIN. */
    zl_pipe_terminate(f.a);
    make_msg(&msg, 4, 0);
    errno = 0;
    ck_assert(!zl_pipe_send(f.a, &msg, false));
    ck_assert_int_eq(errno, EAGAIN);
    zlink_msg_close(&msg);
    teardown_pair(&f);
}
END_TEST

/* ---- Pacing (pipe.c) ---------------------------------------------------- */

/* 256 KiB bodies: the budget of 8 MiB paces from 32 queued, under an HWM of
 * 100, and wakes the writer at 16. */
#define LARGE_PART (256 * 1024)
#define PACE_HWM 100
#define PACED_AT 32

static void no_free(void *data, void *hint) {}

/* Large bodies share one buffer: where each starts in it says which
 * message it is. */
#define LARGE_VALUES 4096
static char large_buffer[LARGE_PART + LARGE_VALUES];

/* A body of LARGE_PART bytes, a content message as the pool's would be. */
static void write_large(zl_pipe *p, uint32_t value)
{
    zlink_msg_t msg;
    ck_assert_int_eq(zlink_msg_init_data(&msg,
                                         large_buffer + value % LARGE_VALUES,
                                         LARGE_PART, no_free, NULL),
                     0);
    ck_assert(zl_pipe_write(p, &msg));
    zlink_msg_close(&msg);
    zl_pipe_flush(p);
}

static void read_large(zl_pipe *p, uint32_t expect)
{
    zlink_msg_t msg;
    ck_assert_int_eq(zl_pipe_read(p, &msg), ZL_PIPE_MSG);
    ck_assert_uint_eq(zlink_msg_size(&msg), LARGE_PART);
    ck_assert_ptr_eq(zlink_msg_data(&msg),
                     large_buffer + expect % LARGE_VALUES);
    zlink_msg_close(&msg);
}

/* Writes large messages while zl_pipe_check_send has room; returns how
 * many, counting from *next. */
static uint32_t fill_large(zl_pipe *p, uint32_t *next)
{
    uint32_t n = 0;
    while (zl_pipe_check_send(p) == ZL_PIPE_ROOM) {
        write_large(p, (*next)++);
        n++;
        ck_assert_uint_le(n, PACE_HWM);
    }
    return n;
}

/* A pipe of PACE_HWM whose writer has written large messages until paced;
 * *next is the value the next one carries. */
static void setup_paced(fixture *f, uint32_t *next)
{
    setup_pair(f, PACE_HWM, 0);
    *next = 0;
    /* The first large message is written before pacing knows its size. */
    ck_assert_uint_eq(fill_large(f->a, next), PACED_AT);
}

/* A queue of large messages paces a send that may wait at the budget, far
 * under the HWM, and wakes the writer at half of it; the plain HWM check
 * and a send that does not wait are not refused until the HWM. */
START_TEST(test_pace_large_messages)
{
    fixture f;
    uint32_t next;
    setup_paced(&f, &next);
    ck_assert_int_eq(zl_pipe_check_send(f.a), ZL_PIPE_PACED);
    ck_assert(zl_pipe_check_write(f.a));
    ck_assert_uint_eq(zl_pipe_readable_count(f.b), PACED_AT);

    for (uint32_t i = 0; i < PACED_AT / 2 - 1; i++)
        read_large(f.b, i);
    ck_assert_int_eq(box_drain(&f.box_a, f.a), 0); /* 17 left */
    read_large(f.b, PACED_AT / 2 - 1);             /* 16 left */
    ck_assert_int_eq(box_drain(&f.box_a, f.a), 1);
    ck_assert_int_eq(f.box_a.counts[ZL_CMD_ACTIVATE_WRITE], 1);

    /* Room for 16 more, then paced again. */
    ck_assert_uint_eq(fill_large(f.a, &next), PACED_AT / 2);

    /* Not for a send that does not wait: up to the HWM. */
    zl_pipe_set_pacing(ZL_PIPE_PACE_OFF);
    ck_assert_uint_eq(fill_large(f.a, &next), PACE_HWM - PACED_AT);
    ck_assert_int_eq(zl_pipe_check_send(f.a), ZL_PIPE_FULL);
    zl_pipe_set_pacing(ZL_PIPE_PACE_ON);
    ck_assert_int_eq(zl_pipe_check_send(f.a), ZL_PIPE_FULL);

    for (uint32_t i = PACED_AT / 2; i < next; i++)
        read_large(f.b, i);
    expect_empty(f.b);
    teardown_pair(&f);
}
END_TEST

/* A send that gave up waiting goes ahead, and the queue then paces no more
 * until its reader has read another budget's worth. */
START_TEST(test_pace_gave_up_pauses_pacing)
{
    fixture f;
    uint32_t next;
    setup_paced(&f, &next);
    zl_pipe_set_pacing(ZL_PIPE_PACE_GAVE_UP);
    ck_assert_int_eq(zl_pipe_check_send(f.a), ZL_PIPE_ROOM);
    write_large(f.a, next++);
    zl_pipe_set_pacing(ZL_PIPE_PACE_ON);
    /* Paused: the next sends take the queue to the HWM. */
    ck_assert_uint_eq(fill_large(f.a, &next), PACE_HWM - PACED_AT - 1);
    ck_assert_int_eq(zl_pipe_check_send(f.a), ZL_PIPE_FULL);

    /* The reader drains to the low-water mark (50) and has then read 50:
     * pacing is back, and the queue is over its budget. */
    uint32_t read = 0;
    while (read < PACE_HWM / 2)
        read_large(f.b, read++);
    ck_assert_int_eq(zl_pipe_check_send(f.a), ZL_PIPE_PACED);
    while (read < next)
        read_large(f.b, read++);
    expect_empty(f.b);
    teardown_pair(&f);
}
END_TEST

/* A send retried without pacing takes back the wake its refusal armed:
 * the reader then drains the queue without a command for it. */
START_TEST(test_pace_retry_disarms_wake)
{
    fixture f;
    uint32_t next;
    setup_paced(&f, &next);
    ck_assert_int_eq(zl_pipe_check_send(f.a), ZL_PIPE_PACED);
    zl_pipe_set_pacing(ZL_PIPE_PACE_OFF);
    ck_assert_int_eq(zl_pipe_check_send(f.a), ZL_PIPE_ROOM);
    write_large(f.a, next++);
    zl_pipe_set_pacing(ZL_PIPE_PACE_ON);
    for (uint32_t i = 0; i < next; i++)
        read_large(f.b, i);
    expect_empty(f.b);
    ck_assert_int_eq(box_drain(&f.box_a, f.a), 0);
    teardown_pair(&f);
}
END_TEST

/* Pacing follows the size of what is written: it stops after a small
 * message, and does not start where the budget holds no fewer messages
 * than the HWM. */
START_TEST(test_pace_follows_message_size)
{
    fixture f;
    uint32_t next;
    setup_paced(&f, &next);
    write_value(f.a, 7, 0);
    zl_pipe_flush(f.a);
    uint32_t written = PACED_AT + 1;
    while (zl_pipe_check_send(f.a) == ZL_PIPE_ROOM) {
        write_value(f.a, 7, 0);
        ck_assert_uint_le(++written, PACE_HWM);
    }
    ck_assert_uint_eq(written, PACE_HWM);
    teardown_pair(&f);

    setup_pair(&f, PACED_AT / 2, 0);
    next = 0;
    ck_assert_uint_eq(fill_large(f.a, &next), PACED_AT / 2);
    ck_assert_int_eq(zl_pipe_check_send(f.a), ZL_PIPE_FULL);
    teardown_pair(&f);
}
END_TEST

START_TEST(test_reader_sleep_one_wakeup)
{
    fixture f;
    setup_pair(&f, 0, 0);
    /* Awake reader: flushes send nothing. */
    for (uint32_t i = 0; i < 10; i++) {
        write_value(f.a, i, 0);
        zl_pipe_flush(f.a);
    }
    ck_assert_int_eq(box_drain(&f.box_b, f.b), 0);
    for (uint32_t i = 0; i < 10; i++)
        read_value(f.b, i, 0);

    for (int sleep = 0; sleep < 5; sleep++) {
        if (sleep % 2)
            expect_empty(f.b);
        else
            ck_assert(!zl_pipe_check_read(f.b));
        for (uint32_t i = 0; i < 100; i++) {
            write_value(f.a, i, 0);
            zl_pipe_flush(f.a);
        }
        zl_pipe_flush(f.a);
        ck_assert_int_eq(box_drain(&f.box_b, f.b), 1);
        ck_assert_int_eq(f.box_b.counts[ZL_CMD_ACTIVATE_READ], sleep + 1);
        ck_assert_int_eq(f.box_b.signals, sleep + 1);
        for (uint32_t i = 0; i < 100; i++)
            read_value(f.b, i, 0);
    }
    /* Nothing for the writer's end in all this. */
    ck_assert_int_eq(box_drain(&f.box_a, f.a), 0);
    teardown_pair(&f);
}
END_TEST

START_TEST(test_terminate)
{
    fixture f;
    setup_pair(&f, 3, 0);
    for (uint32_t i = 0; i < 3; i++)
        write_value(f.a, i, 0);
    zl_pipe_flush(f.a);
    ck_assert(!zl_pipe_check_write(f.a));
    /* An unfinished message is dropped; the delimiter does not count
     * against the HWM. */
    write_value(f.a, 99, ZL_MSG_MORE);
    zl_pipe_terminate(f.a);
    zl_pipe_terminate(f.a);
    ck_assert(!f.a->in_message);
    ck_assert_int_eq(box_drain(&f.box_b, f.b), 1);
    ck_assert_int_eq(f.box_b.counts[ZL_CMD_PIPE_TERM], 1);
    ck_assert(!zl_pipe_check_write(f.a));
    zlink_msg_t msg;
    make_msg(&msg, 5, 0);
    ck_assert(!zl_pipe_write(f.a, &msg));
    zlink_msg_close(&msg);

    for (uint32_t i = 0; i < 3; i++)
        read_value(f.b, i, 0);
    ck_assert_int_eq(zl_pipe_read(f.b, &msg), ZL_PIPE_CLOSED);
    ck_assert(f.b->closed);
    ck_assert_int_eq(zl_pipe_read(f.b, &msg), ZL_PIPE_CLOSED);
    ck_assert(zl_pipe_check_read(f.b));
    /* The writer's credit still came back while the reader drained. */
    ck_assert_int_eq(box_drain(&f.box_a, f.a), 1);
    ck_assert_int_eq(f.box_a.counts[ZL_CMD_ACTIVATE_WRITE], 1);

    /* b answers with its own delimiter. */
    zl_pipe_terminate(f.b);
    ck_assert_int_eq(box_drain(&f.box_a, f.a), 1);
    ck_assert_int_eq(f.box_a.counts[ZL_CMD_PIPE_TERM], 1);
    ck_assert_int_eq(zl_pipe_read(f.a, &msg), ZL_PIPE_CLOSED);
    teardown_pair(&f);
}
END_TEST

START_TEST(test_terminate_wakes_sleeping_reader)
{
    fixture f;
    setup_pair(&f, 0, 0);
    expect_empty(f.b);
    zl_pipe_terminate(f.a);
    ck_assert_int_eq(box_drain(&f.box_b, f.b), 2);
    ck_assert_int_eq(f.box_b.counts[ZL_CMD_ACTIVATE_READ], 1);
    ck_assert_int_eq(f.box_b.counts[ZL_CMD_PIPE_TERM], 1);
    zlink_msg_t msg;
    ck_assert_int_eq(zl_pipe_read(f.b, &msg), ZL_PIPE_CLOSED);
    teardown_pair(&f);
}
END_TEST

/* pipe.c's chunk sizes: a queue starts with a chunk of FIRST_CHUNK, and
 * each next one is twice the last, up to CHUNK. */
#define FIRST_CHUNK 2
#define CHUNK 256
#define CHUNKS_CHECKED 10 /* the growing ones and two full ones */

/* Messages that fill chunks 0..k exactly. */
static uint32_t messages_through_chunk(int k)
{
    uint32_t total = 0, cap = FIRST_CHUNK;
    for (int i = 0; i <= k; i++) {
        total += cap;
        cap = cap * 2 < CHUNK ? cap * 2 : CHUNK;
    }
    return total;
}

START_TEST(test_delimiter_at_chunk_end)
{
    /* The delimiter in the last slot of each chunk, from the small first
     * one through the growing ones to full ones. */
    for (int k = 0; k < CHUNKS_CHECKED; k++) {
        uint32_t count = messages_through_chunk(k) - 1;
        fixture f;
        setup_pair(&f, 0, 0);
        for (uint32_t i = 0; i < count; i++)
            write_value(f.a, i, 0);
        zl_pipe_terminate(f.a);
        for (uint32_t i = 0; i < count; i++)
            read_value(f.b, i, 0);
        zlink_msg_t msg;
        ck_assert_int_eq(zl_pipe_read(f.b, &msg), ZL_PIPE_CLOSED);
        ck_assert_int_eq(zl_pipe_read(f.b, &msg), ZL_PIPE_CLOSED);
        teardown_pair(&f);
    }
}
END_TEST

/* Reads that trail writes across the small growing chunks and into full
 * ones: the reader leaves small chunks (freed, not recycled) while the
 * writer is already several chunks on. */
START_TEST(test_order_across_first_chunk)
{
    fixture f;
    setup_pair(&f, 0, 0);
    uint32_t written = 0, read = 0;
    static const uint32_t steps[] = {1,  FIRST_CHUNK - 1, 1,        3, 7,
                                     30, CHUNK,           2 * CHUNK};
    for (size_t s = 0; s < sizeof steps / sizeof steps[0]; s++) {
        for (uint32_t i = 0; i < steps[s]; i++)
            write_value(f.a, written++, 0);
        zl_pipe_flush(f.a);
        /* Leave some behind each time. */
        while (written - read > steps[s] / 2 + 1)
            read_value(f.b, read++, 0);
    }
    while (read < written)
        read_value(f.b, read++, 0);
    expect_empty(f.b);
    teardown_pair(&f);
}
END_TEST

START_TEST(test_release_stops_commands)
{
    fixture f;
    setup_pair(&f, 0, 0);
    frees = 0;
    expect_empty(f.b); /* asleep: the next flush would wake it */
    zl_pipe_release(f.b);
    zlink_msg_t msg;
    make_counted_msg(&msg, 0);
    ck_assert(zl_pipe_write(f.a, &msg));
    zl_pipe_flush(f.a);
    zl_pipe_terminate(f.a);
    ck_assert_int_eq(f.box_b.signals, 0);
    ck_assert_int_eq(box_drain(&f.box_b, f.b), 0);
    /* The unread message goes with the pipe's memory. */
    ck_assert_int_eq(frees, 0);
    zl_pipe_release(f.a);
    ck_assert_int_eq(frees, 1);
    zl_mailbox_destroy(&f.box_a.mb);
    zl_mailbox_destroy(&f.box_b.mb);
}
END_TEST

START_TEST(test_release_stops_credit)
{
    fixture f;
    setup_pair(&f, 2, 0);
    write_value(f.a, 1, 0);
    write_value(f.a, 2, 0);
    ck_assert(!zl_pipe_check_write(f.a)); /* armed */
    zl_pipe_terminate(f.a);
    zl_pipe_release(f.a);
    read_value(f.b, 1, 0); /* at the low-water mark, but a is gone */
    read_value(f.b, 2, 0);
    zlink_msg_t msg;
    ck_assert_int_eq(zl_pipe_read(f.b, &msg), ZL_PIPE_CLOSED);
    ck_assert_int_eq(f.box_a.signals, 0);
    ck_assert_int_eq(box_drain(&f.box_a, f.a), 0);
    ck_assert_int_eq(box_drain(&f.box_b, f.b), 1); /* the PIPE_TERM */
    zl_pipe_release(f.b);
    zl_mailbox_destroy(&f.box_a.mb);
    zl_mailbox_destroy(&f.box_b.mb);
}
END_TEST

START_TEST(test_command_in_flight_keeps_pipe)
{
    fixture f;
    setup_pair(&f, 0, 0);
    frees = 0;
    expect_empty(f.b);
    zlink_msg_t msg;
    for (int i = 0; i < 300; i++) {
        make_counted_msg(&msg, 0);
        ck_assert(zl_pipe_write(f.a, &msg));
    }
    make_counted_msg(&msg, ZL_MSG_MORE); /* unfinished, never published */
    ck_assert(zl_pipe_write(f.a, &msg));
    zl_pipe_flush(f.a); /* ACTIVATE_READ for b, holding a reference */
    zl_pipe_release(f.b);
    zl_pipe_release(f.a);
    ck_assert_int_eq(frees, 0);
    /* The receiver sees a dead end, ignores it, and drops the last ref. */
    zl_cmd cmd;
    ck_assert(zl_mailbox_recv(&f.box_b.mb, &cmd));
    ck_assert_int_eq(cmd.type, ZL_CMD_ACTIVATE_READ);
    ck_assert(!zl_pipe_cmd_live(cmd.pipe));
    zl_pipe_unref(cmd.pipe);
    ck_assert_int_eq(frees, 301);
    zl_mailbox_destroy(&f.box_a.mb);
    zl_mailbox_destroy(&f.box_b.mb);
}
END_TEST

START_TEST(test_no_owner_no_command)
{
    zl_pipe *a, *b;
    ck_assert_int_eq(zl_pipe_pair(&a, &b, 0, 0), 0);
    expect_empty(b);
    write_value(a, 1, 0);
    zl_pipe_flush(a);
    zl_pipe_terminate(a);
    read_value(b, 1, 0);
    ck_assert(zl_pipe_cmd_live(b));
    zl_pipe_release(a);
    zl_pipe_release(b);
}
END_TEST

START_TEST(test_bad_hwm)
{
    zl_pipe *a, *b;
    ck_assert_int_eq(zl_pipe_pair(&a, &b, -1, 0), -1);
}
END_TEST

/* ---- Two threads ------------------------------------------------------ */

/* An owner's thread: its mailbox signals a condition variable. */
typedef struct stress_end {
    zl_pipe *pipe;
    zl_mailbox mb;
    uv_mutex_t lock;
    uv_cond_t cond;
    int signalled;
    atomic_int pending; /* a hint of signalled, cheap to spin on */
    int counts[ZL_CMD_CALL + 1];
    int empties; /* ZL_PIPE_EMPTY results */
} stress_end;

typedef struct stress {
    stress_end writer, reader;
    uint32_t messages, parts;
    uv_thread_t thread;
} stress;

static void stress_signal(void *arg)
{
    stress_end *e = arg;
    uv_mutex_lock(&e->lock);
    e->signalled = 1;
    atomic_store_explicit(&e->pending, 1, memory_order_relaxed);
    uv_cond_signal(&e->cond);
    uv_mutex_unlock(&e->lock);
}

static void stress_end_init(stress_end *e, zl_pipe *p)
{
    memset(e, 0, sizeof *e);
    e->pipe = p;
    ck_assert_int_eq(uv_mutex_init(&e->lock), 0);
    ck_assert_int_eq(uv_cond_init(&e->cond), 0);
    ck_assert_int_eq(zl_mailbox_init(&e->mb, stress_signal, e), 0);
    zl_pipe_set_owner(p, &e->mb, e);
}

static void stress_end_destroy(stress_end *e)
{
    zl_mailbox_destroy(&e->mb);
    uv_cond_destroy(&e->cond);
    uv_mutex_destroy(&e->lock);
}

static int stress_drain(stress_end *e)
{
    zl_cmd cmd;
    int n = 0;
    while (zl_mailbox_recv(&e->mb, &cmd)) {
        e->counts[cmd.type]++;
        zl_pipe_unref(cmd.pipe);
        n++;
    }
    return n;
}

/* Blocks until at least one command arrived, then handles all queued. A
 * lost activation hangs here, and the test times out. Spinning a while
 * first keeps both threads running, so that they race each other. */
static void stress_wait(stress_end *e, int spins)
{
    for (;;) {
        if (stress_drain(e) > 0)
            return;
        for (int i = 0; i < spins; i++)
            if (atomic_load_explicit(&e->pending, memory_order_relaxed))
                break;
        uv_mutex_lock(&e->lock);
        while (!e->signalled)
            uv_cond_wait(&e->cond, &e->lock);
        e->signalled = 0;
        atomic_store_explicit(&e->pending, 0, memory_order_relaxed);
        uv_mutex_unlock(&e->lock);
    }
}

static void stress_write(void *arg)
{
    stress *s = arg;
    zl_pipe *p = s->writer.pipe;
    for (uint32_t i = 0; i < s->messages; i++) {
        while (!zl_pipe_check_write(p)) {
            stress_wait(&s->writer, 0);
        }
        for (uint32_t part = 0; part < s->parts; part++) {
            zlink_msg_t msg;
            uint32_t value = i * s->parts + part;
            zlink_msg_init_size(&msg, sizeof value);
            memcpy(zlink_msg_data(&msg), &value, sizeof value);
            if (part + 1 < s->parts)
                zl_msg_set_flags(&msg, ZL_MSG_MORE);
            if (!zl_pipe_write(p, &msg))
                abort();
            /* Flushing mid-message must not expose the parts. */
            if (part == 0 || i % 7 == 0)
                zl_pipe_flush(p);
        }
        /* Batched flushes, as a session would do them. */
        if (i % 16 == 0)
            zl_pipe_flush(p);
    }
    zl_pipe_terminate(p);
}

static void stress_run(uint32_t messages, uint32_t parts, int hwm)
{
    stress s;
    zl_pipe *a, *b;
    ck_assert_int_eq(zl_pipe_pair(&a, &b, hwm, 0), 0);
    stress_end_init(&s.writer, a);
    stress_end_init(&s.reader, b);
    s.messages = messages;
    s.parts = parts;
    ck_assert_int_eq(uv_thread_create(&s.thread, stress_write, &s), 0);

    uint32_t expect = 0;
    zlink_msg_t msg;
    for (;;) {
        zl_pipe_read_result r = zl_pipe_read(b, &msg);
        if (r == ZL_PIPE_CLOSED)
            break;
        if (r == ZL_PIPE_EMPTY) {
            s.reader.empties++;
            stress_wait(&s.reader, 0);
            continue;
        }
        /* Checked without ck_assert in the loop: it is the hot path. */
        uint32_t value;
        memcpy(&value, zlink_msg_data(&msg), sizeof value);
        bool more = (zl_msg_flags(&msg) & ZL_MSG_MORE) != 0;
        bool last = expect % parts == parts - 1;
        if (value != expect || more == last)
            ck_abort_msg("got %u (more %d), expected %u", value, more, expect);
        expect++;
        zlink_msg_close(&msg);
    }
    uv_thread_join(&s.thread);
    ck_assert_uint_eq(expect, messages * parts);
    /* The reader found the delimiter without waiting for its PIPE_TERM. */
    stress_drain(&s.reader);
    ck_assert_int_eq(s.reader.counts[ZL_CMD_PIPE_TERM], 1);
    /* The reader waits after every EMPTY, so each one was a new sleep, and
     * each sleep gets exactly one wakeup: none lost, none spurious. */
    ck_assert_int_eq(s.reader.counts[ZL_CMD_ACTIVATE_READ], s.reader.empties);
    zl_pipe_release(a);
    zl_pipe_release(b);
    stress_end_destroy(&s.writer);
    stress_end_destroy(&s.reader);
}

/* Ping-pong: every message needs its reader woken, and no later flush
 * would repair a lost wakeup, so one lost ACTIVATE_READ hangs the test. */
#define PING_ROUNDS 50000

static bool ping_read(stress_end *e, uint32_t *value)
{
    zlink_msg_t msg;
    zl_pipe_read_result r;
    while ((r = zl_pipe_read(e->pipe, &msg)) == ZL_PIPE_EMPTY)
        stress_wait(e, 20000);
    if (r == ZL_PIPE_CLOSED)
        return false;
    memcpy(value, zlink_msg_data(&msg), sizeof *value);
    zlink_msg_close(&msg);
    return true;
}

/* Sends, then dawdles a pseudo-random while, so that this thread's next
 * look at its empty queue lands anywhere around the peer's reply. */
static void ping_send(zl_pipe *p, uint32_t value)
{
    zlink_msg_t msg;
    zlink_msg_init_size(&msg, sizeof value);
    memcpy(zlink_msg_data(&msg), &value, sizeof value);
    if (!zl_pipe_write(p, &msg))
        abort();
    zl_pipe_flush(p);
    uint32_t jitter = (value * 2654435761u) >> 22;
    for (volatile uint32_t k = 0; k < jitter; k++)
        ;
}

static void ping_echo(void *arg)
{
    stress_end *e = arg;
    uint32_t value;
    while (ping_read(e, &value))
        ping_send(e->pipe, value + 1);
    zl_pipe_terminate(e->pipe);
}

START_TEST(test_stress_ping_pong)
{
    stress s;
    zl_pipe *a, *b;
    ck_assert_int_eq(zl_pipe_pair(&a, &b, 1, 1), 0);
    stress_end_init(&s.writer, a);
    stress_end_init(&s.reader, b);
    ck_assert_int_eq(uv_thread_create(&s.thread, ping_echo, &s.reader), 0);
    for (uint32_t i = 0; i < PING_ROUNDS; i += 2) {
        ck_assert(zl_pipe_check_write(a));
        ping_send(a, i);
        uint32_t value;
        ck_assert(ping_read(&s.writer, &value));
        ck_assert_uint_eq(value, i + 1);
    }
    zl_pipe_terminate(a);
    uint32_t value;
    ck_assert(!ping_read(&s.writer, &value));
    uv_thread_join(&s.thread);
    zl_pipe_release(a);
    zl_pipe_release(b);
    stress_end_destroy(&s.writer);
    stress_end_destroy(&s.reader);
}
END_TEST

START_TEST(test_stress_two_threads)
{
    stress_run(1000000, 1, 1000);
}
END_TEST

START_TEST(test_stress_multipart_small_hwm)
{
    stress_run(20000, 3, 3);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("pipe");
    TCase *tc = tcase_create("single_thread");
    tcase_add_test(tc, test_order);
    tcase_add_test(tc, test_multipart_atomic);
    tcase_add_test(tc, test_multipart_across_chunks);
    tcase_add_test(tc, test_rollback);
    tcase_add_test(tc, test_chunks_follow_depth);
    tcase_add_test(tc, test_hwm);
    tcase_add_test(tc, test_refused_until_lwm);
    tcase_add_test(tc, test_hwm_multipart_counts_messages);
    tcase_add_test(tc, test_send_checks_first_part_and_flushes_last);
    tcase_add_test(tc, test_pace_large_messages);
    tcase_add_test(tc, test_pace_gave_up_pauses_pacing);
    tcase_add_test(tc, test_pace_retry_disarms_wake);
    tcase_add_test(tc, test_pace_follows_message_size);
    tcase_add_test(tc, test_reader_sleep_one_wakeup);
    tcase_add_test(tc, test_terminate);
    tcase_add_test(tc, test_terminate_wakes_sleeping_reader);
    tcase_add_test(tc, test_delimiter_at_chunk_end);
    tcase_add_test(tc, test_order_across_first_chunk);
    tcase_add_test(tc, test_release_stops_commands);
    tcase_add_test(tc, test_release_stops_credit);
    tcase_add_test(tc, test_command_in_flight_keeps_pipe);
    tcase_add_test(tc, test_no_owner_no_command);
    tcase_add_test(tc, test_bad_hwm);
    suite_add_tcase(s, tc);

    TCase *threads = tcase_create("threads");
    /* Generous: sanitizer builds are several times slower. */
    tcase_set_timeout(threads, 120);
    tcase_add_test(threads, test_stress_two_threads);
    tcase_add_test(threads, test_stress_multipart_small_hwm);
    tcase_add_test(threads, test_stress_ping_pong);
    suite_add_tcase(s, threads);
    return s;
}

int main(void)
{
    return zl_test_run(suite());
}
