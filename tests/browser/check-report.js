// SPDX-License-Identifier: MIT
// Load a `domprof report --format html` page in headless Chromium and
// check it works as a user would use it (real mouse and keyboard events,
// through tests/browser/cdp.js), against the numbers of
// `report -l -g --format json` of the same recording. Each check comes
// with its control: the same test run on the state before the action,
// which must fail (so a check that cannot fail is caught).
//
//  - the page paints; prints one "timing:" line (ms from navigation start);
//  - the table's self/total/% of every symbol equal the JSON's, and so do
//    the image summary's; control: the domain-filtered JSON differs;
//  - clicking the Symbol header sorts by name (again: reversed); control:
//    the order before the click is not by name;
//  - clicking a domain button keeps only that domain in the table (equal
//    to `report --domain D` JSON) and in the flame graph (its root total is
//    the domain's samples, the other domain's hot function is gone);
//    control: before, the other domain is in both;
//  - clicking a row shows its callers with the JSON's counts; control:
//    before, no caller is shown;
//  - typing in the search box keeps matching rows only; control: before,
//    some rows do not match;
//  - no page/console errors and no network requests; a screenshot.
//
// usage: node check-report.js PAGE.html SHOT.png [--json ALL.json]
//        [--domain NAME --domain-json D.json --other NAME --other-hot FN]
//        [--hot FN --caller FN] [--timing-only] [--wait SECONDS (default 60)]
// Exit 0 pass, 1 a check failed, 3 the browser could not start.
'use strict';
const path = require('path');
const fs = require('fs');
const cdp = require('./cdp.js');

const args = process.argv.slice(2);
if (args.length < 2) {
	console.error('usage: node check-report.js PAGE.html SHOT.png [--json F] [--domain D --domain-json F ' +
		'--other D --other-hot FN] [--hot FN --caller FN] [--timing-only]');
	process.exit(2);
}
const pageUrl = 'file://' + path.resolve(args[0]);
const shot = args[1];
function opt(name, def) {
	const i = args.indexOf(name);
	return i >= 0 ? args[i + 1] : def;
}
const timingOnly = args.includes('--timing-only');
const waitS = parseFloat(opt('--wait', '60'));   // for the page's script to have painted
const readJson = (f) => (f ? JSON.parse(fs.readFileSync(f, 'utf8')) : null);
const J = readJson(opt('--json', null));
const JD = readJson(opt('--domain-json', null));
const dom = opt('--domain', null), other = opt('--other', null), otherHot = opt('--other-hot', null);
const hot = opt('--hot', null), caller = opt('--caller', null);

let failed = 0;
function check(ok, what) {
	console.log((ok ? 'ok   ' : 'FAIL ') + what);
	if (!ok) failed++;
	return ok;
}
// a control: the same test on the state before the action must fail
function control(ok, what) {
	console.log((ok ? 'FAIL control passed: ' : 'ok   control fails: ') + what);
	if (ok) failed++;
}
const watchdog = setTimeout(() => {
	check(false, 'browser session finished within 150 s');
	process.exit(1);
}, 150000);

// The page's label of a JSON row's symbol (the flame graph's: unknown code
// is "[unknown] IMAGE").
const label = (r) => (r.symbol === '[unknown]' ? '[unknown] ' + r.image : r.symbol);
const key = (r) => r.domain + '\t' + r.image + '\t' + label(r);

// Compares the page's table (all rows, every page of it) with a report
// JSON's call-graph entries; returns a list of differences.
async function tableDiffs(page, json) {
	const rows = await page.evaluate(`(() => { const r = window.report; const n = r.shown();
		return { shown: n, rows: r.allRows() }; })()`);
	const got = new Map(rows.rows.map((r) => [r.domain + '\t' + r.image + '\t' + r.symbol, r]));
	const diffs = [];
	const entries = json.callgraph || json.rows.map((r) => ({ ...r, self: r.samples, total: r.samples,
		self_percent: r.percent, total_percent: r.percent }));
	if (rows.shown !== json.matched_samples) diffs.push(`shown ${rows.shown} != matched ${json.matched_samples}`);
	for (const e of entries) {
		const g = got.get(key(e));
		if (!g) { diffs.push('missing ' + key(e)); continue; }
		const sp = 100 * g.self / rows.shown, tp = 100 * g.total / rows.shown;
		if (g.self !== e.self || g.total !== e.total || Math.abs(sp - e.self_percent) > 0.005 ||
		    Math.abs(tp - e.total_percent) > 0.005)
			diffs.push(`${key(e)}: page ${g.self}/${g.total} (${sp.toFixed(4)}%) json ${e.self}/${e.total} (${e.self_percent}%)`);
		got.delete(key(e));
	}
	for (const k of got.keys()) diffs.push('extra row ' + k);
	return diffs;
}

// Every caller and callee of every call-graph entry, as report -g counts them.
async function callDiffs(page, json) {
	const cg = await page.evaluate(`(() => { const r = window.report;
		return ${JSON.stringify(json.callgraph.map((x) => [label(x), x.domain]))}.map((k) => r.calls(r.find(k[0], k[1]))); })()`);
	const bad = [];
	const pairs = (v) => v.map((c) => c.domain + ' ' + label(c) + ' ' + c.samples).sort().join('; ');
	const gp = (v) => v.map((c) => c.domain + ' ' + c.symbol + ' ' + c.samples).sort().join('; ');
	json.callgraph.forEach((x, i) => {
		const g = cg[i];
		if (gp(g.callers) !== pairs(x.callers)) bad.push(`${label(x)} callers: page ${gp(g.callers)} json ${pairs(x.callers)}`);
		if (gp(g.callees) !== pairs(x.callees)) bad.push(`${label(x)} callees: page ${gp(g.callees)} json ${pairs(x.callees)}`);
	});
	return bad;
}

async function imageDiffs(page, json) {
	const imgs = await page.evaluate('window.report.images()');
	const m = new Map(imgs.map((r) => [r.domain + '\t' + r.app + '\t' + r.image, r.samples]));
	const diffs = [];
	for (const r of json.images) {
		const k = r.domain + '\t' + r.application + '\t' + r.image;
		if (m.get(k) !== r.samples) diffs.push(`${k}: page ${m.get(k)} json ${r.samples}`);
		m.delete(k);
	}
	for (const k of m.keys()) diffs.push('extra image ' + k);
	return diffs;
}

const fgExpr = (body) => `(() => { const w = document.getElementById('fgframe').contentWindow;
	const D = JSON.parse(w.document.getElementById('fgdata').textContent); ${body} })()`;

async function run() {
	let page;
	try {
		page = await cdp.open(pageUrl);
	} catch (e) {
		if (e.noBrowser) {
			console.error('cannot start chromium: ' + e.message.split('\n')[0]);
			process.exit(3);
		}
		check(false, 'page opened: ' + e.message.split('\n')[0]);
		process.exit(1);
	}
	try {
		const st = await page.waitFor('window.rpStats && window.rpStats.paintedMs > 0 ? window.rpStats : null', waitS * 1000);
		if (!st) throw new Error(`window.rpStats.paintedMs not set ${waitS} s after load (page script did not run?)`);
		const bytes = fs.statSync(args[0]).size;
		console.log(`timing: bytes=${bytes} nodes=${st.nodes} syms=${st.syms} script_ms=${st.scriptMs.toFixed(1)} ` +
			`fg_build_ms=${st.fgBuildMs.toFixed(1)} ready_ms=${st.readyMs.toFixed(1)} painted_ms=${st.paintedMs.toFixed(1)}` +
			` (script phases: ${Object.entries(st.phases || {}).map(([k, v]) => k + ' ' + v).join(', ')})`);
		const fgOk = await page.evaluate(`!!document.getElementById('fgframe').contentWindow.fg`);
		check(fgOk, 'the flame graph runs in its frame');
		if (fgOk) {
			const w = await page.evaluate(fgExpr(`const r = w.document.querySelector('#fg .f[data-id="0"]');
				return r ? [r.getBoundingClientRect().width, w.document.getElementById('fg').clientWidth] : null;`));
			if (w) check(Math.abs(w[0] - w[1]) < 2, `its root spans the width (${w[0].toFixed(1)} of ${w[1]} px)`);
		}
		if (!timingOnly) await interact(page);
		await page.settle();
		await page.screenshot(shot, { full: true, maxHeight: 1500 });
		console.log('screenshot: ' + shot);
	} catch (e) {
		check(false, 'browser session: ' + e.message.split('\n')[0]);
	}
	check(page.errors.length === 0, 'no page or console errors' + (page.errors.length ? ': ' + page.errors.join('; ') : ''));
	check(page.requests.length === 0, 'no network requests' + (page.requests.length ? ': ' + page.requests.join(' ') : ''));
	await page.close();
	clearTimeout(watchdog);
	process.exit(failed ? 1 : 0);
}

async function interact(page) {
	const nd = await page.evaluate(`document.querySelectorAll('#domains tr.d').length`);
	const want = J ? J.domains.filter((d) => d.samples > 0).length : 0;
	if (J) check(nd === want, `per-domain breakdown: ${nd} domain rows (${want} with samples)`);
	const metaText = await page.evaluate(`document.getElementById('meta').textContent`);
	if (J) check(metaText.includes(J.total_samples.toLocaleString('en-US')), 'header shows the total samples');

	// the table and the image summary against report -l -g --format json
	if (J) {
		let d = await tableDiffs(page, J);
		check(d.length === 0, `table equals report -l -g json (${J.callgraph.length} symbols)` +
			(d.length ? ': ' + d.slice(0, 3).join('; ') : ''));
		d = await imageDiffs(page, J);
		check(d.length === 0, `image summary equals the json's (${J.images.length} rows)` +
			(d.length ? ': ' + d.slice(0, 3).join('; ') : ''));
		if (JD) control((await tableDiffs(page, JD)).length === 0, 'the unfiltered table against the --domain json');
	}

	// sorting by a click on the Symbol header
	const names = () => page.evaluate(`Array.from(document.querySelectorAll('#symtab tbody tr[data-sym] td.sym'), (e) => e.textContent)`);
	const sortedBy = (v, dir) => v.length > 2 && v.every((x, i) => i === 0 || (dir > 0 ? v[i - 1] <= x : v[i - 1] >= x));
	let before = await names();
	control(sortedBy(before, 1), 'the first order is by name');
	let b = await page.clickSel('#symtab th[data-key="symbol"]');
	check(!!b && b.hit, 'the Symbol header is clickable');
	await page.settle();
	let after = await names();
	check(sortedBy(after, 1), `a click on Symbol sorts by name (${after.slice(0, 3).join(', ')}, ...)`);
	await page.clickSel('#symtab th[data-key="symbol"]');
	await page.settle();
	after = await names();
	check(sortedBy(after, -1), `a second click reverses it (${after.slice(0, 3).join(', ')}, ...)`);
	const selfs = () => page.evaluate(`Array.from(document.querySelectorAll('#symtab tbody tr[data-sym] td:first-child'), (e) => +e.textContent.replace(/,/g, ''))`);
	await page.clickSel('#symtab th[data-key="self"]');
	await page.settle();
	const sv = await selfs();
	check(sortedBy(sv, -1) && sv[0] > sv[sv.length - 1], `a click on Self sorts by self samples, largest first (${sv.slice(0, 3).join(', ')}, ...)`);

	// selecting a symbol shows its callers
	if (hot && caller && J) {
		const e = J.callgraph.find((x) => x.symbol === hot);
		const want2 = e && e.callers.find((c) => c.symbol === caller);
		const sym = await page.evaluate(`window.report.find(${JSON.stringify(hot)}, ${JSON.stringify(e ? e.domain : '')})`);
		const callerRows = () => page.evaluate(`Array.from(document.querySelectorAll('#callstab tr.caller'), (r) =>
			({ n: +r.cells[0].textContent.replace(/,/g, ''), name: r.cells[2].firstChild.nextSibling.textContent.trim() }))`);
		control((await callerRows()).some((r) => r.name === caller), `${caller} shown as a caller before a symbol is selected`);
		b = await page.clickSel(`#symtab tbody tr[data-sym="${sym}"] td.sym`);
		check(!!b && b.hit, `${hot}'s row is clickable`);
		await page.settle();
		const cr = await callerRows();
		const got = cr.find((r) => r.name === caller);
		check(!!want2 && !!got && got.n === want2.samples,
			`selecting ${hot} shows caller ${caller} with ${got ? got.n : '-'} samples (json ${want2 ? want2.samples : '-'})`);
		check(cr.length === e.callers.length, `${cr.length} callers shown, json ${e.callers.length}`);
		const bad = await callDiffs(page, J);
		check(bad.length === 0, `callers and callees of all ${J.callgraph.length} symbols equal the json's` +
			(bad.length ? ': ' + bad.slice(0, 2).join(' | ') : ''));
		const hl = await page.evaluate(fgExpr(`return Array.from(w.document.querySelectorAll('#fg .f.m'), (x) => x.textContent);`));
		check(hl.includes(hot), `the flame graph highlights ${hot} (${hl.length} frames)`);
	}

	// the domain filter: table and flame graph together
	if (dom && other) {
		const domRows = () => page.evaluate(`Array.from(new Set(window.report.allRows().map((r) => r.domain)))`);
		const fgState = () => page.evaluate(fgExpr(`return { total: D.total, domains: D.nodes.filter((x, i) => i % 5 === 2).length,
			labels: Array.from(w.document.querySelectorAll('#fg .f'), (x) => x.textContent),
			other: w.fg.find(${JSON.stringify(otherHot || '')}) };`));
		const only = (ds, fg, n) => ds.length === 1 && ds[0] === dom && fg.total === n && fg.other < 0 &&
			!fg.labels.includes(other);
		const n = JD ? JD.matched_samples : -1;
		const loads0 = await page.evaluate('window.report.fgLoads()');
		control(only(await domRows(), await fgState(), n), `only ${dom} in the table and the flame graph before the filter`);
		b = await page.clickSel(`#domfilter button[data-dom="${J.domains.findIndex((x) => x.name === dom)}"]`);
		check(!!b && b.hit, `the ${dom} button is clickable`);
		await page.waitFor(`window.report.fgLoads() > ${loads0}`, 10000);
		await page.settle();
		const ds = await domRows(), fg = await fgState();
		check(only(ds, fg, n), `after the ${dom} filter: table domains [${ds.join(', ')}], flame graph ` +
			`${fg.total} samples (${dom}: ${n}), ${otherHot} ${fg.other < 0 ? 'gone' : 'still there'}, ` +
			`${fg.labels.includes(other) ? other + ' frame still drawn' : 'no ' + other + ' frame'}`);
		if (JD) {
			const d = await tableDiffs(page, JD);
			check(d.length === 0, `the filtered table equals report --domain ${dom} -l -g json` +
				(d.length ? ': ' + d.slice(0, 3).join('; ') : ''));
			const dc = await callDiffs(page, JD);
			check(dc.length === 0, 'the filtered callers and callees equal its json' + (dc.length ? ': ' + dc.slice(0, 2).join(' | ') : ''));
			const di = await imageDiffs(page, JD);
			check(di.length === 0, 'the filtered image summary equals its json' + (di.length ? ': ' + di.slice(0, 3).join('; ') : ''));
		}
	}

	// back to everything
	b = await page.clickSel('#clearfilter');
	check(!!b && b.hit, 'the Clear filters button is clickable');
	await page.settle();
	if (J) check(await page.evaluate('window.report.shown()') === J.matched_samples, 'Clear filters shows all samples again');

	// text search: type into the box like a user
	const rx = hot ? hot.slice(0, 4) : 'a';
	const matchAll = (v) => v.length > 0 && v.every((x) => x.includes(rx));
	control(matchAll(await names()), `every row matches "${rx}" before the search`);
	b = await page.clickSel('#textfilter');
	check(!!b && b.hit, 'the search box is clickable');
	await page.type(rx);
	await page.key('Enter', 'Enter', 13);
	await page.settle();
	const nv = await names();
	check(matchAll(nv), `typing "${rx}" keeps the ${nv.length} matching rows`);
	// the state of the screenshot: everything, the hot function selected
	await page.clickSel('#clearfilter');
	await page.settle();
	if (hot && J) {
		const e = J.callgraph.find((x) => x.symbol === hot);
		const sym = await page.evaluate(`window.report.find(${JSON.stringify(hot)}, ${JSON.stringify(e ? e.domain : '')})`);
		await page.clickSel(`#symtab tbody tr[data-sym="${sym}"] td.sym`);
		await page.settle();
	}
	await page.evaluate('window.scrollTo(0, 0)');
}

run();
