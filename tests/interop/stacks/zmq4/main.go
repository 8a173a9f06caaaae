// zmq4_peer — test_interop's peer on go-zeromq/zmq4, a pure-Go ZMTP stack:
// the same argv, message pattern and exit codes as tests/interop/zmq_peer.c,
// so the one suite checks zlink against each ZMTP stack.
package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"reflect"
	"strconv"
	"sync"
	"time"
	"unsafe"

	"github.com/go-zeromq/zmq4"
)

// The pattern of tests/interop/zmq_peer.c and tests/test_interop.c.
const (
	bigIndex     = 4
	bigSize      = 1024 * 1024
	maxParts     = 4
	exitUsage    = 1
	exitTimeout  = 2
	exitMismatch = 3
	exitZmq      = 4
	timeout      = 10 * time.Second
)

func partsOf(i int) int { return 1 + i%3 }

func sizeOf(i, part int) int {
	if i == bigIndex && part == 0 {
		return bigSize
	}
	if i%2 == 1 && part == 1 {
		return 0
	}
	return 1 + (i*37+part*111)%300
}

func body(i, part int) []byte {
	b := make([]byte, sizeOf(i, part))
	for off := range b {
		b[off] = byte(i*31 + part*7 + off*13 + (off >> 8))
	}
	return b
}

func fail(code int, format string, args ...interface{}) {
	fmt.Fprintf(os.Stderr, "zmq4_peer: "+format+"\n", args...)
	os.Exit(code)
}

type peer struct {
	socket    zmq4.Socket
	typ       string
	count     int
	routingID string
}

// connCount reads how many connections the socket has. zmq4 does not queue
// for peers that have not connected yet: a ROUTER drops the message and
// other types fail with "no connections available". So a bound socket
// waits for its peer this way before it sends.
func connCount(s zmq4.Socket) int {
	inner := reflect.ValueOf(s).Elem().FieldByName("sck").Elem()
	mu := (*sync.RWMutex)(unsafe.Pointer(inner.FieldByName("mu").UnsafeAddr()))
	mu.RLock()
	defer mu.RUnlock()
	return inner.FieldByName("conns").Len()
}

func (p *peer) send(frames [][]byte) {
	if connCount(p.socket) == 0 {
		giveUp := time.Now().Add(timeout)
		for connCount(p.socket) == 0 {
			if time.Now().After(giveUp) {
				fail(exitTimeout, "routing id %s never connected", p.routingID)
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
	if err := p.socket.SendMulti(zmq4.NewMsgFrom(frames...)); err != nil {
		fail(exitZmq, "send: %v", err)
	}
}

func (p *peer) sendPattern(i int) {
	var frames [][]byte
	if p.typ == "ROUTER" {
		frames = append(frames, []byte(p.routingID))
	}
	for part := 0; part < partsOf(i); part++ {
		frames = append(frames, body(i, part))
	}
	p.send(frames)
}

func (p *peer) recvChecked(i int) [][]byte {
	type result struct {
		msg zmq4.Msg
		err error
	}
	done := make(chan result, 1)
	go func() {
		m, err := p.socket.Recv()
		done <- result{m, err}
	}()
	var r result
	select {
	case r = <-done:
	case <-time.After(timeout):
		fail(exitTimeout, "message %d: receive timed out", i)
	}
	if r.err != nil {
		fail(exitZmq, "message %d: receive: %v", i, r.err)
	}
	frames := r.msg.Frames
	if len(frames) > maxParts {
		fail(exitMismatch, "message %d: %d parts", i, len(frames))
	}
	pattern := frames
	if p.typ == "ROUTER" {
		if p.routingID != "" && string(frames[0]) != p.routingID {
			fail(exitMismatch, "message %d: routing id is %q", i, frames[0])
		}
		pattern = frames[1:]
	}
	if len(pattern) != partsOf(i) {
		fail(exitMismatch, "message %d: %d parts, expected %d", i,
			len(pattern), partsOf(i))
	}
	for part, data := range pattern {
		if !bytes.Equal(data, body(i, part)) {
			fail(exitMismatch, "message %d part %d differs", i, part)
		}
	}
	return frames
}

func newSocket(typ, routingID string) zmq4.Socket {
	ctx := context.Background()
	opts := []zmq4.Option{zmq4.WithTimeout(timeout)}
	if typ != "ROUTER" && routingID != "" {
		opts = append(opts, zmq4.WithID(zmq4.SocketIdentity(routingID)))
	}
	constructors := map[string]func(context.Context, ...zmq4.Option) zmq4.Socket{
		"PAIR": zmq4.NewPair, "DEALER": zmq4.NewDealer,
		"ROUTER": zmq4.NewRouter, "REQ": zmq4.NewReq, "REP": zmq4.NewRep,
		"PUSH": zmq4.NewPush, "PULL": zmq4.NewPull,
	}
	make, ok := constructors[typ]
	if !ok {
		fail(exitUsage, "unknown socket type '%s'", typ)
	}
	return make(ctx, opts...)
}

func main() {
	if len(os.Args) < 5 || len(os.Args) > 7 {
		fail(exitUsage, "usage: zmq4_peer TYPE bind|connect ENDPOINT "+
			"echo|send|request|source|sink [COUNT [ROUTING_ID]]")
	}
	p := &peer{typ: os.Args[1], count: 10}
	if len(os.Args) > 5 {
		n, err := strconv.Atoi(os.Args[5])
		if err != nil || n <= 0 {
			fail(exitUsage, "bad count '%s'", os.Args[5])
		}
		p.count = n
	}
	if len(os.Args) > 6 {
		p.routingID = os.Args[6]
	}
	p.socket = newSocket(p.typ, p.routingID)
	switch mode, endpoint := os.Args[2], os.Args[3]; mode {
	case "connect":
		if err := p.socket.Dial(endpoint); err != nil {
			fail(exitZmq, "dial %s: %v", endpoint, err)
		}
	case "bind":
		if err := p.socket.Listen(endpoint); err != nil {
			fail(exitZmq, "listen %s: %v", endpoint, err)
		}
		// test_interop reads this line to learn a wildcard port.
		addr := p.socket.Addr()
		scheme := addr.Network()
		if scheme == "unix" {
			scheme = "ipc"
		}
		fmt.Printf("%s://%s\n", scheme, addr.String())
	default:
		fail(exitUsage, "mode must be bind or connect, not '%s'", mode)
	}
	switch os.Args[4] {
	case "echo":
		for i := 0; i < p.count; i++ {
			p.send(p.recvChecked(i))
		}
	case "send":
		for i := 0; i < p.count; i++ {
			p.sendPattern(i)
		}
		for i := 0; i < p.count; i++ {
			p.recvChecked(i)
		}
	case "request":
		for i := 0; i < p.count; i++ {
			p.sendPattern(i)
			p.recvChecked(i)
		}
	case "source":
		for i := 0; i < p.count; i++ {
			p.sendPattern(i)
		}
	case "sink":
		for i := 0; i < p.count; i++ {
			p.recvChecked(i)
		}
	default:
		fail(exitUsage, "unknown scenario '%s'", os.Args[4])
	}
	// zmq4 has no linger: give the last messages time to leave.
	time.Sleep(200 * time.Millisecond)
	p.socket.Close()
}
