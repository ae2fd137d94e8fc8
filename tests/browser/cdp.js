// SPDX-License-Identifier: MIT
// The headless-Chromium session shared by the page checks
// (check-flamegraph.js, check-roots.js, check-flamediff.js): start Debian's
// /usr/bin/chromium, connect over the Chrome DevTools protocol (CDP) with
// node-ws (Debian packages only, no npm), open a page, collect its errors
// and network requests, and drive it with real input events.
//
// usage: const s = await require('./cdp').open(PAGE, { width, height });
//        ... s.evaluate(expr), s.box(sel), s.mouse(type, x, y), s.click(x, y),
//        s.key(k, code, vk), s.insertText(t), s.settle(), s.screenshot(file)
//        await s.finish(check)  // judges errors and requests, closes, exits
// open() exits the process with 3 when the browser cannot start (the
// tests then skip, tests/browser/lib.sh).
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

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

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

function launch(profileDir, w, h, state) {
	const exe = process.env.CHROMIUM || '/usr/bin/chromium';
	const argv = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
		'--disable-background-networking', '--disable-component-update', '--disable-sync',
		'--no-default-browser-check', '--disable-extensions', '--mute-audio',
		'--user-data-dir=' + profileDir, '--remote-debugging-port=0',
		`--window-size=${w},${h}`, 'about:blank'];
	return new Promise((resolve, reject) => {
		let err = '', done = false;
		const finish = (f, v) => { if (!done) { done = true; clearTimeout(t); f(v); } };
		const t = setTimeout(() => finish(reject, new Error('no "DevTools listening" line in 30 s; stderr: ' +
			err.slice(-500))), 30000);
		try {
			state.proc = spawn(exe, argv, { stdio: ['ignore', 'ignore', 'pipe'] });
		} catch (e) {
			finish(reject, e);
			return;
		}
		state.proc.on('error', (e) => finish(reject, e));
		state.proc.on('exit', (code, sig) => {
			state.exited = true;
			finish(reject, new Error(`${exe} exited (${sig || code}) before listening; stderr: ` +
				err.slice(-500)));
		});
		state.proc.stderr.setEncoding('utf8');
		state.proc.stderr.on('data', (s) => {
			if (err.length < 65536) err += s;
			const m = /DevTools listening on (ws:\/\/\S+)/.exec(err);
			if (m) finish(resolve, m[1]);
		});
	});
}

// Opens PAGE (a file) and waits for window.fgStats.paintedMs (the flame
// graph script's "painted" mark). Resolves with the session object.
async function open(page, o = {}) {
	const W = o.width || 1280, H = o.height || 800;
	const pageFile = path.resolve(page), pageUrl = 'file://' + pageFile;
	const profileDir = fs.mkdtempSync(path.join(os.tmpdir(), 'domprof-chromium-'));
	const state = { proc: null, exited: false };
	const cleanup = () => {
		if (state.proc && !state.exited) {
			try { state.proc.kill('SIGKILL'); } catch (e) { /* already gone */ }
		}
		try { fs.rmSync(profileDir, { recursive: true, force: true }); } catch (e) { /* best effort */ }
	};
	process.on('exit', cleanup);
	const watchdog = setTimeout(() => {
		console.log('FAIL browser session finished within 150 s');
		cleanup();
		process.exit(1);
	}, 150000);
	let cdp;
	try {
		cdp = await Cdp.connect(await launch(profileDir, W, H, state));
	} catch (e) {
		console.error('cannot start chromium: ' + e.message.split('\n')[0]);
		cleanup();
		process.exit(3);
	}
	const errors = [], requests = [];
	const { targetId } = await cdp.send('Target.createTarget', { url: 'about:blank' });
	const { sessionId: sid } = await cdp.send('Target.attachToTarget', { targetId, flatten: true });
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
			if (p.request.url !== pageUrl) requests.push(p.request.url);
		}
	});
	await Promise.all([
		cdp.send('Page.enable', {}, sid), cdp.send('Runtime.enable', {}, sid),
		cdp.send('Log.enable', {}, sid), cdp.send('Network.enable', {}, sid),
		cdp.send('Emulation.setDeviceMetricsOverride',
			{ width: W, height: H, deviceScaleFactor: 1, mobile: false }, sid),
	]);
	await cdp.send('Page.bringToFront', {}, sid);
	const s = {
		cdp, sid, errors, requests,
		async evaluate(expr) {
			const r = await cdp.send('Runtime.evaluate', { expression: expr, returnByValue: true, awaitPromise: true }, sid);
			if (r.exceptionDetails) {
				const ex = r.exceptionDetails.exception;
				throw new Error('evaluate: ' + ((ex && ex.description) || r.exceptionDetails.text).split('\n')[0]);
			}
			return r.result.value;
		},
		// bounding box of the first element matching SEL (scrolled into
		// view) and whether its centre hits it; null when none
		box(sel) {
			return s.evaluate(`(() => {
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
		},
		mouse(type, x, y, extra = {}) {
			return cdp.send('Input.dispatchMouseEvent', Object.assign({ type, x, y, button: 'none', modifiers: 0 }, extra), sid);
		},
		async click(x, y) {
			await s.mouse('mouseMoved', x, y);
			await s.mouse('mousePressed', x, y, { button: 'left', buttons: 1, clickCount: 1 });
			await s.mouse('mouseReleased', x, y, { button: 'left', buttons: 0, clickCount: 1 });
		},
		async key(k, code, vk) {
			const base = { key: k, code, windowsVirtualKeyCode: vk, nativeVirtualKeyCode: vk };
			await cdp.send('Input.dispatchKeyEvent', Object.assign({ type: 'keyDown', text: k === 'Enter' ? '\r' : '' }, base), sid);
			await cdp.send('Input.dispatchKeyEvent', Object.assign({ type: 'keyUp' }, base), sid);
		},
		insertText(text) { return cdp.send('Input.insertText', { text }, sid); },
		settle() { return s.evaluate('new Promise((r) => requestAnimationFrame(() => setTimeout(r, 0)))'); },
		async screenshot(file) {
			const png = await cdp.send('Page.captureScreenshot', { format: 'png' }, sid);
			fs.writeFileSync(file, Buffer.from(png.data, 'base64'));
			console.log('screenshot: ' + file);
		},
		// judge errors and requests (from any step), close, exit 0/1
		async finish(check, failed) {
			check(errors.length === 0, 'no page or console errors' + (errors.length ? ': ' + errors.join('; ') : ''));
			check(requests.length === 0, 'no network requests' + (requests.length ? ': ' + requests.join(' ') : ''));
			try { await cdp.send('Browser.close', {}, undefined, 5000); } catch (e) { /* killed below */ }
			for (let i = 0; i < 50 && !state.exited; i++) await sleep(100);
			clearTimeout(watchdog);
			cleanup();
			process.exit(failed() ? 1 : 0);
		},
	};
	const loaded = cdp.waitEvent('Page.loadEventFired', sid, 60000);
	const nav = await cdp.send('Page.navigate', { url: pageUrl }, sid);
	if (nav.errorText) throw new Error('navigate: ' + nav.errorText);
	await loaded;
	let st = null;
	for (const end = Date.now() + 60000; Date.now() < end; await sleep(50)) {
		st = await s.evaluate('window.fgStats && window.fgStats.paintedMs > 0 ? window.fgStats : null');
		if (st) break;
	}
	if (!st) throw new Error('window.fgStats.paintedMs not set 60 s after load (page script did not run?)');
	s.stats = st;
	return s;
}

module.exports = { open, sleep };
