// SPDX-License-Identifier: MIT
// Load a domprof flame graph page in headless Chromium (Debian's
// /usr/bin/chromium) and check it really works: no page or console errors,
// no network requests, the root frame and an expected function are drawn,
// hovering shows the tooltip, clicking a frame zooms it to the full width,
// reset restores the root, search highlights matches and prints their
// share. Writes a screenshot. Prints one "timing:" line with the page's own
// render times.
//
// The browser is driven through the Chrome DevTools protocol (CDP) over a
// WebSocket, with only Debian packages: nodejs, node-ws, chromium (no npm,
// so it runs on machines that reach nothing but the Debian archive). Mouse
// and keyboard input are real input events (Input.dispatch*), so a broken
// event handler fails the test just as it would fail a user.
//
// usage: node check-flamegraph.js PAGE.html SCREENSHOT.png [--hot NAME]
//        [--share PCT --tol PCT] [--timing-only]
// env: CHROMIUM (default /usr/bin/chromium); NODE_PATH must reach 'ws'
// (Debian: /usr/share/nodejs, set by tests/browser/lib.sh).
// Exit 0 pass, 1 a check failed, 3 the browser could not start.
'use strict';
const path = require('path');
const fs = require('fs');
const os = require('os');
const { spawn } = require('child_process');

let WebSocket;
try {
	WebSocket = require('ws');
} catch (e) {
	console.error('node module ws not found (Debian package node-ws, NODE_PATH=/usr/share/nodejs): ' +
		e.message.split('\n')[0]);
	process.exit(3);
}

const args = process.argv.slice(2);
if (args.length < 2) {
	console.error('usage: node check-flamegraph.js PAGE.html SCREENSHOT.png [--hot NAME] ' +
		'[--share PCT --tol PCT] [--timing-only]');
	process.exit(2);
}
const page_file = path.resolve(args[0]);
const page_url = 'file://' + page_file;
const shot = args[1];
function opt(name, def) {
	const i = args.indexOf(name);
	return i >= 0 ? args[i + 1] : def;
}
const hot = opt('--hot', null);
const share = opt('--share', null);
const tol = parseFloat(opt('--tol', '5'));
const timingOnly = args.includes('--timing-only');
const VIEW_W = 1280, VIEW_H = 800;

let failed = 0;
function check(ok, what) {
	console.log((ok ? 'ok   ' : 'FAIL ') + what);
	if (!ok) failed++;
}
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

// ---- browser process ------------------------------------------------------
const profileDir = fs.mkdtempSync(path.join(os.tmpdir(), 'domprof-chromium-'));
let proc = null, procExited = false;
function cleanup() {
	if (proc && !procExited) {
		try { proc.kill('SIGKILL'); } catch (e) { /* already gone */ }
	}
	try { fs.rmSync(profileDir, { recursive: true, force: true }); } catch (e) { /* best effort */ }
}
process.on('exit', cleanup);
// Nothing here may hang the test run: a stuck browser is a failure.
const watchdog = setTimeout(() => {
	check(false, 'browser session finished within 150 s');
	cleanup();
	process.exit(1);
}, 150000);

// Starts chromium; resolves with the browser's DevTools WebSocket URL,
// rejects (-> exit 3) when it exits or prints nothing usable in 30 s.
function launch() {
	const exe = process.env.CHROMIUM || '/usr/bin/chromium';
	const argv = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
		'--disable-background-networking', '--disable-component-update', '--disable-sync',
		'--no-default-browser-check', '--disable-extensions', '--mute-audio',
		'--user-data-dir=' + profileDir, '--remote-debugging-port=0',
		`--window-size=${VIEW_W},${VIEW_H}`, 'about:blank'];
	return new Promise((resolve, reject) => {
		let err = '', done = false;
		const finish = (f, v) => { if (!done) { done = true; clearTimeout(t); f(v); } };
		const t = setTimeout(() => finish(reject, new Error('no "DevTools listening" line in 30 s; stderr: ' +
			err.slice(-500))), 30000);
		try {
			proc = spawn(exe, argv, { stdio: ['ignore', 'ignore', 'pipe'] });
		} catch (e) {
			finish(reject, e);
			return;
		}
		proc.on('error', (e) => finish(reject, e));
		proc.on('exit', (code, sig) => {
			procExited = true;
			finish(reject, new Error(`${exe} exited (${sig || code}) before listening; stderr: ` +
				err.slice(-500)));
		});
		proc.stderr.setEncoding('utf8');
		proc.stderr.on('data', (s) => {
			if (err.length < 65536) err += s;
			const m = /DevTools listening on (ws:\/\/\S+)/.exec(err);
			if (m) finish(resolve, m[1]);
		});
	});
}

// ---- CDP connection -------------------------------------------------------
// One WebSocket to the browser; the page is a flat session (sessionId).
class Cdp {
	constructor(ws) {
		this.ws = ws;
		this.nextId = 1;
		this.pending = new Map();
		this.handlers = [];
		ws.on('message', (data) => {
			const msg = JSON.parse(data.toString());
			if (msg.id !== undefined) {
				const p = this.pending.get(msg.id);
				if (!p) return;
				this.pending.delete(msg.id);
				if (msg.error) p.reject(new Error(`${p.method}: ${msg.error.message}`));
				else p.resolve(msg.result);
			} else {
				for (const h of this.handlers) h(msg.method, msg.params || {}, msg.sessionId);
			}
		});
		ws.on('close', () => {
			for (const p of this.pending.values()) p.reject(new Error(`${p.method}: browser connection closed`));
			this.pending.clear();
		});
	}
	static connect(url) {
		return new Promise((resolve, reject) => {
			const ws = new WebSocket(url, { perMessageDeflate: false, maxPayload: 512 * 1024 * 1024 });
			ws.once('open', () => resolve(new Cdp(ws)));
			ws.once('error', reject);
		});
	}
	send(method, params = {}, sessionId = undefined, timeoutMs = 60000) {
		const id = this.nextId++;
		const msg = { id, method, params };
		if (sessionId) msg.sessionId = sessionId;
		return new Promise((resolve, reject) => {
			const t = setTimeout(() => {
				this.pending.delete(id);
				reject(new Error(`${method}: no answer in ${timeoutMs / 1000} s`));
			}, timeoutMs);
			this.pending.set(id, {
				method,
				resolve: (v) => { clearTimeout(t); resolve(v); },
				reject: (e) => { clearTimeout(t); reject(e); },
			});
			this.ws.send(JSON.stringify(msg));
		});
	}
	on(h) { this.handlers.push(h); }
	// resolves with the params of the first event METHOD for SESSION
	waitEvent(method, sessionId, timeoutMs) {
		return new Promise((resolve, reject) => {
			const t = setTimeout(() => reject(new Error(`no ${method} in ${timeoutMs / 1000} s`)), timeoutMs);
			const h = (m, p, s) => {
				if (m !== method || s !== sessionId) return;
				clearTimeout(t);
				this.handlers.splice(this.handlers.indexOf(h), 1);
				resolve(p);
			};
			this.handlers.push(h);
		});
	}
}

// ---- page helpers -----------------------------------------------------------
let cdp, sid;
async function evaluate(expr) {
	const r = await cdp.send('Runtime.evaluate', { expression: expr, returnByValue: true, awaitPromise: true }, sid);
	if (r.exceptionDetails) {
		const ex = r.exceptionDetails.exception;
		throw new Error('evaluate: ' + ((ex && ex.description) || r.exceptionDetails.text).split('\n')[0]);
	}
	return r.result.value;
}
// Bounding box of the first element matching SEL (scrolled into view), plus
// whether the point at its centre hits that element (what a real click
// would reach); null when there is no such element.
function box(sel) {
	return evaluate(`(() => {
		const e = document.querySelector(${JSON.stringify(sel)});
		if (!e) return null;
		let r = e.getBoundingClientRect();
		if (r.top < 0 || r.bottom > innerHeight || r.left < 0 || r.right > innerWidth) {
			e.scrollIntoView({ block: 'center', inline: 'center' });
			r = e.getBoundingClientRect();
		}
		const cx = r.left + r.width / 2, cy = r.top + r.height / 2;
		const at = document.elementFromPoint(cx, cy);
		return { x: r.left, y: r.top, width: r.width, height: r.height, cx, cy,
			text: e.textContent, hit: at === e || e.contains(at) };
	})()`);
}
async function mouse(type, x, y, extra = {}) {
	await cdp.send('Input.dispatchMouseEvent', Object.assign({ type, x, y, button: 'none', modifiers: 0 }, extra), sid);
}
async function click(x, y) {
	await mouse('mouseMoved', x, y);
	await mouse('mousePressed', x, y, { button: 'left', buttons: 1, clickCount: 1 });
	await mouse('mouseReleased', x, y, { button: 'left', buttons: 0, clickCount: 1 });
}
async function key(k, code, vk) {
	const base = { key: k, code, windowsVirtualKeyCode: vk, nativeVirtualKeyCode: vk };
	await cdp.send('Input.dispatchKeyEvent', Object.assign({ type: 'keyDown', text: k === 'Enter' ? '\r' : '' }, base), sid);
	await cdp.send('Input.dispatchKeyEvent', Object.assign({ type: 'keyUp' }, base), sid);
}
// round trip through the page's event loop so handlers have run and the
// next frame is laid out
const settle = () => evaluate('new Promise((r) => requestAnimationFrame(() => setTimeout(r, 0)))');

// ---- the test -----------------------------------------------------------------
async function run() {
	let wsUrl;
	try {
		wsUrl = await launch();
		cdp = await Cdp.connect(wsUrl);
	} catch (e) {
		console.error('cannot start chromium: ' + e.message.split('\n')[0]);
		cleanup();
		process.exit(3);
	}
	const errors = [];
	const requests = [];
	try {
		const { targetId } = await cdp.send('Target.createTarget', { url: 'about:blank' });
		({ sessionId: sid } = await cdp.send('Target.attachToTarget', { targetId, flatten: true }));
		cdp.on((m, p, s) => {
			if (s !== sid) return;
			if (m === 'Runtime.exceptionThrown') {
				const d = p.exceptionDetails;
				errors.push('pageerror: ' + ((d.exception && d.exception.description) || d.text).split('\n')[0]);
			} else if (m === 'Runtime.consoleAPICalled' && (p.type === 'error' || p.type === 'assert')) {
				errors.push('console: ' + p.args.map((a) => (a.value !== undefined ? a.value : a.description)).join(' '));
			} else if (m === 'Log.entryAdded' && p.entry.level === 'error') {
				errors.push('log: ' + p.entry.text + (p.entry.url ? ' (' + p.entry.url + ')' : ''));
			} else if (m === 'Network.requestWillBeSent') {
				if (p.request.url !== page_url) requests.push(p.request.url);
			}
		});
		await Promise.all([
			cdp.send('Page.enable', {}, sid), cdp.send('Runtime.enable', {}, sid),
			cdp.send('Log.enable', {}, sid), cdp.send('Network.enable', {}, sid),
			cdp.send('Emulation.setDeviceMetricsOverride',
				{ width: VIEW_W, height: VIEW_H, deviceScaleFactor: 1, mobile: false }, sid),
		]);
		await cdp.send('Page.bringToFront', {}, sid);
		const loaded = cdp.waitEvent('Page.loadEventFired', sid, 60000);
		const nav = await cdp.send('Page.navigate', { url: page_url }, sid);
		if (nav.errorText) throw new Error('navigate: ' + nav.errorText);
		await loaded;
		let st = null;
		for (const end = Date.now() + 60000; Date.now() < end; await sleep(50)) {
			st = await evaluate('window.fgStats && window.fgStats.paintedMs > 0 ? window.fgStats : null');
			if (st) break;
		}
		if (!st) throw new Error('window.fgStats.paintedMs not set 60 s after load (page script did not run?)');
		console.log(`timing: nodes=${st.nodes} tree_nodes=${st.treeNodes} drawn=${st.drawn} ` +
			`script_ms=${st.scriptMs.toFixed(1)} ready_ms=${st.readyMs.toFixed(1)} ` +
			`painted_ms=${st.paintedMs.toFixed(1)}`);
		const fgW = await evaluate(`document.getElementById('fg').getBoundingClientRect().width`);
		const root = await box('#fg .f[data-id="0"]');
		check(!!root && root.text === 'all', 'root frame "all" is drawn');
		if (root)
			check(Math.abs(root.width - fgW) < 2, `root spans the width (${root.width.toFixed(1)} of ${fgW.toFixed(1)} px)`);
		if (!timingOnly && hot) {
			const id = await evaluate(`window.fg.find(${JSON.stringify(hot)})`);
			check(id > 0, `hot function ${hot} is in the graph`);
			const sel = `#fg .f[data-id="${id}"]`;
			let el = await box(sel);
			check(!!el, `hot function ${hot} is drawn`);
			if (el) {
				check(el.text === hot, `its label reads "${el.text}"`);
				check(el.hit, `${hot} is the element under its centre (${el.cx.toFixed(0)},${el.cy.toFixed(0)})`);
				const before = el.width;
				await mouse('mouseMoved', 0, 0);
				await mouse('mouseMoved', el.cx, el.cy);
				await settle();
				const tipText = await evaluate(`(() => { const t = document.getElementById('tip');
					return t.hidden ? '' : t.textContent; })()`);
				check(/samples/.test(tipText) && /%/.test(tipText), 'tooltip shows samples and percent: ' +
					tipText.replace(/\n/g, ' | '));
				await click(el.cx, el.cy);
				await settle();
				el = await box(sel);
				const after = el ? el.width : 0;
				check(Math.abs(after - fgW) < 2 && after > before + 1,
					`click zooms: ${hot} ${before.toFixed(1)} px -> ${after.toFixed(1)} px (full ${fgW.toFixed(1)})`);
				const anc = await evaluate(`document.querySelectorAll('#fg .f.anc').length`);
				check(anc >= 3, `ancestors stay visible while zoomed (${anc})`);
				const rb = await box('#reset');
				check(!!rb && rb.hit, 'reset button is clickable');
				if (rb) await click(rb.cx, rb.cy);
				await settle();
				el = await box(sel);
				const reset = el ? el.width : 0;
				check(Math.abs(reset - before) < 1, `reset restores the width (${reset.toFixed(1)} px)`);
			}
			// type into the search box like a user: click it, type, Enter
			const sb = await box('#search');
			check(!!sb && sb.hit, 'search box is clickable');
			if (sb) await click(sb.cx, sb.cy);
			await evaluate(`document.getElementById('search').select()`);
			await cdp.send('Input.insertText', { text: hot }, sid);
			await key('Enter', 'Enter', 13);
			await settle();
			const matched = await evaluate(`document.getElementById('matched').textContent`);
			const hits = await evaluate(`Array.from(document.querySelectorAll('#fg .f.m'), (e) => e.textContent)`);
			check(hits.includes(hot), `search highlights ${hot} (${hits.length} frames)`);
			const m = /Matched: ([0-9.]+)%/.exec(matched);
			check(!!m, `search prints the share: "${matched}"`);
			if (m && share !== null)
				check(Math.abs(parseFloat(m[1]) - parseFloat(share)) <= tol,
					`matched share ${m[1]}% is ${share}% +- ${tol}`);
		}
		await settle();
		const png = await cdp.send('Page.captureScreenshot', { format: 'png' }, sid);
		fs.writeFileSync(shot, Buffer.from(png.data, 'base64'));
		console.log('screenshot: ' + shot);
	} catch (e) {
		check(false, 'browser session: ' + e.message.split('\n')[0]);
	}
	// judged last, and also after a failed step: errors and requests may
	// come from any step above
	check(errors.length === 0, 'no page or console errors' + (errors.length ? ': ' + errors.join('; ') : ''));
	check(requests.length === 0, 'no network requests' + (requests.length ? ': ' + requests.join(' ') : ''));
	// close politely, then make sure
	try { await cdp.send('Browser.close', {}, undefined, 5000); } catch (e) { /* killed below */ }
	for (let i = 0; i < 50 && !procExited; i++) await sleep(100);
	clearTimeout(watchdog);
	cleanup();
	process.exit(failed ? 1 : 0);
}
run();
