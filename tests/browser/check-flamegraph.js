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
// so it runs on machines that reach nothing but the Debian archive); the
// session is tests/browser/cdp.js (through fg-page.js). Mouse and keyboard input are real input
// events (Input.dispatch*), so a broken event handler fails the test just
// as it would fail a user.
//
// usage: node check-flamegraph.js PAGE.html SCREENSHOT.png [--hot NAME]
//        [--share PCT --tol PCT] [--timing-only]
// env: CHROMIUM (default /usr/bin/chromium); NODE_PATH must reach 'ws'
// (Debian: /usr/share/nodejs, set by tests/browser/lib.sh).
// Exit 0 pass, 1 a check failed, 3 the browser could not start.
'use strict';
const fg = require('./fg-page');

const args = process.argv.slice(2);
if (args.length < 2) {
	console.error('usage: node check-flamegraph.js PAGE.html SCREENSHOT.png [--hot NAME] ' +
		'[--share PCT --tol PCT] [--timing-only]');
	process.exit(2);
}
const page = args[0];
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
// ---- the test -----------------------------------------------------------------
async function run() {
	let s = null;
	try {
		s = await fg.open(page, check);
		const st = s.stats;
		const evaluate = (e) => s.evaluate(e), box = (q) => s.box(q), mouse = (t, x, y, e) => s.mouse(t, x, y, e),
			click = (x, y) => s.click(x, y), key = (k, c, v) => s.key(k, c, v), settle = () => s.settle();
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
			await s.type(hot);
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
		await s.screenshot(shot);
		console.log('screenshot: ' + shot);
	} catch (e) {
		check(false, 'browser session: ' + e.message.split('\n')[0]);
	}
	// judged last by done, also after a failed step: errors and
	// requests may come from any step above
	await fg.done(s, check, () => failed);
}
run();
