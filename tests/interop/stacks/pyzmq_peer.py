#!/usr/bin/env python3
"""pyzmq_peer.py — test_interop's peer on pyzmq: the same argv, message
pattern and exit codes as tests/interop/zmq_peer.c, so the one suite checks
zlink against each ZMTP stack."""
import functools
import sys
import time

import zmq

# The pattern of tests/interop/zmq_peer.c and tests/test_interop.c.
BIG_INDEX, BIG_SIZE, MAX_PARTS = 4, 1024 * 1024, 4
EXIT_USAGE, EXIT_TIMEOUT, EXIT_MISMATCH, EXIT_ZMQ = 1, 2, 3, 4
TIMEOUT_MS, LINGER_MS = 10000, 2000
TYPES = {"PAIR": zmq.PAIR, "DEALER": zmq.DEALER, "ROUTER": zmq.ROUTER,
         "REQ": zmq.REQ, "REP": zmq.REP, "PUSH": zmq.PUSH, "PULL": zmq.PULL}


def parts_of(i):
    return 1 + i % 3


def size_of(i, part):
    if i == BIG_INDEX and part == 0:
        return BIG_SIZE
    if i % 2 == 1 and part == 1:
        return 0
    return 1 + (i * 37 + part * 111) % 300


@functools.lru_cache(maxsize=None)
def body(i, part):
    return bytes((i * 31 + part * 7 + off * 13 + (off >> 8)) & 0xFF
                 for off in range(size_of(i, part)))


def fail(code, text):
    sys.stderr.write("pyzmq_peer: %s\n" % text)
    sys.exit(code)


class Peer:
    def __init__(self, type_name, mode, endpoint, count, routing_id):
        if type_name not in TYPES:
            fail(EXIT_USAGE, "unknown socket type '%s'" % type_name)
        self.type = TYPES[type_name]
        self.count, self.routing_id = count, routing_id
        self.ctx = zmq.Context()
        s = self.socket = self.ctx.socket(self.type)
        s.rcvtimeo, s.sndtimeo, s.linger = TIMEOUT_MS, TIMEOUT_MS, LINGER_MS
        if self.type == zmq.ROUTER:
            s.setsockopt(zmq.ROUTER_MANDATORY, 1)
        elif routing_id is not None:
            s.setsockopt(zmq.ROUTING_ID, routing_id.encode())
        if mode == "connect":
            s.connect(endpoint)
        elif mode == "bind":
            s.bind(endpoint)
            print(s.getsockopt(zmq.LAST_ENDPOINT).decode(), flush=True)
        else:
            fail(EXIT_USAGE, "mode must be bind or connect, not '%s'" % mode)

    def send(self, frames):
        give_up = time.monotonic() + TIMEOUT_MS / 1000
        while True:
            try:
                return self.socket.send_multipart(frames, copy=False)
            except zmq.Again:
                fail(EXIT_TIMEOUT, "send timed out")
            except zmq.ZMQError as e:
                # ROUTER_MANDATORY: the zlink peer is still handshaking.
                if e.errno != zmq.EHOSTUNREACH or time.monotonic() > give_up:
                    fail(EXIT_ZMQ, "send: %s" % e)
                time.sleep(0.01)

    def send_pattern(self, i):
        frames = [body(i, part) for part in range(parts_of(i))]
        if self.type == zmq.ROUTER:
            frames.insert(0, self.routing_id.encode())
        self.send(frames)

    def recv_checked(self, i):
        try:
            frames = self.socket.recv_multipart()
        except zmq.Again:
            fail(EXIT_TIMEOUT, "message %d: receive timed out" % i)
        if len(frames) > MAX_PARTS:
            fail(EXIT_MISMATCH, "message %d: %d parts" % (i, len(frames)))
        pattern = frames
        if self.type == zmq.ROUTER:
            if self.routing_id is not None and \
                    frames[0] != self.routing_id.encode():
                fail(EXIT_MISMATCH, "message %d: routing id is %r" %
                     (i, frames[0]))
            pattern = frames[1:]
        if len(pattern) != parts_of(i):
            fail(EXIT_MISMATCH, "message %d: %d parts, expected %d" %
                 (i, len(pattern), parts_of(i)))
        for part, data in enumerate(pattern):
            if data != body(i, part):
                fail(EXIT_MISMATCH, "message %d part %d differs" % (i, part))
        return frames

    def echo(self):
        for i in range(self.count):
            self.send(self.recv_checked(i))

    def send_all(self):
        if self.type == zmq.ROUTER and self.routing_id is None:
            fail(EXIT_USAGE, "a ROUTER can only send to a known routing id")
        for i in range(self.count):
            self.send_pattern(i)
        for i in range(self.count):
            self.recv_checked(i)

    def request(self):
        for i in range(self.count):
            self.send_pattern(i)
            self.recv_checked(i)

    def source(self):
        for i in range(self.count):
            self.send_pattern(i)

    def sink(self):
        for i in range(self.count):
            self.recv_checked(i)


def main(argv):
    if not 5 <= len(argv) <= 7:
        fail(EXIT_USAGE, "usage: pyzmq_peer TYPE bind|connect ENDPOINT "
             "echo|send|request|source|sink [COUNT [ROUTING_ID]]")
    count = int(argv[5]) if len(argv) > 5 else 10
    peer = Peer(argv[1], argv[2], argv[3], count,
                argv[6] if len(argv) > 6 else None)
    scenarios = {"echo": peer.echo, "send": peer.send_all,
                 "request": peer.request, "source": peer.source,
                 "sink": peer.sink}
    if argv[4] not in scenarios:
        fail(EXIT_USAGE, "unknown scenario '%s'" % argv[4])
    scenarios[argv[4]]()
    peer.socket.close()
    peer.ctx.term()


if __name__ == "__main__":
    main(sys.argv)
