// wire.js — records every WebSocket message the page receives, before jszmq
// sees it, so the test can judge what crossed the wire, not what jszmq kept.
// Loaded ahead of the bundle: jszmq takes the WebSocket class at load time.
'use strict';

(function () {
    const Native = window.WebSocket;
    const connections = [];

    // One record per connection: its URL, the subprotocol the server chose,
    // the extensions it accepted, and each binary message as flags + body.
    class RecordingWebSocket extends Native {
        constructor(url, protocols) {
            super(url, protocols);
            const record = {url: String(url), messages: [], texts: 0};
            connections.push(record);
            this.addEventListener('open', () => {
                record.protocol = this.protocol;
                record.extensions = this.extensions;
            });
            this.addEventListener('message', (event) => {
                if (typeof event.data === 'string') {
                    record.texts++;
                    return;
                }
                const bytes = new Uint8Array(event.data);
                record.messages.push(bytes);
            });
            this.addEventListener('close', (event) => {
                record.closeCode = event.code;
            });
        }
    }
    window.WebSocket = RecordingWebSocket;
    window.zlinkWire = {connections};
})();
