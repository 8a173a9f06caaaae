/* router.h — ROUTER's state: its routing table and the id frame in
 * flight. REP keeps this state at its start and routes through
 * zl_router_ops, so the two share one routing table implementation. */
#ifndef ZL_ROUTER_H
#define ZL_ROUTER_H

#include <stdbool.h>
#include <stdint.h>

#include "fair_queue.h"
#include "load_balance.h"
#include "msg.h"
#include "patterns/routing_table.h"

typedef struct router_state {
    zl_fair_queue in;
    /* Under ROUTER_MANDATORY, has_out means "some peer has room": what a
     * load balancer tracks. Messages never go through it. */
    zl_load_balance with_room;
    routing_table table;
    uint32_t next_auto_id;
    bool handover; /* ZLINK_ROUTER_HANDOVER */

    /* Sending: the id frame chose current_out, or NULL to drop. */
    bool more_out;
    zl_pipe *current_out;
    /* The peer the last id frame found. Replies and streams go to one
     * peer many times in a row, and comparing its id costs less than
     * hashing the frame (bench/NOTES.md, "Comment figures").
     * Cleared when that pipe leaves the table. */
    zl_pipe *last_found;

    /* Receiving: the id frame is handed out before the message's first
     * part, which waits here with a copy of its pipe's id. */
    bool more_in; /* the application is inside a message */
    bool pending;
    bool pending_id_sent;
    zl_blob pending_id;
    zlink_msg_t pending_part;
} router_state;

#endif
