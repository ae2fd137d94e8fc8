// SPDX-License-Identifier: MIT
// Load a differential flame graph page (`domprof diff A B --flamegraph
// OUT.html`) in headless Chromium and check, with real mouse and keyboard
// input, what a user sees:
// - no page errors, no network requests, the root spans the width, the
//   legend names the colours (hotter, colder, unchanged, only in A, the
//   domain stripes);
// - the frame of GREW is red and that of SHRANK blue (their computed
//   background colours), the frame of GONE (only in A) is drawn, hatched
//   and says "only in A";
// - hovering each shows a tooltip whose numbers equal the row of that
//   symbol in `diff --format json` (DIFF.json): self samples of A and B
//   exactly, the shares and the change to the two decimals shown
//   (--absolute: the change in samples, B - A);
// - a click zooms GREW to the full width, search highlights it and
//   prints its share of B.
// Writes a screenshot.
//
// usage: node check-flamediff.js PAGE.html SHOT.png --json DIFF.json
//        --grew NAME --shrank NAME [--gone NAME] [--absolute] [--domain D]
// (--domain D: the frames under domain D, and D's rows of the JSON)
// Exit 0 pass, 1 a check failed, 3 the browser could not start.
'use strict';
const fs = require('fs');
const fg = require('./fg-page');

const args = process.argv.slice(2);
function opt(name, def) {
	const i = args.indexOf(name);
	return i >= 0 ? args[i + 1] : def;
}
if (args.length < 4 || !opt('--json') || !opt('--grew') || !opt('--shrank')) {
	console.error('usage: node check-flamediff.js PAGE.html SHOT.png --json DIFF.json --grew NAME --shrank NAME ' +
		'[--gone NAME] [--absolute] [--domain D]');
	process.exit(2);
}
const [page, shot] = args;
const json = JSON.parse(fs.readFileSync(opt('--json'), 'utf8'));
const grew = opt('--grew'), shrank = opt('--shrank'), gone = opt('--gone', null);
const absolute = args.includes('--absolute'), domain = opt('--domain', null);
let failed = 0;
function check(ok, what) {
	console.log((ok ? 'ok   ' : 'FAIL ') + what);
	if (!ok) failed++;
}
function row(sym) {
	return json.rows.find((r) => r.symbol === sym && (!domain || r.domain === domain));
}
const rgb = (s) => (/rgba?\((\d+), (\d+), (\d+)/.exec(s) || [0, 0, 0, 0]).slice(1, 4).map(Number);
const num = (s) => parseFloat(s.replace('\u2212', '-').replace('\u00b1', ''));

// The tooltip's numbers: A and B (at or below), the change, self A and B.
function parseTip(t) {
	const m = {
		a: /\nA: (\d+) samples \(([0-9.]+)%\)/.exec(t), b: /\nB: (\d+) samples \(([0-9.]+)%\)/.exec(t),
		chg: /\nchange: ([-+\u2212\u00b1][0-9.]+) (points|samples)/.exec(t),
		self: /\nself: A (\d+) \(([0-9.]+)%\), B (\d+) \(([0-9.]+)%\), change ([-+\u2212\u00b1][0-9.]+) (points|samples)/.exec(t),
	};
	if (!m.a || !m.b || !m.chg || !m.self) return null;
	return { a: +m.a[1], pa: +m.a[2], b: +m.b[1], pb: +m.b[2], chg: num(m.chg[1]), unit: m.chg[2],
		sa: +m.self[1], psa: +m.self[2], sb: +m.self[3], psb: +m.self[4], schg: num(m.self[5]) };
}

(async () => {
	let s = null;
	try {
		s = await fg.open(page, check);
		const fgW = await s.evaluate(`document.getElementById('fg').getBoundingClientRect().width`);
		const root = await s.box('#fg .f[data-id="0"]');
		check(!!root && root.text === 'all' && Math.abs(root.width - fgW) < 2,
			`root frame "all" spans the width (${root ? `"${root.text}" ${root.width.toFixed(1)}` : 'none'} of ${fgW.toFixed(1)} px)`);
		const legend = await s.evaluate(`document.getElementById('legend').textContent`);
		check(/hotter/.test(legend) && /colder/.test(legend) && /unchanged/.test(legend) && /only in A/.test(legend) &&
			/stripe: /.test(legend), 'legend names the colours: ' + legend.slice(0, 160));

		async function frame(name, want) {
			// the frame of that name (in domain D, when given)
			const id = await s.evaluate(`(() => {
				for (let i = 1; i < window.fgStats.nodes; i++) {
					const n = window.fg.node(i);
					if (n.label === ${JSON.stringify(name)} && n.kind >= 3 &&
					    (${JSON.stringify(domain)} === null || n.domain === ${JSON.stringify(domain)})) return i;
				}
				return -1;
			})()`);
			check(id > 0, `${name} is in the graph`);
			if (id <= 0) return null;
			const sel = `#fg .f[data-id="${id}"]`;
			const el = await s.box(sel);
			check(!!el && el.hit && el.width > 1, `${name} is drawn and under its centre (${el ? el.width.toFixed(1) : 0} px)`);
			if (!el) return null;
			const st = await s.evaluate(`(() => { const e = document.querySelector(${JSON.stringify(sel)});
				const cs = getComputedStyle(e); return { bg: cs.backgroundColor, img: cs.backgroundImage, cls: e.className }; })()`);
			const [r, g, b] = rgb(st.bg);
			if (want === 'red') check(r - b >= 60 && r - g >= 40, `${name} (grew) is red: ${st.bg}`);
			if (want === 'blue') check(b - r >= 60, `${name} (shrank) is blue: ${st.bg}`);
			if (want === 'gone') check(/gone/.test(st.cls) && /gradient/.test(st.img), `${name} (only in A) is hatched: ${st.cls}`);
			await s.mouse('mouseMoved', 0, 0);
			await s.mouse('mouseMoved', el.cx, el.cy);
			await s.settle();
			const tip = await s.evaluate(`(() => { const t = document.getElementById('tip'); return t.hidden ? '' : t.textContent; })()`);
			console.log(`     tooltip: ${tip.replace(/\n/g, ' | ')}`);
			const t = parseTip(tip);
			check(!!t && tip.split('\n')[0] === name, `${name}: tooltip with A, B, change and self`);
			const x = row(name);
			check(!!x, `${name}: a row in the diff JSON`);
			if (t && x) {
				check(t.sa === x.samples_a && t.sb === x.samples_b,
					`${name}: self samples A ${t.sa} B ${t.sb} = JSON ${x.samples_a} ${x.samples_b}`);
				check(Math.abs(t.psa - x.share_a) <= 0.0051 && Math.abs(t.psb - x.share_b) <= 0.0051,
					`${name}: self shares ${t.psa}% ${t.psb}% = JSON ${x.share_a}% ${x.share_b}% (2 decimals)`);
				if (absolute)
					check(t.unit === 'samples' && t.schg === x.samples_b - x.samples_a,
						`${name}: --absolute change ${t.schg} samples = JSON ${x.samples_b - x.samples_a}`);
				else
					check(t.unit === 'points' && Math.abs(t.schg - x.diff) <= 0.0101,
						`${name}: change ${t.schg} points = JSON diff ${x.diff}`);
			}
			if (want === 'gone')
				check(/only in A/.test(tip) && t && t.b === 0 && t.a > 0, `${name}: tooltip says only in A, B 0`);
			return { id, el, sel };
		}
		const g = await frame(grew, 'red');
		await frame(shrank, 'blue');
		if (gone) await frame(gone, 'gone');
		if (g) {
			await s.click(g.el.cx, g.el.cy);
			await s.settle();
			const z = await s.box(g.sel);
			check(!!z && Math.abs(z.width - fgW) < 2, `click zooms ${grew} to the full width (${z ? z.width.toFixed(1) : 0} px)`);
			await s.key('Escape', 'Escape', 27);
			await s.settle();
			const sb = await s.box('#search');
			if (sb) await s.click(sb.cx, sb.cy);
			await s.type(grew);
			await s.key('Enter', 'Enter', 13);
			await s.settle();
			const matched = await s.evaluate(`document.getElementById('matched').textContent`);
			const hits = await s.evaluate(`Array.from(document.querySelectorAll('#fg .f.m'), (e) => e.textContent)`);
			check(hits.includes(grew) && /Matched: [0-9.]+% of B/.test(matched), `search highlights ${grew}: "${matched}"`);
			await s.evaluate(`document.getElementById('clear').click()`);
			await s.settle();
		}
		if (g) {  // leave the tooltip of the frame that grew in the picture
			await s.mouse('mouseMoved', g.el.cx, g.el.cy);
			await s.settle();
		}
		await s.screenshot(shot);
		console.log('screenshot: ' + shot);
	} catch (e) {
		check(false, 'browser session: ' + e.message.split('\n')[0]);
	}
	await fg.done(s, check, () => failed);
})();
