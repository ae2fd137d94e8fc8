// SPDX-License-Identifier: MIT
// What a reader sees first of a flame graph: loads a `domprof flamegraph`
// page (--svg: its SVG picture), or with --report a
// `domprof report --format html` page, in
// headless Chromium at 1280x800 and checks the first screen of its flame
// graph shows a frame wider than 10% of the window (the graph's base,
// where the wide frames are), not only the narrow tops of a few deep
// stacks. The first screen is the page as it opens (flame graph page), or
// the report scrolled to its "Flame graph" section (the place a reader
// scrolls to: the report opens on its header and tables).
//
// The frames seen are taken from the DOM: each frame box inside the
// window (below the report's sticky filter bar) and the element at its
// centre (what is really on top there). A screenshot of that screen is
// written for the pixel check (tests/e2e/lib/png_runs.py).
//
// Also: the deep stack (--deep FN) is cut with its frame marked, a click
// on it zooms and draws more of it, a real click on "All levels" draws
// every level keeping the base where it was on the screen, a click on a
// frame still zooms, and a lower window draws fewer levels.
// The control, which must fail: the page put in the previous builds'
// state (search cleared, zoom reset, every level drawn, the window opened
// at the same place; the SVG scrolled back to its top) shows no such
// frame; its screenshot is OLDSHOT.
//
// usage: node check-firstscreen.js PAGE.html|PAGE.svg SHOT.png OLDSHOT.png
//        [--report|--svg] [--deep FN] [--wide FN]
// Prints "first-screen: ..." lines for both states and ok/FAIL lines; exit
// 0 when every check passes and the control fails, 1 otherwise, 3 when the
// browser could not start.
'use strict';
const path = require('path');
const cdp = require('./cdp.js');

const args = process.argv.slice(2);
if (args.length < 3) {
	console.error('usage: node check-firstscreen.js PAGE SHOT.png OLDSHOT.png [--report|--svg] [--deep FN] [--wide FN]');
	process.exit(2);
}
const pageUrl = 'file://' + path.resolve(args[0]);
const shot = args[1], oldShot = args[2];
const opt = (name, def) => { const i = args.indexOf(name); return i >= 0 ? args[i + 1] : def; };
const report = args.includes('--report'), svg = args.includes('--svg');
const deep = opt('--deep', null), wide = opt('--wide', null);
const W = 1280, H = 800;

let failed = 0;
function check(ok, what) {
	console.log((ok ? 'ok   ' : 'FAIL ') + what);
	if (!ok) failed++;
	return ok;
}
function control(ok, what) {
	console.log((ok ? 'FAIL control passed: ' : 'ok   control fails: ') + what);
	if (ok) failed++;
}
const watchdog = setTimeout(() => { check(false, 'browser session finished within 60 s'); process.exit(1); }, 60000);

// In the page: the flame graph's window and the offset of its document in
// the top window's viewport.
const FG = report ? `const fr = document.getElementById('fgframe'), w = fr.contentWindow, doc = w.document;
	const fb = fr.getBoundingClientRect(), ox = fb.left + fr.clientLeft, oy = fb.top + fr.clientTop;`
	: 'const w = window, doc = document, ox = 0, oy = 0;';
// Where the reader starts: the page's top, or the report's flame section
// at the top of the window; an SVG where it opened (its own script may
// scroll), the previous builds' SVG at its top.
const OPEN = report ? `document.getElementById('flame').scrollIntoView({ block: 'start' });` :
	svg ? '0' : 'window.scrollTo(0, 0);';
const OPEN_OLD = svg ? 'window.scrollTo(0, 0);' : OPEN;
// each frame's box and label: a div (HTML), a g with a rect and a title (SVG)
const FRAMES = svg ? `Array.from(doc.querySelectorAll('g.f'), (g) => [g.querySelector('rect'), g,
		g.querySelector('title').textContent.replace(/ \\(.*$/s, ''), -1])`
	: `Array.from(doc.querySelectorAll('#fg .f'), (e) => [e, e, e.textContent, w.fg.node(+e.getAttribute('data-id')).depth])`;

// The frames on the screen: [label, visible width, depth] of each frame
// box fully inside the window's rows that are not under the sticky bar,
// and on top at its centre.
const VISIBLE = `(() => { ${FG}
	const bar = document.getElementById('filters');
	const top = bar ? Math.max(0, bar.getBoundingClientRect().bottom) : 0;
	const out = [];
	for (const [e, box, label, depth] of ${FRAMES}) {
		const r = e.getBoundingClientRect();
		const y0 = r.top + oy, y1 = r.bottom + oy, x0 = Math.max(0, r.left + ox), x1 = Math.min(${W}, r.right + ox);
		if (y0 < top || y1 > ${H} || x1 - x0 < 1) continue;
		const at = doc.elementFromPoint((Math.max(r.left, -ox) + Math.min(r.right, ${W} - ox)) / 2, (r.top + r.bottom) / 2);
		if (!at || (at !== e && !box.contains(at))) continue;
		out.push([label, x1 - x0, depth]);
	}
	return out.sort((a, b) => b[1] - a[1]);
})()`;
// the graph's base (bottom edge) in the top window's viewport
const BASE = `(() => { ${FG} return doc.getElementById('fg').getBoundingClientRect().bottom + oy; })()`;

async function run() {
	let page;
	try {
		page = await cdp.open(pageUrl, { width: W, height: H });
	} catch (e) {
		if (e.noBrowser) { console.error('cannot start chromium: ' + e.message.split('\n')[0]); process.exit(3); }
		check(false, 'page opened: ' + e.message.split('\n')[0]);
		process.exit(1);
	}
	try {
		const ready = report ? 'window.rpStats && window.rpStats.paintedMs > 0' :
			svg ? "document.readyState === 'complete'" : 'window.fgStats && window.fgStats.paintedMs > 0';
		if (!await page.waitFor(ready, 30000)) throw new Error('the page did not paint in 30 s');
		let m = await firstScreen(page, shot, 'first-screen', OPEN);
		check(m.wide, 'the first screen shows a frame wider than 10% of the window (' + m.what + ')');
		if (wide) check(m.vis.some((v) => v[0] === wide), `${wide} is on the first screen`);
		if (!svg) {
			await interact(page, m.lv);
			// the previous builds: every level drawn, opened at the same place
			// (and nothing highlighted: the search above is cleared)
			await page.evaluate(`(() => { ${FG} doc.getElementById('clear').click(); w.fg.reset(); w.fg.allLevels(true); })()`);
		}
		m = await firstScreen(page, oldShot, svg ? 'control (opened at the top)' : 'control (all levels)', OPEN_OLD);
		control(m.wide, (svg ? 'opened at its top' : 'all levels drawn') +
			', the first screen shows a frame wider than 10% (' + m.what + ')');
	} catch (e) {
		check(false, 'browser session: ' + e.message.split('\n')[0]);
	}
	check(page.errors.length === 0, 'no page or console errors' + (page.errors.length ? ': ' + page.errors.join('; ') : ''));
	await page.close();
	clearTimeout(watchdog);
	process.exit(failed ? 1 : 0);
}

// The window opened as a reader opens it: the frames on it and a screenshot.
async function firstScreen(page, file, name, open) {
	await page.evaluate(open);
	await page.settle();
	const lv = svg ? { bound: 0, hidden: 0 } : await page.evaluate(`(() => { ${FG} return w.fg.levels(); })()`);
	const vis = await page.evaluate(VISIBLE);
	const best = vis[0] || ['(none)', 0, -1];
	console.log(`${name}: widest=${best[1].toFixed(0)} label=${best[0]} frames=${vis.length} ` +
		`levels=${lv.bound || 'all'} hidden=${lv.hidden}; ${file}`);
	await page.screenshot(file, { fast: true });
	return { lv, vis, wide: best[1] > 0.1 * W, what: `${best[0]}: ${best[1].toFixed(0)} of ${W} px; ${vis.length} frames on it` };
}

async function interact(page, lv) {
	const fg = (body) => page.evaluate(`(() => { ${FG} ${body} })()`);
	const deepest = () => fg(`let m = 0; for (const e of doc.querySelectorAll('#fg .f'))
		m = Math.max(m, w.fg.node(+e.getAttribute('data-id')).depth); return m;`);
	if (deep) {
		check(lv.bound > 0 && lv.hidden > 0, `the levels drawn are bounded (${lv.bound}), ${lv.hidden} levels of the deep stack hidden`);
		const cut = await fg(`const e = doc.querySelector('#fg .f.cut'); return e ? e.textContent : null;`);
		check(cut === deep, `the cut frame is marked (${cut})`);
	}
	const d0 = await deepest();
	// a click on the cut frame zooms to it: the bound counts from there
	if (deep) {
		const b = await page.box('#fg .f.cut', report ? '#fgframe' : undefined);
		if (check(!!b && b.hit, 'the cut frame is clickable')) {
			await page.click(b.cx, b.cy);
			await page.settle();
			const dz = await deepest();
			check(dz > d0, `a click on it zooms and draws the levels above it (deepest level drawn ${d0} -> ${dz})`);
			await fg('w.fg.reset();');
			await page.evaluate(OPEN);
			await page.settle();
		}
	}
	// "All levels": a real click; the base stays where it was on the screen
	const btn = report ? await page.box('#levels', '#fgframe') : await page.box('#levels');
	if (!check(!!btn && btn.hit, 'the All levels button is shown and clickable' + (btn ? ` ("${btn.text}")` : '')))
		return;
	const y0 = await page.evaluate(BASE);
	await page.click(btn.cx, btn.cy);
	await page.settle();
	const y1 = await page.evaluate(BASE), d1 = await deepest(), lv1 = await fg('return w.fg.levels();');
	const atEnd = await page.evaluate('scrollY + innerHeight >= document.documentElement.scrollHeight - 1');
	check(lv1.all && lv1.hidden === 0 && d1 > d0, `a click on it draws all levels (deepest level drawn ${d0} -> ${d1})`);
	// (the page may end closer under the base than the window did: then it
	// is scrolled to its end)
	check(Math.abs(y1 - y0) < 2 || (atEnd && y1 > y0 && y1 <= H), `the base stays in place on the screen ` +
		`(${y0.toFixed(0)} -> ${y1.toFixed(0)} px${atEnd ? ', the page scrolled to its end' : ''})`);
	// a click on a frame zooms as before: the frame spans the width
	if (wide) {
		const id = await fg(`return w.fg.find(${JSON.stringify(wide)});`);
		const b = await page.box(`#fg .f[data-id="${id}"]`, report ? '#fgframe' : undefined);
		if (check(!!b && b.hit, `${wide} is clickable`)) {
			await page.click(b.cx, b.cy);
			await page.settle();
			const z = await fg(`const e = doc.querySelector('#fg .f[data-id="${id}"]');
				return e ? [e.getBoundingClientRect().width, doc.getElementById('fg').clientWidth] : null;`);
			check(!!z && Math.abs(z[0] - z[1]) < 2, `a click on ${wide} zooms it to the full width` +
				(z ? ` (${z[0].toFixed(0)} of ${z[1]} px)` : ''));
		}
	}
	// a lower window fits fewer levels (the report: its window, not the frame's)
	await fg('w.fg.reset(); w.fg.allLevels(false);');
	const b0 = (await fg('return w.fg.levels();')).bound;
	const metrics = (h) => page.cdp.send('Emulation.setDeviceMetricsOverride',
		{ width: W, height: h, deviceScaleFactor: 1, mobile: false }, page.sid);
	await metrics(H - 200);
	const b1 = await page.waitFor(`(() => { ${FG} const b = w.fg.levels().bound; return b < ${b0} ? b : 0; })()`, 3000);
	check(!!b1, `a window 200 px lower draws fewer levels (${b0} -> ${b1 || b0})`);
	await metrics(H);
	await page.waitFor(`(() => { ${FG} return w.fg.levels().bound === ${b0}; })()`, 3000);
}

run();
