// SPDX-License-Identifier: MIT
// Load a domprof flame graph page in headless Chromium and count the
// frames of one program at the process level (the level under each
// domain), as drawn: every drawn box is asked its node (window.fg.node),
// and the boxes at that level labelled NAME, NAME-PID or NAME-PID/TID are
// counted. By default (runs merged by command name) a recording of many
// runs of NAME has one such frame; with --by-pid, one per run.
// Also hovers the first such frame with the mouse and checks its tooltip
// names it with SAMPLES samples (when given). With --load OTHER.html, the
// data of another page is then handed to this one (window.fg.load, what
// a page embedding the graph does) and counted again: at least
// LOADED_MIN frames.
//
// usage: node check-roots.js PAGE.html SHOT.png --program NAME
//        [--frames N | --min-frames N] [--samples N] [--load OTHER.html --loaded-min N]
// Exit 0 pass, 1 a check failed, 3 the browser could not start.
'use strict';
const fg = require('./fg-page');

const args = process.argv.slice(2);
function opt(name, def) {
	const i = args.indexOf(name);
	return i >= 0 ? args[i + 1] : def;
}
if (args.length < 4 || !opt('--program')) {
	console.error('usage: node check-roots.js PAGE.html SHOT.png --program NAME [--frames N | --min-frames N] [--samples N]');
	process.exit(2);
}
const [page, shot] = args;
const prog = opt('--program'), frames = opt('--frames', null), minFrames = opt('--min-frames', null);
const samples = opt('--samples', null), other = opt('--load', null), loadedMin = +opt('--loaded-min', '1');
let failed = 0;
function check(ok, what) {
	console.log((ok ? 'ok   ' : 'FAIL ') + what);
	if (!ok) failed++;
}

(async () => {
	let s = null;
	const count = () => s.evaluate(`(() => {
			const out = [];
			for (const e of document.querySelectorAll('#fg .f[data-id]')) {
				const n = window.fg.node(+e.getAttribute('data-id'));
				if (n.kind !== 2) continue;
				const l = n.label, p = ${JSON.stringify(prog)};
				if (l === p || (l.startsWith(p + '-') && /^[0-9]+(\\/[0-9]+)?$/.test(l.slice(p.length + 1))))
					out.push({ id: +e.getAttribute('data-id'), label: l, total: n.total, depth: n.depth });
			}
			return out;
		})()`);
	try {
		s = await fg.open(page, check);
		const found = await count();
		const levels = await s.evaluate(`Array.from(document.querySelectorAll('#fg .f[data-id]'),
			(e) => window.fg.node(+e.getAttribute('data-id'))).filter((n) => n.kind === 2).length`);
		console.log(`${found.length} frames of ${prog} at the process level (${levels} process-level frames drawn): ` +
			found.slice(0, 6).map((f) => f.label + '=' + f.total).join(' ') + (found.length > 6 ? ' ...' : ''));
		if (frames !== null)
			check(found.length === +frames, `${prog} is ${frames} frame(s) at the process level (${found.length})`);
		if (minFrames !== null)
			check(found.length >= +minFrames, `${prog} is at least ${minFrames} frames at the process level (${found.length})`);
		if (found.length) {
			const el = await s.box(`#fg .f[data-id="${found[0].id}"]`);
			check(!!el && el.hit, `${found[0].label} is drawn and under its centre`);
			if (el) {
				await s.mouse('mouseMoved', 0, 0);
				await s.mouse('mouseMoved', el.cx, el.cy);
				await s.settle();
				const tip = await s.evaluate(`(() => { const t = document.getElementById('tip');
					return t.hidden ? '' : t.textContent; })()`);
				check(tip.split('\n')[0] === found[0].label, `tooltip names ${found[0].label}: ` + tip.replace(/\n/g, ' | '));
				if (samples !== null)
					check(new RegExp('^' + samples + ' samples').test(tip.split('\n')[1] || ''),
						`tooltip: ${samples} samples (all runs of ${prog})`);
			}
		}
		if (other) {
			const html = require('fs').readFileSync(other, 'utf8');
			const m = /<script type="application\/json" id="fgdata">([\s\S]*?)<\/script>/.exec(html);
			check(!!m, `${other} holds the graph's data`);
			if (m) {
				await s.evaluate(`window.fg.load(${m[1]})`);
				await s.settle();
				const again = await count();
				check(again.length >= loadedMin, `after fg.load of ${other}: ${again.length} frames of ${prog} (>= ${loadedMin})`);
			}
		}
		await s.screenshot(shot);
		console.log('screenshot: ' + shot);
	} catch (e) {
		check(false, 'browser session: ' + e.message.split('\n')[0]);
	}
	await fg.done(s, check, () => failed);
})();
