// JeromqPeer — test_interop's peer on JeroMQ, a pure-Java ZMTP stack: the
// same argv, message pattern and exit codes as tests/interop/zmq_peer.c, so
// the one suite checks zlink against each ZMTP stack.
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import org.zeromq.SocketType;
import org.zeromq.ZContext;
import org.zeromq.ZMQ;
import org.zeromq.ZMQException;
import zmq.ZError;

public final class JeromqPeer {
    // The pattern of tests/interop/zmq_peer.c and tests/test_interop.c.
    static final int BIG_INDEX = 4, BIG_SIZE = 1024 * 1024, MAX_PARTS = 4;
    static final int EXIT_USAGE = 1, EXIT_TIMEOUT = 2, EXIT_MISMATCH = 3,
                     EXIT_ZMQ = 4;
    static final int TIMEOUT_MS = 10000, LINGER_MS = 2000;

    final ZMQ.Socket socket;
    final SocketType type;
    final int count;
    final String routingId;

    static int partsOf(int i) { return 1 + i % 3; }

    static int sizeOf(int i, int part) {
        if (i == BIG_INDEX && part == 0) return BIG_SIZE;
        if (i % 2 == 1 && part == 1) return 0;
        return 1 + (i * 37 + part * 111) % 300;
    }

    static byte[] body(int i, int part) {
        byte[] b = new byte[sizeOf(i, part)];
        for (int off = 0; off < b.length; off++)
            b[off] = (byte) (i * 31 + part * 7 + off * 13 + (off >> 8));
        return b;
    }

    static void fail(int code, String text) {
        System.err.println("jeromq_peer: " + text);
        System.exit(code);
    }

    JeromqPeer(ZContext ctx, SocketType type, int count, String routingId) {
        this.type = type;
        this.count = count;
        this.routingId = routingId;
        socket = ctx.createSocket(type);
        socket.setReceiveTimeOut(TIMEOUT_MS);
        socket.setSendTimeOut(TIMEOUT_MS);
        socket.setLinger(LINGER_MS);
        if (type == SocketType.ROUTER)
            socket.setRouterMandatory(true);
        else if (routingId != null)
            socket.setIdentity(routingId.getBytes(StandardCharsets.UTF_8));
    }

    void sendFrame(byte[] data, int flags) {
        long giveUp = System.currentTimeMillis() + TIMEOUT_MS;
        for (;;) {
            try {
                if (socket.send(data, flags)) return;
                fail(EXIT_TIMEOUT, "send timed out");
            } catch (ZMQException e) {
                // ROUTER_MANDATORY: the zlink peer is still handshaking.
                if (e.getErrorCode() != ZError.EHOSTUNREACH
                    || System.currentTimeMillis() > giveUp)
                    fail(EXIT_ZMQ, "send: " + e);
                sleep(10);
            }
        }
    }

    static void sleep(long ms) {
        try {
            Thread.sleep(ms);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    void send(List<byte[]> frames) {
        for (int k = 0; k < frames.size(); k++)
            sendFrame(frames.get(k), k + 1 < frames.size() ? ZMQ.SNDMORE : 0);
    }

    void sendPattern(int i) {
        List<byte[]> frames = new ArrayList<>();
        if (type == SocketType.ROUTER)
            frames.add(routingId.getBytes(StandardCharsets.UTF_8));
        for (int part = 0; part < partsOf(i); part++)
            frames.add(body(i, part));
        send(frames);
    }

    List<byte[]> recvChecked(int i) {
        List<byte[]> frames = new ArrayList<>();
        do {
            byte[] data = socket.recv(0);
            if (data == null)
                fail(EXIT_TIMEOUT, "message " + i + ": receive timed out");
            frames.add(data);
            if (frames.size() > MAX_PARTS)
                fail(EXIT_MISMATCH, "message " + i + ": too many parts");
        } while (socket.hasReceiveMore());
        int first = 0;
        if (type == SocketType.ROUTER) {
            if (routingId != null
                && !Arrays.equals(frames.get(0),
                                  routingId.getBytes(StandardCharsets.UTF_8)))
                fail(EXIT_MISMATCH, "message " + i + ": wrong routing id");
            first = 1;
        }
        if (frames.size() - first != partsOf(i))
            fail(EXIT_MISMATCH, "message " + i + ": " + (frames.size() - first)
                                    + " parts, expected " + partsOf(i));
        for (int part = 0; part < partsOf(i); part++)
            if (!Arrays.equals(frames.get(first + part), body(i, part)))
                fail(EXIT_MISMATCH, "message " + i + " part " + part + " differs");
        return frames;
    }

    public static void main(String[] args) {
        if (args.length < 4 || args.length > 6)
            fail(EXIT_USAGE, "usage: jeromq_peer TYPE bind|connect ENDPOINT "
                                 + "echo|send|request|source|sink [COUNT [ROUTING_ID]]");
        SocketType type = null;
        for (String name : new String[] {"PAIR", "DEALER", "ROUTER", "REQ", "REP",
                                         "PUSH", "PULL"})
            if (name.equals(args[0])) type = SocketType.valueOf(name);
        if (type == null) fail(EXIT_USAGE, "unknown socket type '" + args[0] + "'");
        int count = args.length > 4 ? Integer.parseInt(args[4]) : 10;
        String routingId = args.length > 5 ? args[5] : null;
        try (ZContext ctx = new ZContext()) {
            JeromqPeer p = new JeromqPeer(ctx, type, count, routingId);
            if (args[1].equals("connect")) {
                p.socket.connect(args[2]);
            } else if (args[1].equals("bind")) {
                p.socket.bind(args[2]);
                // test_interop reads this line to learn a wildcard port.
                System.out.println(p.socket.getLastEndpoint());
                System.out.flush();
            } else {
                fail(EXIT_USAGE, "mode must be bind or connect, not '" + args[1] + "'");
            }
            switch (args[3]) {
            case "echo":
                for (int i = 0; i < count; i++) p.send(p.recvChecked(i));
                break;
            case "send":
                for (int i = 0; i < count; i++) p.sendPattern(i);
                for (int i = 0; i < count; i++) p.recvChecked(i);
                break;
            case "request":
                for (int i = 0; i < count; i++) {
                    p.sendPattern(i);
                    p.recvChecked(i);
                }
                break;
            case "source":
                for (int i = 0; i < count; i++) p.sendPattern(i);
                break;
            case "sink":
                for (int i = 0; i < count; i++) p.recvChecked(i);
                break;
            default:
                fail(EXIT_USAGE, "unknown scenario '" + args[3] + "'");
            }
            p.socket.close();
        }
    }
}
