// SPDX-License-Identifier: MIT
// Load a domprof flame graph page in headless Chromium (Debian's
// /usr/bin/chromium, driven by playwright-core) and check it really works:
// no page or console errors, the root frame and an expected function are
// drawn, clicking a frame zooms it to the full width, reset restores the
// root, search highlights matches and prints their share. Writes a
// screenshot. Prints one "timing:" line with the page's own render times.
//
// usage: node check-flamegraph.js PAGE.html SCREENSHOT.png [--hot NAME]
//        [--share PCT --tol PCT] [--timing-only]
// Exit 0 pass, 1 a check failed, 3 the browser could not start.
'use strict';
const path = require('path');
const fs = require('fs');
const os = require('os');

let chromium;
try {
	({ chromium } = require('playwright-core'));
} catch (e) {
	console.error('playwright-core not installed: ' + e.message);
	process.exit(3);
}

const args = process.argv.slice(2);
const page_file = path.resolve(args[0]);
const shot = args[1];
function opt(name, def) {
	const i = args.indexOf(name);
	return i >= 0 ? args[i + 1] : def;
}
const hot = opt('--hot', null);
const share = opt('--share', null);
const tol = parseFloat(opt('--tol', '5'));
const timingOnly = args.includes('--timing-only');

let failed = 0;
function check(ok, what) {
	console.log((ok ? 'ok   ' : 'FAIL ') + what);
	if (!ok) failed++;
}

(async () => {
	const profileDir = fs.mkdtempSync(path.join(os.tmpdir(), 'domprof-chromium-'));
	let ctx;
	try {
		// a fresh profile directory each run (playwright passes it as --user-data-dir)
		ctx = await chromium.launchPersistentContext(profileDir, {
			executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
			headless: true,
			args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
				'--disable-background-networking', '--disable-component-update', '--disable-sync'],
			viewport: { width: 1280, height: 800 },
			timeout: 30000,
		});
	} catch (e) {
		console.error('cannot start chromium: ' + e.message.split('\n')[0]);
		process.exit(3);
	}
	const errors = [];
	const requests = [];
	try {
		const page = ctx.pages()[0] || await ctx.newPage();
		page.on('pageerror', (e) => errors.push('pageerror: ' + e.message));
		page.on('console', (m) => { if (m.type() === 'error') errors.push('console: ' + m.text()); });
		page.on('request', (r) => { if (!r.url().startsWith('file:')) requests.push(r.url()); });
		await page.goto('file://' + page_file, { waitUntil: 'load', timeout: 60000 });
		await page.waitForFunction(() => window.fgStats && window.fgStats.paintedMs > 0, null, { timeout: 60000 });
		const st = await page.evaluate(() => window.fgStats);
		console.log(`timing: nodes=${st.nodes} tree_nodes=${st.treeNodes} drawn=${st.drawn} ` +
			`script_ms=${st.scriptMs.toFixed(1)} ready_ms=${st.readyMs.toFixed(1)} ` +
			`painted_ms=${st.paintedMs.toFixed(1)}`);
		check(errors.length === 0, 'no page or console errors' + (errors.length ? ': ' + errors.join('; ') : ''));
		check(requests.length === 0, 'no network requests' + (requests.length ? ': ' + requests.join(' ') : ''));
		const root = await page.$('#fg .f[data-id="0"]');
		check(!!root && (await root.textContent()) === 'all', 'root frame "all" is drawn');
		const fgW = await page.$eval('#fg', (e) => e.getBoundingClientRect().width);
		if (root) {
			const rw = (await root.boundingBox()).width;
			check(Math.abs(rw - fgW) < 2, `root spans the width (${rw.toFixed(1)} of ${fgW.toFixed(1)} px)`);
		}
		if (!timingOnly && hot) {
			const id = await page.evaluate((h) => window.fg.find(h), hot);
			check(id > 0, `hot function ${hot} is in the graph`);
			let el = await page.$(`#fg .f[data-id="${id}"]`);
			check(!!el, `hot function ${hot} is drawn`);
			if (el) {
				const text = await el.textContent();
				check(text === hot, `its label reads "${text}"`);
				const before = (await el.boundingBox()).width;
				await page.mouse.move(0, 0);
				await el.hover();
				const tipText = await page.$eval('#tip', (t) => (t.hidden ? '' : t.textContent));
				check(/samples/.test(tipText) && /%/.test(tipText), 'tooltip shows samples and percent: ' +
					tipText.replace(/\n/g, ' | '));
				await el.click();
				el = await page.$(`#fg .f[data-id="${id}"]`);
				const after = el ? (await el.boundingBox()).width : 0;
				check(Math.abs(after - fgW) < 2 && after > before + 1,
					`click zooms: ${hot} ${before.toFixed(1)} px -> ${after.toFixed(1)} px (full ${fgW.toFixed(1)})`);
				const anc = await page.$$eval('#fg .f.anc', (a) => a.length);
				check(anc >= 3, `ancestors stay visible while zoomed (${anc})`);
				await page.click('#reset');
				el = await page.$(`#fg .f[data-id="${id}"]`);
				const reset = el ? (await el.boundingBox()).width : 0;
				check(Math.abs(reset - before) < 1, `reset restores the width (${reset.toFixed(1)} px)`);
			}
			await page.fill('#search', hot);
			await page.press('#search', 'Enter');
			const matched = await page.$eval('#matched', (e) => e.textContent);
			const hits = await page.$$eval('#fg .f.m', (a) => a.map((e) => e.textContent));
			check(hits.includes(hot), `search highlights ${hot} (${hits.length} frames)`);
			const m = /Matched: ([0-9.]+)%/.exec(matched);
			check(!!m, `search prints the share: "${matched}"`);
			if (m && share !== null)
				check(Math.abs(parseFloat(m[1]) - parseFloat(share)) <= tol,
					`matched share ${m[1]}% is ${share}% +- ${tol}`);
		}
		await page.screenshot({ path: shot, fullPage: false });
		console.log('screenshot: ' + shot);
	} catch (e) {
		check(false, 'browser session: ' + e.message.split('\n')[0]);
	} finally {
		await ctx.close();
		fs.rmSync(profileDir, { recursive: true, force: true });
	}
	process.exit(failed ? 1 : 0);
})();
