// SPDX-License-Identifier: MIT
// A small headless-Chromium driver for the page tests, as a module: starts
// Debian's /usr/bin/chromium with a fresh profile, talks the Chrome
// DevTools protocol (CDP) over one WebSocket (Debian's node-ws; no npm),
// opens one page in a flat session and collects its errors (exceptions,
// console errors, log errors) and network requests. Input is real input
// events (Input.dispatch*), so a broken handler fails a test as it would
// fail a user. It is the harness of check-flamegraph.js as a module, for
// check-report.js (check-flamegraph.js keeps its own copy for now).
//
//   const cdp = require('./cdp.js');
//   const page = await cdp.open(url, { width, height });  // rejects -> exit 3
//   await page.evaluate(expr); await page.box(sel); await page.click(x, y);
//   await page.settle(); await page.screenshot(file, { full: true });
//   page.errors, page.requests; await page.close();
//
// env: CHROMIUM (default /usr/bin/chromium).
'use strict';
const path = require('path');
const fs = require('fs');
const os = require('os');
const { spawn } = require('child_process');

let WebSocket;
function loadWs() {
	if (WebSocket) return;
	try {
		WebSocket = require('ws');
	} catch (e) {
		throw new Error('node module ws not found (Debian package node-ws, NODE_PATH=/usr/share/nodejs): ' +
			e.message.split('\n')[0]);
	}
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
				for (const h of this.handlers.slice()) h(msg.method, msg.params || {}, msg.sessionId);
			}
		});
		ws.on('close', () => {
			for (const p of this.pending.values()) p.reject(new Error(`${p.method}: browser connection closed`));
			this.pending.clear();
		});
	}
	static connect(url) {
		loadWs();
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
			const h = (m, p, s) => {
				if (m !== method || s !== sessionId) return;
				clearTimeout(t);
				this.handlers.splice(this.handlers.indexOf(h), 1);
				resolve(p);
			};
			const t = setTimeout(() => {
				this.handlers.splice(this.handlers.indexOf(h), 1);
				reject(new Error(`no ${method} in ${timeoutMs / 1000} s`));
			}, timeoutMs);
			this.handlers.push(h);
		});
	}
}

// Starts chromium; resolves with { proc, wsUrl, profileDir }.
function launch(width, height) {
	const exe = process.env.CHROMIUM || '/usr/bin/chromium';
	const profileDir = fs.mkdtempSync(path.join(os.tmpdir(), 'domprof-chromium-'));
	const argv = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
		'--disable-background-networking', '--disable-component-update', '--disable-sync',
		'--no-default-browser-check', '--disable-extensions', '--mute-audio',
		'--user-data-dir=' + profileDir, '--remote-debugging-port=0',
		`--window-size=${width},${height}`, 'about:blank'];
	return new Promise((resolve, reject) => {
		let err = '', done = false, proc;
		const finish = (f, v) => { if (!done) { done = true; clearTimeout(t); f(v); } };
		const t = setTimeout(() => finish(reject, new Error('no "DevTools listening" line in 30 s; stderr: ' +
			err.slice(-500))), 30000);
		const state = { proc: null, exited: false, profileDir };
		try {
			proc = spawn(exe, argv, { stdio: ['ignore', 'ignore', 'pipe'] });
		} catch (e) {
			finish(reject, e);
			return;
		}
		state.proc = proc;
		proc.on('error', (e) => finish(reject, e));
		proc.on('exit', (code, sig) => {
			state.exited = true;
			finish(reject, new Error(`${exe} exited (${sig || code}) before listening; stderr: ` + err.slice(-500)));
		});
		proc.stderr.setEncoding('utf8');
		proc.stderr.on('data', (s) => {
			if (err.length < 65536) err += s;
			const m = /DevTools listening on (ws:\/\/\S+)/.exec(err);
			if (m) { state.wsUrl = m[1]; finish(resolve, state); }
		});
		process.on('exit', () => {
			if (!state.exited) try { proc.kill('SIGKILL'); } catch (e) { /* gone */ }
			try { fs.rmSync(profileDir, { recursive: true, force: true }); } catch (e) { /* best effort */ }
		});
	});
}

class Page {
	constructor(cdp, sid, browser, url) {
		this.cdp = cdp;
		this.sid = sid;
		this.browser = browser;
		this.url = url;
		this.errors = [];
		this.requests = [];
	}
	async evaluate(expr) {
		const r = await this.cdp.send('Runtime.evaluate', { expression: expr, returnByValue: true, awaitPromise: true }, this.sid);
		if (r.exceptionDetails) {
			const ex = r.exceptionDetails.exception;
			throw new Error('evaluate: ' + ((ex && ex.description) || r.exceptionDetails.text).split('\n')[0]);
		}
		return r.result.value;
	}
	// Bounding box of the first element matching SEL in the page (or, with
	// frame, in the document of the iframe matching frame, offset by the
	// iframe's position), scrolled into view, and whether the point at its
	// centre hits it (what a real click reaches); null when missing.
	box(sel, frame) {
		return this.evaluate(`(() => {
			const fr = ${frame ? `document.querySelector(${JSON.stringify(frame)})` : 'null'};
			const doc = fr ? fr.contentDocument : document;
			if (!doc) return null;
			const e = doc.querySelector(${JSON.stringify(sel)});
			if (!e) return null;
			e.scrollIntoView({ block: 'center', inline: 'nearest' });
			if (fr) fr.scrollIntoView({ block: 'nearest' });
			let r = e.getBoundingClientRect();
			let ox = 0, oy = 0;
			if (fr) {
				const fb = fr.getBoundingClientRect();
				ox = fb.left + fr.clientLeft; oy = fb.top + fr.clientTop;
			}
			const cx = r.left + r.width / 2, cy = r.top + r.height / 2;
			const at = doc.elementFromPoint(cx, cy);
			return { x: r.left + ox, y: r.top + oy, width: r.width, height: r.height, cx: cx + ox, cy: cy + oy,
				text: e.textContent, hit: at === e || e.contains(at) };
		})()`);
	}
	async mouse(type, x, y, extra = {}) {
		await this.cdp.send('Input.dispatchMouseEvent', Object.assign({ type, x, y, button: 'none', modifiers: 0 }, extra), this.sid);
	}
	async click(x, y) {
		await this.mouse('mouseMoved', x, y);
		await this.mouse('mousePressed', x, y, { button: 'left', buttons: 1, clickCount: 1 });
		await this.mouse('mouseReleased', x, y, { button: 'left', buttons: 0, clickCount: 1 });
	}
	// clicks the centre of SEL (see box); returns the box, or null
	async clickSel(sel, frame) {
		const b = await this.box(sel, frame);
		if (b && b.hit) await this.click(b.cx, b.cy);
		return b;
	}
	async key(k, code, vk) {
		const base = { key: k, code, windowsVirtualKeyCode: vk, nativeVirtualKeyCode: vk };
		await this.cdp.send('Input.dispatchKeyEvent', Object.assign({ type: 'keyDown', text: k === 'Enter' ? '\r' : '' }, base), this.sid);
		await this.cdp.send('Input.dispatchKeyEvent', Object.assign({ type: 'keyUp' }, base), this.sid);
	}
	async type(text) { await this.cdp.send('Input.insertText', { text }, this.sid); }
	// round trip through the page's event loop: handlers have run and the
	// next frame is laid out
	settle() { return this.evaluate('new Promise((r) => requestAnimationFrame(() => setTimeout(r, 0)))'); }
	// polls EXPR until it is truthy (returns its value) or ms pass (null)
	async waitFor(expr, ms) {
		for (const end = Date.now() + ms; Date.now() < end; await sleep(50)) {
			const v = await this.evaluate(expr);
			if (v) return v;
		}
		return null;
	}
	async screenshot(file, opts = {}) {
		const p = { format: 'png' };
		if (opts.fast) p.optimizeForSpeed = true;   // (unfiltered rows: quick to decode in python)
		if (opts.full) {
			const h = await this.evaluate('Math.min(document.documentElement.scrollHeight, ' + (opts.maxHeight || 4000) + ')');
			const w = await this.evaluate('window.innerWidth');
			await this.evaluate('window.scrollTo(0, 0)');
			p.captureBeyondViewport = true;
			p.clip = { x: 0, y: 0, width: w, height: h, scale: 1 };
		}
		const png = await this.cdp.send('Page.captureScreenshot', p, this.sid);
		fs.writeFileSync(file, Buffer.from(png.data, 'base64'));
	}
	async close() {
		try { await this.cdp.send('Browser.close', {}, undefined, 5000); } catch (e) { /* killed below */ }
		for (let i = 0; i < 50 && !this.browser.exited; i++) await sleep(100);
		if (!this.browser.exited) try { this.browser.proc.kill('SIGKILL'); } catch (e) { /* gone */ }
	}
}

// Launches the browser and navigates one page to URL; resolves when its
// load event fired. A failure to start the browser rejects with
// err.noBrowser set (callers exit 3: skip).
async function open(url, { width = 1280, height = 800 } = {}) {
	let browser, cdp;
	try {
		browser = await launch(width, height);
		cdp = await Cdp.connect(browser.wsUrl);
	} catch (e) {
		e.noBrowser = true;
		throw e;
	}
	const { targetId } = await cdp.send('Target.createTarget', { url: 'about:blank' });
	const { sessionId: sid } = await cdp.send('Target.attachToTarget', { targetId, flatten: true });
	const page = new Page(cdp, sid, browser, url);
	cdp.on((m, p, s) => {
		if (s !== sid) return;
		if (m === 'Runtime.exceptionThrown') {
			const d = p.exceptionDetails;
			page.errors.push('pageerror: ' + ((d.exception && d.exception.description) || d.text).split('\n')[0]);
		} else if (m === 'Runtime.consoleAPICalled' && (p.type === 'error' || p.type === 'assert')) {
			page.errors.push('console: ' + p.args.map((a) => (a.value !== undefined ? a.value : a.description)).join(' '));
		} else if (m === 'Log.entryAdded' && p.entry.level === 'error') {
			page.errors.push('log: ' + p.entry.text + (p.entry.url ? ' (' + p.entry.url + ')' : ''));
		} else if (m === 'Network.requestWillBeSent') {
			if (p.request.url !== url && p.request.url !== 'about:srcdoc') page.requests.push(p.request.url);
		}
	});
	await Promise.all([
		cdp.send('Page.enable', {}, sid), cdp.send('Runtime.enable', {}, sid),
		cdp.send('Log.enable', {}, sid), cdp.send('Network.enable', {}, sid),
		cdp.send('Emulation.setDeviceMetricsOverride', { width, height, deviceScaleFactor: 1, mobile: false }, sid),
	]);
	await cdp.send('Page.bringToFront', {}, sid);
	const loaded = cdp.waitEvent('Page.loadEventFired', sid, 60000);
	const nav = await cdp.send('Page.navigate', { url }, sid);
	if (nav.errorText) throw new Error('navigate: ' + nav.errorText);
	await loaded;
	return page;
}

module.exports = { open, sleep };
