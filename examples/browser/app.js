// app.js — the browser half of the ws:// example: a jszmq SUB follows the
// "A" updates of examples/ws_server's PUB, and a jszmq DEALER sends text to
// its ROUTER, which echoes it back.
//
// Run it:
//   build/examples/ws_server ws://127.0.0.1:8080 600 &
//   npm install && npm run build    # bundles jszmq and this file
//   open index.html?server=ws://127.0.0.1:8080   (file:// is fine)
//
// ?pub=URL and ?router=URL name the two endpoints separately. When both
// checks pass the page says "ok" (and sets window.zlinkResult, which CI
// reads).
'use strict';

const jszmq = require('jszmq');

const params = new URLSearchParams(window.location.search);
const server = params.get('server') || 'ws://127.0.0.1:8080';
const pubUrl = params.get('pub') || `${server}/pub`;
const echoUrl = params.get('router') || `${server}/echo`;
const UPDATES_WANTED = 5;

const results = [];
function show(id, line) {
    document.getElementById(id).textContent += `${line}\n`;
}
function check(name, pass, detail) {
    results.push({name, pass, detail});
    console.log(`${pass ? 'PASS' : 'FAIL'} ${name}: ${detail}`);
    if (results.length === 2) {
        const ok = results.every((r) => r.pass);
        document.getElementById('status').textContent = ok ? 'ok' : 'failed';
        window.zlinkResult = {results};
    }
}

// SUB: the server publishes "A <n>" and "B <n>"; only A is asked for.
const sub = new jszmq.Sub();
let updates = 0;
sub.on('message', (topic) => {
    const text = topic.toString();
    updates++;
    if (updates > UPDATES_WANTED)
        return;
    show('updates', text);
    if (!text.startsWith('A')) {
        updates = UPDATES_WANTED; // judged: show no more
        check('subscription', false, `got "${text}", not topic A`);
    } else if (updates === UPDATES_WANTED) {
        check('subscription', true, `${UPDATES_WANTED} updates on topic A`);
    }
});
sub.connect(pubUrl);
sub.subscribe('A');

// DEALER: every message comes back as sent, part for part.
const dealer = new jszmq.Dealer();
let firstEcho = true;
dealer.on('message', (...frames) => {
    const parts = frames.map((frame) => frame.toString());
    show('echo', parts.join(' | '));
    if (firstEcho) {
        firstEcho = false;
        const pass = parts.length === 2 && parts[0] === 'hello' &&
                     parts[1] === 'from the browser';
        check('echo', pass, `echoed ${parts.length} parts: ${parts.join(' | ')}`);
    }
});
dealer.connect(echoUrl);
dealer.send(['hello', 'from the browser']);

document.getElementById('form').addEventListener('submit', (event) => {
    event.preventDefault();
    dealer.send(document.getElementById('text').value);
});
document.getElementById('status').textContent = `connecting to ${pubUrl} and ${echoUrl}`;
