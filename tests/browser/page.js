// page.js — the browser side: jszmq SUB against a PUB server and jszmq DEALER
// against a ROUTER echo server, both over ws://. Bundled with jszmq by
// esbuild at test time; the driver reads window.zlinkResult.
'use strict';

const jszmq = require('jszmq');

const params = new URLSearchParams(window.location.search);
const PHASE_TIMEOUT_MS = Number(params.get('timeout') || 20000);
const SUB_COUNT = 50;
// Sizes from 5 B to 64 KiB, on both sides of WebSocket's length encodings
// (125/126, 65535/65536) and ZMTP's short frame (255/256); the same table
// as tests/interop/zmq_ws_peer.c.
const SIZES = [5, 125, 126, 255, 256, 1000, 4096, 65535, 65536];
const ECHO_COUNT = 3 * SIZES.length;

const results = [];
function log(line) {
    console.log(line);
}
function report(name, pass, detail) {
    results.push({name, pass, detail});
    log(`${pass ? 'PASS' : 'FAIL'} ${name}: ${detail}`);
}

function sleep(ms) {
    return new Promise((resolve) => setTimeout(resolve, ms));
}

function text(bytes) {
    return new TextDecoder().decode(bytes);
}

// Splits one connection's recorded messages into ZMTP messages (flags 0x01:
// more), after the first WebSocket message, which is the server's routing id.
function wireMessages(record) {
    const messages = [];
    const badFlags = [];
    let current = [];
    record.messages.slice(1).forEach((bytes) => {
        if (bytes.length === 0 || (bytes[0] & ~1) !== 0) {
            badFlags.push(bytes.length ? bytes[0] : 'empty');
            return;
        }
        current.push(bytes.subarray(1));
        if ((bytes[0] & 1) === 0) {
            messages.push(current);
            current = [];
        }
    });
    return {messages, badFlags, open: current.length};
}

function connectionTo(url) {
    return window.zlinkWire.connections.find((c) => c.url === url);
}

function checkHandshake(name, record) {
    if (!record) {
        report(name, false, 'no WebSocket connection was recorded');
        return false;
    }
    const pass = record.protocol === 'ZWS2.0' && record.extensions === '';
    report(name, pass,
           `subprotocol "${record.protocol}", extensions "${record.extensions}"`);
    return pass;
}

async function pubSub(url) {
    const sub = new jszmq.Sub();
    let topicA = 0;
    const other = [];
    // Topic A is any message whose first frame starts with "A": servers
    // publish it as "A-<n>" + "a" (zmq_ws_peer) or "A <n>" (ws_server).
    sub.on('message', (...frames) => {
        const topic = text(frames[0]);
        if (topic.startsWith('A'))
            topicA++;
        else
            other.push(`${frames.length} parts, topic "${topic}"`);
    });
    sub.connect(url);
    sub.subscribe('A');
    const deadline = Date.now() + PHASE_TIMEOUT_MS;
    while (topicA < SUB_COUNT && Date.now() < deadline)
        await sleep(20);
    // A little longer: anything the server still sends must be topic A too.
    await sleep(300);
    sub.close();

    const record = connectionTo(url);
    checkHandshake('pubsub handshake', record);
    report('pubsub delivery', topicA >= SUB_COUNT && other.length === 0,
           `${topicA} topic A messages (wanted ${SUB_COUNT}), ` +
           `${other.length} others${other.length ? ': ' + other[0] : ''}`);
    if (!record)
        return;
    const wire = wireMessages(record);
    const topics = {A: 0, other: 0};
    let firstOther = '';
    wire.messages.forEach((parts) => {
        const topic = text(parts[0]);
        if (topic.startsWith('A'))
            topics.A++;
        else {
            topics.other++;
            firstOther = firstOther || topic;
        }
    });
    report('pubsub wire', topics.A >= SUB_COUNT && topics.other === 0 &&
           wire.badFlags.length === 0 && record.texts === 0,
           `${record.messages.length} WebSocket messages: routing id, ` +
           `${topics.A} topic A, ${topics.other} other` +
           `${firstOther ? ' (first "' + firstOther + '")' : ''}, ` +
           `${wire.badFlags.length} bad flags, ${record.texts} text frames`);
}

function pattern(i, part, size) {
    const bytes = new Uint8Array(size);
    for (let k = 0; k < size; k++)
        bytes[k] = (i * 31 + part * 7 + k * 13 + (k >> 8)) & 0xff;
    return bytes;
}

function partSize(i, part) {
    return SIZES[(i + part * 4) % SIZES.length];
}

function sameBytes(a, b) {
    if (a.length !== b.length)
        return false;
    for (let k = 0; k < a.length; k++)
        if (a[k] !== b[k])
            return false;
    return true;
}

async function dealerEcho(url) {
    const dealer = new jszmq.Dealer();
    const inbox = [];
    let wake = null;
    dealer.on('message', (...frames) => {
        inbox.push(frames);
        if (wake)
            wake();
    });
    dealer.connect(url);
    let checked = 0;
    let failure = '';
    const sizesSeen = new Set();
    for (let i = 0; i < ECHO_COUNT && !failure; i++) {
        const parts = [];
        for (let p = 0; p <= i % 3; p++)
            parts.push(jszmq.Buffer.from(pattern(i, p, partSize(i, p))));
        dealer.send(parts);
        const deadline = Date.now() + PHASE_TIMEOUT_MS;
        while (inbox.length === 0 && Date.now() < deadline)
            await new Promise((resolve) => {
                wake = resolve;
                setTimeout(resolve, 100);
            });
        const echo = inbox.shift();
        if (!echo) {
            failure = `message ${i}: no echo within ${PHASE_TIMEOUT_MS} ms`;
            break;
        }
        if (echo.length !== parts.length) {
            failure = `message ${i}: ${echo.length} parts echoed, sent ${parts.length}`;
            break;
        }
        for (let p = 0; p < parts.length; p++) {
            if (!sameBytes(new Uint8Array(echo[p]), parts[p])) {
                failure = `message ${i} part ${p}: ${echo[p].length} bytes ` +
                          `echoed differ from the ${parts[p].length} sent`;
                break;
            }
            sizesSeen.add(parts[p].length);
        }
        if (!failure)
            checked++;
    }
    dealer.close();
    checkHandshake('dealer handshake', connectionTo(url));
    const sizes = [...sizesSeen].sort((a, b) => a - b).join(', ');
    report('dealer echo', !failure && checked === ECHO_COUNT,
           failure || `${checked} multipart messages echoed intact, part sizes ${sizes}`);
}

async function main() {
    const pub = params.get('pub');
    const router = params.get('router');
    try {
        if (pub)
            await pubSub(pub);
        if (router)
            await dealerEcho(router);
        if (!pub && !router)
            report('setup', false, 'no ?pub= or ?router= endpoint given');
    } catch (error) {
        report('exception', false, String(error && error.stack || error));
    }
    window.zlinkResult = {results};
}

main();
