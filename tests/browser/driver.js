#!/usr/bin/env node
// driver.js — runs the browser test: starts the ws servers, serves the page
// on 127.0.0.1, drives headless Chromium through playwright-core, and prints
// one PASS/FAIL line per check. Exit status 0 only when every check passed.
//
//   node driver.js --pub-cmd "PROGRAM ARGS..." --router-cmd "PROGRAM ARGS..."
//   node driver.js --server-cmd "PROGRAM ARGS..."
//   node driver.js --pub ws://HOST:PORT/PATH --router ws://HOST:PORT/PATH
//
// A server command must print its ws:// or wss:// URL once bound (the
// first such URL in its output counts) and serve until SIGTERM.
//   --pub-cmd     PUB server publishing topic A (first frame starting with
//                 "A") and other topics, e.g. tests/interop/zmq_ws_peer.c
//   --router-cmd  ROUTER echoing every message back to its sender
//   --server-cmd  one program serving both on one port, PUB at URL/pub and
//                 ROUTER at URL/echo, e.g. examples/ws_server
//   --pub, --router      endpoints of servers already running instead
//   --chromium PATH      browser (default /usr/bin/chromium)
//   --timeout MS         per phase in the page (default 20000); the whole run
//                        is bounded by 4 phases plus start-up
'use strict';

const childProcess = require('child_process');
const fs = require('fs');
const http = require('http');
const path = require('path');

const HERE = __dirname;
const STARTUP_TIMEOUT_MS = 15000;

function parseArgs(argv) {
    const options = {chromium: '/usr/bin/chromium', timeout: 20000};
    const names = {
        '--pub-cmd': 'pubCmd', '--router-cmd': 'routerCmd',
        '--server-cmd': 'serverCmd', '--pub': 'pub',
        '--router': 'router', '--chromium': 'chromium', '--timeout': 'timeout',
    };
    for (let i = 0; i < argv.length; i += 2) {
        const key = names[argv[i]];
        if (!key || i + 1 >= argv.length)
            usage(`bad argument ${argv[i]}`);
        options[key] = argv[i + 1];
    }
    options.timeout = Number(options.timeout);
    if (!(options.pub || options.pubCmd || options.serverCmd) &&
        !(options.router || options.routerCmd))
        usage('give a PUB and/or a ROUTER server');
    return options;
}

function usage(message) {
    console.error(`driver: ${message}\n` +
                  'usage: driver.js [--server-cmd CMD] [--pub-cmd CMD | --pub URL] ' +
                  '[--router-cmd CMD | --router URL] [--chromium PATH] [--timeout MS]');
    process.exit(2);
}

function withTimeout(promise, ms, what) {
    let timer;
    const timeout = new Promise((_, reject) => {
        timer = setTimeout(() => reject(new Error(`${what}: no result within ${ms} ms`)), ms);
    });
    return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

// Servers run in a process group of their own, so that stopping one stops a
// wrapper (timeout, wine) and its child together.
const servers = [];

function startServer(name, command) {
    const child = childProcess.spawn('/bin/sh', ['-c', `exec ${command}`], {
        detached: true, stdio: ['ignore', 'pipe', 'pipe'],
    });
    const server = {name, child, output: '', exited: false};
    servers.push(server);
    const collect = (data) => {
        server.output += data.toString();
    };
    child.stdout.on('data', collect);
    child.stderr.on('data', collect);
    return withTimeout(new Promise((resolve, reject) => {
        const look = () => {
            const match = server.output.match(/wss?:\/\/[^\s"']+/);
            if (match)
                resolve(match[0]);
        };
        child.stdout.on('data', look);
        child.on('exit', (code, signal) => {
            server.exited = true;
            reject(new Error(`${name} server exited (${signal || code}) before ` +
                             `printing its endpoint:\n${server.output}`));
        });
    }), STARTUP_TIMEOUT_MS, `${name} server start`);
}

function stopServers() {
    return Promise.all(servers.map((server) => new Promise((resolve) => {
        if (server.exited || server.child.exitCode !== null)
            return resolve();
        const timer = setTimeout(() => {
            try { process.kill(-server.child.pid, 'SIGKILL'); } catch (e) { /* gone */ }
            resolve();
        }, 5000);
        server.child.on('exit', () => {
            clearTimeout(timer);
            resolve();
        });
        try { process.kill(-server.child.pid, 'SIGTERM'); } catch (e) { resolve(); }
    })));
}

const CONTENT_TYPES = {'.html': 'text/html', '.js': 'text/javascript'};
const SERVED = ['index.html', 'wire.js', 'jszmq.bundle.js'];

function startHttp() {
    const server = http.createServer((request, response) => {
        const name = new URL(request.url, 'http://x').pathname.slice(1) || 'index.html';
        if (name === 'favicon.ico') {
            response.writeHead(204).end();
            return;
        }
        if (!SERVED.includes(name)) {
            response.writeHead(404).end();
            return;
        }
        response.writeHead(200, {'Content-Type': CONTENT_TYPES[path.extname(name)]});
        response.end(fs.readFileSync(path.join(HERE, name)));
    });
    return new Promise((resolve) => {
        server.listen(0, '127.0.0.1', () => resolve(server));
    });
}

async function runPage(options, endpoints, httpServer) {
    const {chromium} = require('playwright-core');
    const browser = await withTimeout(chromium.launch({
        executablePath: options.chromium, headless: true,
        // Root in a container: Chromium's sandbox needs user namespaces.
        // The wss run's server has a certificate from the test's own CA.
        args: ['--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage',
               '--ignore-certificate-errors'],
        timeout: STARTUP_TIMEOUT_MS,
    }), STARTUP_TIMEOUT_MS + 1000, 'Chromium launch');
    try {
        const page = await browser.newPage();
        page.on('console', (message) => console.log(`  page: ${message.text()}`));
        // An uncaught error in the page fails the run at once rather than
        // at the deadline.
        let pageError = null;
        const pageFailed = new Promise((_, reject) => {
            pageError = reject;
        });
        pageFailed.catch(() => {}); // judged only inside the race below
        page.on('pageerror', (error) => {
            console.log(`  page error: ${error.message}`);
            pageError(new Error(`uncaught error in the page: ${error.message}`));
        });
        const query = new URLSearchParams({timeout: String(options.timeout)});
        if (endpoints.pub)
            query.set('pub', endpoints.pub);
        if (endpoints.router)
            query.set('router', endpoints.router);
        const {port} = httpServer.address();
        const url = `http://127.0.0.1:${port}/index.html?${query}`;
        console.log(`driver: loading ${url}`);
        await page.goto(url, {timeout: STARTUP_TIMEOUT_MS});
        const budget = 4 * options.timeout + 5000;
        await Promise.race([
            page.waitForFunction(() => window.zlinkResult !== undefined, null,
                                 {timeout: budget, polling: 100}),
            pageFailed,
        ]);
        return await page.evaluate(() => window.zlinkResult.results);
    } finally {
        await browser.close();
    }
}

async function main() {
    const options = parseArgs(process.argv.slice(2));
    let httpServer = null;
    let failed = 0;
    let results = [];
    try {
        const endpoints = {pub: options.pub, router: options.router};
        if (options.serverCmd) {
            const base = (await startServer('ws', options.serverCmd)).replace(/\/+$/, '');
            endpoints.pub = `${base}/pub`;
            endpoints.router = `${base}/echo`;
        }
        if (options.pubCmd)
            endpoints.pub = await startServer('PUB', options.pubCmd);
        if (options.routerCmd)
            endpoints.router = await startServer('ROUTER', options.routerCmd);
        console.log(`driver: PUB ${endpoints.pub || '-'}, ROUTER ${endpoints.router || '-'}`);
        httpServer = await startHttp();
        results = await runPage(options, endpoints, httpServer);
    } catch (error) {
        results.push({name: 'driver', pass: false, detail: error.message});
    } finally {
        if (httpServer)
            httpServer.close();
        await stopServers();
    }
    for (const server of servers)
        for (const line of server.output.trim().split('\n'))
            if (line)
                console.log(`  ${server.name} server: ${line}`);
    console.log('');
    for (const result of results) {
        console.log(`${result.pass ? 'PASS' : 'FAIL'} ${result.name}: ${result.detail}`);
        failed += result.pass ? 0 : 1;
    }
    if (results.length === 0) {
        console.log('FAIL driver: the page reported no result');
        failed = 1;
    }
    console.log(`browser test: ${results.length - failed} passed, ${failed} failed`);
    process.exit(failed ? 1 : 0);
}

main();
