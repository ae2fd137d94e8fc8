// SPDX-License-Identifier: MIT
// domprof HTML report page script, compiled into the binary (see
// mk/htmlreport.mk) and inlined into every page: no network access.
//
// Reads the JSON in #rpdata (written by src/output/html_report.c,
// layout in docs/report.md): the header, a string table, the symbols
// (four integers each) and the unique stacks as one prefix tree
// (domain -> command -> frames, pre-order, base64 LEB128 varints). Every
// view is computed from that tree under the current filter (domain,
// process, image of the sampled function, text), so the domain
// breakdown, table, image summary, callers/callees and flame graph agree.
//
// The flame graph is the page `domprof flamegraph` writes (its markup,
// style and script, unchanged, from D.fgpage), run in an iframe with the
// filtered tree in that page's own data layout (docs/flamegraph.md).
//
// window.report exposes the state and a few actions for the browser
// test; window.rpStats the timings.
(function () {
'use strict';
var t0 = performance.now();
var phases = {}, tPhase = t0;
function phase(name) { var t = performance.now(); phases[name] = +(t - tPhase).toFixed(1); tPhase = t; }
var D = JSON.parse(document.getElementById('rpdata').textContent);
phase('parse');
var S = D.strs, NSYM = D.syms.length / 4, NDOM = D.domains.length;
var symDom = new Int32Array(NSYM), symImg = new Int32Array(NSYM), symName = new Int32Array(NSYM),
	symFlags = new Uint8Array(NSYM);
for (var s0 = 0; s0 < NSYM; s0++) {
	symDom[s0] = D.syms[4 * s0]; symImg[s0] = D.syms[4 * s0 + 1];
	symName[s0] = D.syms[4 * s0 + 2]; symFlags[s0] = D.syms[4 * s0 + 3];
}
function symLabel(s) { return S[symName[s]]; }
function isKernel(s) { return (symFlags[s] & 1) !== 0; }
function domName(di) { return D.domains[di] ? D.domains[di].name : 'host'; }

// ---- the tree ---------------------------------------------------------------
// depth: 0 domain (val: domain index), 1 command (val: string), 2.. frames
// (val: symbol). Decoded into typed arrays; parent before child, end[i]
// the index after node i's subtree. One pass also gives the unfiltered
// view (the writer sends each node's total): symbol self and total,
// per-domain user/kernel, samples per command and per image, and the
// list of nodes with self samples (the leaves the filters choose from).
var N = D.nodes, NS = S.length;
var depth = new Int32Array(N), val = new Int32Array(N), selfN = new Float64Array(N),
	totN = new Float64Array(N), parent = new Int32Array(N), child = new Int32Array(N),
	sib = new Int32Array(N), end = new Int32Array(N), dom = new Int32Array(N),
	comm = new Int32Array(N), app = new Int32Array(N), leaves = new Int32Array(N), NL = 0;
var symSelf0 = new Float64Array(NSYM), symTotal0 = new Float64Array(NSYM);
var domUser = new Float64Array(NDOM), domKern = new Float64Array(NDOM);
var byComm = new Float64Array(NS), byImg = new Float64Array(NS);
var onPath = new Int32Array(NSYM), pathSym = new Int32Array(64), pathN = new Int32Array(64);
(function decode() {
	var b = atob(D.tree), pos = 0, len = b.length, last = new Int32Array(65), prev = -1, i, k;
	var r = new Float64Array(4), f, c, x, m;
	for (i = 0; i < N && pos < len; i++) {
		// four LEB128 varints; most are one byte (the fast path, inline:
		// this loop runs once per page load, mostly before the JIT's turn)
		for (f = 0; f < 4; f++) {
			c = b.charCodeAt(pos++);
			if (c >= 128) {
				x = c & 127; m = 128;
				do {
					c = pos < len ? b.charCodeAt(pos++) : 0;
					x += (c & 127) * m;
					m *= 128;
				} while (c & 128);
				c = x;
			}
			r[f] = c || 0;   // NaN past the end: 0
		}
		var d = prev + 1 - r[0];
		if (d < 0) d = 0;   // not from our writer: keep it a tree
		if (d >= pathN.length) {
			var a1 = new Int32Array(pathN.length * 2), a2 = new Int32Array(pathN.length * 2),
				a3 = new Int32Array(pathN.length * 2 + 1);
			a1.set(pathN); a2.set(pathSym); a3.set(last); pathN = a1; pathSym = a2; last = a3;
		}
		// close the subtrees this node is not in
		for (k = prev; k >= d; k--) { end[pathN[k]] = i; if (pathSym[k] >= 0) onPath[pathSym[k]]--; }
		var v = r[1], sf = r[2], tt = r[3], p = d > 0 ? pathN[d - 1] : -1;
		depth[i] = d; val[i] = v; selfN[i] = sf; totN[i] = tt;
		child[i] = -1; sib[i] = -1; parent[i] = p;
		// last[d]: the previous child of p (-1: none yet)
		if (prev < d) last[d] = -1;
		if (p >= 0) { if (last[d] < 0) child[p] = i; else sib[last[d]] = i; }
		last[d] = i;
		pathN[d] = i;
		pathSym[d] = -1;
		prev = d;
		// (values out of range are not from our writer: clamped)
		if (d === 0) { dom[i] = v < NDOM ? v : 0; comm[i] = -1; app[i] = -1; continue; }
		dom[i] = dom[p];
		if (d === 1) { comm[i] = v < NS ? v : 0; app[i] = i; continue; }
		comm[i] = comm[p]; app[i] = app[p];
		if (v >= NSYM) val[i] = v = 0;
		pathSym[d] = v;
		if (!onPath[v]) symTotal0[v] += tt;
		onPath[v]++;
		if (sf) {
			symSelf0[v] += sf;
			leaves[NL++] = i;
			byComm[comm[i]] += sf;
			byImg[symImg[v]] += sf;
			if (isKernel(v)) domKern[dom[i]] += sf; else domUser[dom[i]] += sf;
		}
	}
	for (k = prev; k >= 0; k--) end[pathN[k]] = i;
	N = i;
	onPath.fill(0);
})();
phase('decode');

// ---- colours (the flame graph's families: host warm, each guest a cool
// hue; kernel pale, user saturated; see flamegraph.js) -----------------------
var GUEST_HUES = [210, 130, 275, 175, 320, 60];
function domHue(di) { return di === 0 ? 18 : GUEST_HUES[(di - 1) % GUEST_HUES.length]; }
function userCol(di) { return 'hsl(' + domHue(di) + ',85%,60%)'; }
function kernCol(di) { return 'hsl(' + domHue(di) + ',30%,78%)'; }
function esc(s) {
	return String(s).replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');
}
function pct(n, of) { return of ? (100 * n / of).toFixed(2) : '0.00'; }
function num(n) { return String(n).replace(/\B(?=(\d{3})+(?!\d))/g, ','); }
function textRe(t) {
	if (!t) return null;
	try { return new RegExp(t); } catch (e) { return { test: function (x) { return x.indexOf(t) >= 0; } }; }
}

// ---- the filter and what it selects -------------------------------------------
// Unfiltered, the decoded arrays are the view; a filter computes its own
// into the ...F arrays: kept (self samples of the leaves it keeps), incl
// (at or below each node), symbol self and total (once per sample under
// recursion).
var F = { dom: -1, comm: -1, img: -1, text: '' };
var keptF = null, inclF = null, symSelfF = null, symTotalF = null;
var kept = selfN, incl = totN, symSelf = symSelf0, symTotal = symTotal0;
var shown = 0, domShown = new Float64Array(NDOM);
function compute() {
	var i, j, p;
	if (F.dom < 0 && F.comm < 0 && F.img < 0) {
		kept = selfN; incl = totN; symSelf = symSelf0; symTotal = symTotal0;
	} else {
		if (!keptF) {
			keptF = new Float64Array(N); inclF = new Float64Array(N);
			symSelfF = new Float64Array(NSYM); symTotalF = new Float64Array(NSYM);
		}
		kept = keptF; incl = inclF; symSelf = symSelfF; symTotal = symTotalF;
		kept.fill(0);
		for (j = 0; j < NL; j++) {
			i = leaves[j];
			if ((F.dom < 0 || dom[i] === F.dom) && (F.comm < 0 || comm[i] === F.comm) &&
			    (F.img < 0 || symImg[val[i]] === F.img))
				kept[i] = selfN[i];
		}
		incl.set(kept);
		for (i = N - 1; i > 0; i--) if ((p = parent[i]) >= 0) incl[p] += incl[i];
		symSelf.fill(0);
		symTotal.fill(0);
		var plen = 0;
		for (i = 0; i < N; i++) {
			var d = depth[i];
			while (plen > d) { var ps = pathSym[--plen]; if (ps >= 0) onPath[ps]--; }
			if (!incl[i]) { if (end[i] > i) i = end[i] - 1; continue; }   // nothing kept below: skip it
			var s = d >= 2 ? val[i] : -1;
			pathSym[plen++] = s;
			if (s < 0) continue;
			symSelf[s] += kept[i];
			if (!onPath[s]) symTotal[s] += incl[i];
			onPath[s]++;
		}
		while (plen > 0) { var q = pathSym[--plen]; if (q >= 0) onPath[q]--; }
	}
	shown = 0;
	domShown.fill(0);
	for (i = 0; i < N; i = end[i] > i ? end[i] : i + 1) {   // the domain nodes
		shown += incl[i];
		domShown[dom[i]] += incl[i];
	}
}

// Callers and callees of symbol t under the filter: each (caller, t) and
// (t, callee) pair counted once per sample, as the text report's -g.
function calls(t) {
	var callers = new Map(), callees = new Map(), roots = 0;
	// along the current path: how often each caller of t (index s + 1; 0:
	// "no caller") and each callee of t occurs, and what each level added
	var seenIn = new Int32Array(NSYM + 1), seenOut = new Int32Array(NSYM);
	var lvIn = new Int32Array(64), lvOut = new Int32Array(64), plen = 0;
	for (var i = 0; i < N; i++) {
		var d = depth[i];
		while (plen > d) {
			plen--;
			if (lvIn[plen] >= 0) seenIn[lvIn[plen]]--;
			if (lvOut[plen] >= 0) seenOut[lvOut[plen]]--;
		}
		if (plen >= lvIn.length) {
			var a = new Int32Array(lvIn.length * 2), b = new Int32Array(lvIn.length * 2);
			a.set(lvIn); b.set(lvOut); lvIn = a; lvOut = b;
		}
		if (!incl[i]) { if (end[i] > i) i = end[i] - 1; continue; }   // nothing kept below
		lvIn[plen] = -1; lvOut[plen] = -1; plen++;
		if (d < 2) continue;
		var s = val[i], p = parent[i], ps = depth[p] >= 2 ? val[p] : -1;
		if (s === t) {
			if (!seenIn[ps + 1]) {
				if (ps < 0) roots += incl[i];
				else callers.set(ps, (callers.get(ps) || 0) + incl[i]);
			}
			seenIn[ps + 1]++;
			lvIn[plen - 1] = ps + 1;
		}
		if (ps === t) {
			if (!seenOut[s]) callees.set(s, (callees.get(s) || 0) + incl[i]);
			seenOut[s]++;
			lvOut[plen - 1] = s;
		}
	}
	function sorted(m) {
		return Array.from(m.entries()).sort(function (x, y) { return y[1] - x[1] || x[0] - y[0]; });
	}
	return { callers: sorted(callers), callees: sorted(callees), roots: roots };
}

// ---- header -----------------------------------------------------------------
var title = 'domprof report' + (D.file ? ': ' + D.file : '');
document.title = title;
document.getElementById('title').textContent = title;
(function meta() {
	var h = D.host, rows = [];
	function row(k, v) { rows.push('<b>' + esc(k) + '</b><span>' + v + '</span>'); }
	if (h.hostname) row('host', esc(h.hostname + ', Linux ' + (h.release || '?') + ', ' + h.ncpus + ' CPUs, ' + (h.cpu || '?')));
	if (h.cmdline) row('command', esc(h.cmdline));
	row('events', D.events.length ? D.events.map(function (e) {
		return esc(e.name) + (e.freq ? ', sampled at ' + num(e.period) + ' Hz' : ', sample period ' + num(e.period));
	}).join('; ') : '(none recorded)');
	row('samples', num(D.total) + ' total' + (D.matched !== D.total || D.filter ?
		', ' + num(D.matched) + ' kept by the command line\'s filter (' + esc(D.filter || '-') + ')' : '') +
		(D.callchains ? ', with call chains' : ', no call chains (record with -g for callers and a deeper flame graph)'));
	var lost = D.lostPct < 0 ? num(D.lost) + ' or more (not plausible)' : num(D.lost) + ' (' + D.lostPct.toFixed(4) + '%)';
	if (D.lostBy.length) lost += ': ' + D.lostBy.map(function (l) { return num(l[1]) + ' ' + esc(l[0]); }).join(', ');
	if (D.lostPct > 0.01 || D.lostPct < 0) lost = '<span class="warn">' + lost + '; shares are of the samples that were kept</span>';
	row('lost samples', lost);
	var dmg = D.fileWarnings ? '<span class="warn">' + num(D.damagedBytes) + ' bytes damaged or incomplete: ' +
		D.warnings.slice(0, D.fileWarnings).map(esc).join('; ') + '</span>' : 'none';
	row('damage', dmg);
	if (D.treeDropped || D.treeCut)
		row('page limits', '<span class="warn">' + num(D.treeDropped) + ' samples in stacks past the page\'s ' +
			'bound left out; ' + num(D.treeCut) + ' stacks cut to their innermost frames</span>');
	document.getElementById('meta').innerHTML = rows.join('');
	var other = D.warnings.slice(D.fileWarnings);
	if (other.length)
		document.getElementById('warnings').innerHTML = '<details class="warns"><summary>' + other.length +
			' warning' + (other.length > 1 ? 's' : '') + ' (symbols)</summary><ul>' +
			other.map(function (w) { return '<li>' + esc(w) + '</li>'; }).join('') + '</ul></details>';
})();

// ---- per-domain breakdown (whole recording) and the domain buttons --------------
var ALL = 0;
for (var d0 = 0; d0 < NDOM; d0++) ALL += domUser[d0] + domKern[d0];
// The domains listed (table, buttons, legend): those with samples, in
// their order; past MAX_DOMS (a crafted file), the largest, and the one
// filtered by.
var MAX_DOMS = 100;
function listedDomains() {
	var v = [];
	for (var di = 0; di < NDOM; di++) if (domUser[di] + domKern[di]) v.push(di);
	if (v.length <= MAX_DOMS) return v;
	var big = v.slice().sort(function (a, b) { return domUser[b] + domKern[b] - domUser[a] - domKern[a] || a - b; })
		.slice(0, MAX_DOMS);
	if (F.dom >= 0 && big.indexOf(F.dom) < 0) big.push(F.dom);
	return big.sort(function (a, b) { return a - b; });
}
function drawDomains() {
	var el = document.getElementById('domains'), list = listedDomains(), more = 0;
	for (var dm = 0; dm < NDOM; dm++) if (domUser[dm] + domKern[dm]) more++;
	more -= list.length;
	var h = ['<table><thead><tr><th>domain</th><th>kind</th><th class="n">samples</th><th class="n">%</th>' +
		'<th class="n">user</th><th class="n">kernel</th><th>user / kernel</th></tr></thead><tbody>'];
	for (var li = 0; li < list.length; li++) {
		var di = list[li], dd = D.domains[di], u = domUser[di], k = domKern[di], t = u + k;
		h.push('<tr class="d' + (F.dom === di ? ' sel' : '') + '" data-dom="' + di + '"><td><span class="sw" style="background:' +
			userCol(di) + '"></span>' + esc(dd.name) + '</td><td>' + esc(dd.kind) + '</td><td class="n">' + num(t) +
			'</td><td class="n">' + pct(t, ALL) + '</td><td class="n">' + pct(u, t) + '%</td><td class="n">' + pct(k, t) +
			'%</td><td><span class="bar" title="user ' + num(u) + ', kernel ' + num(k) + '"><i style="width:' +
			(t ? 100 * u / t : 0) + '%;background:' + userCol(di) + '"></i><i style="width:' + (t ? 100 * k / t : 0) +
			'%;background:' + kernCol(di) + '"></i></span></td></tr>');
	}
	if (more > 0) h.push('<tr><td colspan="7" class="sub">' + num(more) + ' more domains with fewer samples</td></tr>');
	h.push('</tbody></table>');
	// one domain (or none with samples): the header says it all, no table
	el.innerHTML = NDOM > 1 && h.length > 2 ? h.join('') : '';
	var b = ['<button type="button" data-dom="-1" class="' + (F.dom < 0 ? 'on' : '') + '">all</button>'];
	for (var lj = 0; lj < list.length; lj++) {
		var dj = list[lj];
		b.push('<button type="button" data-dom="' + dj + '" class="' + (F.dom === dj ? 'on' : '') + '">' +
			esc(domName(dj)) + '</button>');
	}
	document.getElementById('domfilter').innerHTML = b.join('');
}
(function legend() {
	var h = [], list = listedDomains();
	for (var li = 0; li < list.length; li++) {
		var di = list[li];
		h.push('<span class="lg"><i style="background:' + userCol(di) + '"></i>' + esc(domName(di)) +
			' user</span><span class="lg"><i style="background:' + kernCol(di) + '"></i>' + esc(domName(di)) +
			' kernel (italic)</span>');
	}
	h.push('<span class="lg"><i style="background:#dde8ff"></i>selected</span>');
	document.getElementById('legend').innerHTML = h.join('');
})();

// ---- process and image filters ---------------------------------------------------
(function selects() {
	function sums(v) {
		var m = new Map();
		for (var i = 0; i < NS; i++) if (v[i]) m.set(i, v[i]);
		return m;
	}
	function fill(id, m, what) {
		var v = Array.from(m.entries()).sort(function (a, b) { return b[1] - a[1] || (S[a[0]] < S[b[0]] ? -1 : 1); });
		// the 500 largest (a select measures every option's text)
		var h = ['<option value="-1">all ' + what + ' (' + v.length + (v.length > 500 ? ', the 500 largest listed' : '') +
			')</option>'];
		for (var j = 0; j < v.length && j < 500; j++)
			h.push('<option value="' + v[j][0] + '">' + esc(S[v[j][0]]) + ' (' + num(v[j][1]) + ')</option>');
		document.getElementById(id).innerHTML = h.join('');
	}
	fill('procfilter', sums(byComm), 'processes');
	fill('imgfilter', sums(byImg), 'images');
})();

// ---- symbol table -----------------------------------------------------------------
var COLS = [
	{ key: 'self', title: 'Self', num: true },
	{ key: 'selfp', title: 'Self %', num: true },
	{ key: 'total', title: 'Total', num: true, cg: true },
	{ key: 'totalp', title: 'Total %', num: true, cg: true },
	{ key: 'domain', title: 'Domain' },
	{ key: 'image', title: 'Image' },
	{ key: 'symbol', title: 'Symbol' },
].filter(function (c) { return !c.cg || D.callchains; });
var sortKey = 'self', sortAsc = false, rows = [], limit = 0, PAGE = 100, selected = -1;
function cmpRows(a, b) {
	var r = 0;
	switch (sortKey) {
	case 'self': case 'selfp': r = symSelf[a] - symSelf[b]; break;
	case 'total': case 'totalp': r = symTotal[a] - symTotal[b]; break;
	case 'domain': r = symDom[a] - symDom[b]; break;
	case 'image': r = S[symImg[a]] < S[symImg[b]] ? -1 : S[symImg[a]] > S[symImg[b]] ? 1 : 0; break;
	default: r = symLabel(a) < symLabel(b) ? -1 : symLabel(a) > symLabel(b) ? 1 : 0;
	}
	if (!sortAsc) r = -r;
	// ties: samples desc, then the order of the symbol list
	return r || symSelf[b] - symSelf[a] || symTotal[b] - symTotal[a] || a - b;
}
function buildRows() {
	var re = textRe(F.text);
	rows = [];
	for (var s = 0; s < NSYM; s++) {
		if (!symSelf[s] && !symTotal[s]) continue;
		if (F.img >= 0 && symImg[s] !== F.img) continue;
		if (re && !re.test(symLabel(s))) continue;
		rows.push(s);
	}
	rows.sort(cmpRows);
	limit = PAGE;
}
function rowHtml(s) {
	var k = isKernel(s), di = symDom[s];
	var h = '<tr data-sym="' + s + '" class="' + (k ? 'k' : 'u') + (s === selected ? ' sel' : '') + '">';
	for (var c = 0; c < COLS.length; c++) {
		switch (COLS[c].key) {
		case 'self': h += '<td class="num">' + num(symSelf[s]) + '</td>'; break;
		case 'selfp': h += '<td class="num">' + pct(symSelf[s], shown) + '</td>'; break;
		case 'total': h += '<td class="num">' + num(symTotal[s]) + '</td>'; break;
		case 'totalp': h += '<td class="num">' + pct(symTotal[s], shown) + '</td>'; break;
		case 'domain': h += '<td>' + esc(domName(di)) + '</td>'; break;
		case 'image': h += '<td>' + esc(S[symImg[s]]) + '</td>'; break;
		default:
			h += '<td class="sym"><span class="sw" style="background:' + (k ? kernCol(di) : userCol(di)) + '"></span>' +
				esc(symLabel(s)) + '</td>';
		}
	}
	return h + '</tr>';
}
function drawTable() {
	var head = COLS.map(function (c) {
		return '<th data-key="' + c.key + '" class="' + (c.num ? 'num' : '') +
			(c.key === sortKey ? ' sorted' + (sortAsc ? ' asc' : '') : '') + '">' + c.title + '</th>';
	}).join('');
	document.querySelector('#symtab thead tr').innerHTML = head;
	var n = Math.min(limit, rows.length), h = [];
	for (var i = 0; i < n; i++) h.push(rowHtml(rows[i]));
	if (!rows.length) h.push('<tr><td colspan="' + COLS.length + '" class="hint">No symbol matches the filter.</td></tr>');
	document.querySelector('#symtab tbody').innerHTML = h.join('');
	document.getElementById('symcount').textContent = '(' + num(rows.length) + ' symbols' +
		(n < rows.length ? ', the first ' + num(n) + ' shown' : '') + '; % of the ' + num(shown) + ' samples shown)';
	var more = document.getElementById('more');
	more.hidden = n >= rows.length;
	more.textContent = 'Show ' + num(Math.min(PAGE * 4, rows.length - n)) + ' more';
}

// ---- image summary (the text report's default view) -------------------------------
function imageApps() {
	var apps = new Map();
	for (var j = 0; j < NL; j++) {
		var i = leaves[j], n = kept[i];
		if (!n) continue;
		var a = apps.get(app[i]);
		if (!a) { a = { dom: dom[i], comm: comm[i], n: 0, imgs: new Map() }; apps.set(app[i], a); }
		a.n += n;
		var im = symImg[val[i]];
		a.imgs.set(im, (a.imgs.get(im) || 0) + n);
	}
	return Array.from(apps.values()).sort(function (x, y) { return y.n - x.n || x.dom - y.dom || x.comm - y.comm; });
}
function drawImages() {
	var v = imageApps(), h = [];
	// few rows: the page stays quick to lay out; a process filter shows its images in full
	var APPS = 15, IMGS = F.comm >= 0 ? 200 : 8;
	for (var j = 0; j < v.length && j < APPS; j++) {
		var a2 = v[j];
		h.push('<tr class="app"><td class="num">' + num(a2.n) + '</td><td class="num">' + pct(a2.n, shown) +
			'%</td><td>' + esc(domName(a2.dom)) + '</td><td><span class="sw" style="background:' + userCol(a2.dom) +
			'"></span>' + esc(S[a2.comm]) + '</td></tr>');
		var ims = Array.from(a2.imgs.entries()).sort(function (x, y) { return y[1] - x[1]; });
		for (var k = 0; k < ims.length && k < IMGS; k++)
			h.push('<tr><td class="num">' + num(ims[k][1]) + '</td><td class="num">' + pct(ims[k][1], a2.n) +
				'%</td><td></td><td class="ind">' + esc(S[ims[k][0]]) + '</td></tr>');
		if (ims.length > IMGS) h.push('<tr><td colspan="3"></td><td class="ind hint">' + (ims.length - IMGS) + ' more images</td></tr>');
	}
	if (v.length > APPS) h.push('<tr><td colspan="4" class="hint">' + (v.length - APPS) +
		' more applications (choose a process above to see one)</td></tr>');
	if (!v.length) h.push('<tr><td class="hint">No samples match the filter.</td></tr>');
	document.querySelector('#imgtab tbody').innerHTML = h.join('');
}

// ---- callers / callees of the selected symbol --------------------------------------
function drawCalls() {
	var el = document.getElementById('callsbody');
	if (selected < 0) { el.innerHTML = '<p class="hint">Select a symbol in the table.</p>'; return; }
	var t = selected, c = calls(t), tot = symTotal[t] || 1;
	function line(s, n, cls) {
		return '<tr class="' + cls + '" data-sym="' + s + '"><td class="num">' + num(n) + '</td><td class="num">' +
			pct(n, tot) + '%</td><td><span class="sw" style="background:' + (isKernel(s) ? kernCol(symDom[s]) : userCol(symDom[s])) +
			'"></span>' + esc(symLabel(s)) + ' <span class="sub">' + esc(S[symImg[s]]) + '</span></td></tr>';
	}
	var h = ['<table class="calls" id="callstab"><tbody>'];
	h.push('<tr class="hd"><td colspan="3">callers (samples, % of its total)</td></tr>');
	c.callers.forEach(function (e) { h.push(line(e[0], e[1], 'c caller')); });
	if (c.roots) h.push('<tr><td class="num">' + num(c.roots) + '</td><td class="num">' + pct(c.roots, tot) +
		'%</td><td class="sub">(outermost frame: no caller)</td></tr>');
	if (!c.callers.length && !c.roots) h.push('<tr><td colspan="3" class="hint">none</td></tr>');
	h.push('<tr class="me" data-sym="' + t + '"><td class="num">' + num(symTotal[t]) + '</td><td class="num">' +
		pct(symTotal[t], shown) + '%</td><td>' + esc(symLabel(t)) + ' <span class="sub">' + esc(domName(symDom[t])) +
		', ' + esc(S[symImg[t]]) + ', self ' + num(symSelf[t]) + '</span></td></tr>');
	h.push('<tr class="hd"><td colspan="3">callees</td></tr>');
	c.callees.forEach(function (e) { h.push(line(e[0], e[1], 'c callee')); });
	if (!c.callees.length) h.push('<tr><td colspan="3" class="hint">none</td></tr>');
	h.push('</tbody></table>');
	if (!D.callchains) h.push('<p class="hint">The recording has no call chains (record with -g).</p>');
	el.innerHTML = h.join('');
}

// ---- the flame graph of the filter ---------------------------------------------------
// D.fgpage is the flame graph page with empty data: its #fgdata document
// gives every field the flame graph expects; nodes, names, images, total
// and the node counts are filled in here, the rest is kept as written.
var fgFrame = document.getElementById('fgframe');
var FG_OPEN = '\x3cscript type="application/json" id="fgdata">';  // (\x3c: no tag in a script)
var fgAt = D.fgpage.indexOf(FG_OPEN), fgEnd = D.fgpage.indexOf('<\/script>', fgAt);
var fgBase = JSON.parse(D.fgpage.slice(fgAt + FG_OPEN.length, fgEnd));
var fgSym = [], fgBuildMs = 0, fgLoads = 0;
function fgData() {
	var tb = performance.now();
	var minS = Math.max(1, Math.ceil(shown * 1e-4));   // flamegraph_html's default
	var names = [['all', -1]], images = [], imgIx = new Map(), nameOf = new Map();
	var nodes = [0, 0, 0, 0, shown];
	fgSym = [-1];
	function nameIx(i) {
		var d = depth[i], key = d >= 2 ? 's' + val[i] : d + ':' + val[i];
		var n = nameOf.get(key);
		if (n !== undefined) return n;
		var im = -1;
		if (d >= 2) {
			var si = symImg[val[i]];
			im = imgIx.get(si);
			if (im === undefined) { im = images.length; images.push(S[si]); imgIx.set(si, im); }
		}
		names.push([d === 0 ? domName(val[i]) : d === 1 ? S[val[i]] : symLabel(val[i]), im]);
		nameOf.set(key, names.length - 1);
		return names.length - 1;
	}
	function kids(i) {
		var v = [];
		for (var c = child[i]; c >= 0; c = sib[c]) if (incl[c] >= minS) v.push(c);
		return v.sort(function (a, b) { return incl[b] - incl[a] || a - b; });
	}
	// the top level: every domain node (siblings in the tree)
	var st = [], top = [];
	for (var r = 0; r < N; r++) if (depth[r] === 0 && incl[r] >= minS) top.push(r);
	top.sort(function (a, b) { return incl[b] - incl[a] || a - b; });
	for (var t = top.length - 1; t >= 0; t--) st.push(top[t]);
	while (st.length) {
		var i = st.pop(), d = depth[i];
		var kind = d === 0 ? 1 : d === 1 ? 2 : (isKernel(val[i]) ? 4 : 3);
		nodes.push(d + 1, nameIx(i), kind, dom[i], incl[i]);
		fgSym.push(d >= 2 ? val[i] : -1);
		var k = kids(i);
		for (var j = k.length - 1; j >= 0; j--) st.push(k[j]);
	}
	var o = {};
	for (var key in fgBase) o[key] = fgBase[key];
	o.nodes = nodes; o.names = names; o.images = images;
	o.total = shown; o.minSamples = minS; o.kept = nodes.length / 5; o.treeNodes = N;
	o.title = 'Flame graph';
	// the flame graph fits its first levels into our window: not under our
	// sticky filter bar and its section's heading
	o.viewReserve = document.getElementById('filters').offsetHeight +
		document.querySelector('#flame h2').offsetHeight + 16;
	o.subtitle = filterDesc();
	o.domains = (fgBase.domains || []).map(function (x, di) {
		var y = {};
		for (var kk in x) y[kk] = x[kk];
		y.samples = domShown[di] || 0;
		return y;
	});
	fgBuildMs = performance.now() - tb;
	return o;
}
function filterDesc() {
	var f = [];
	if (F.dom >= 0) f.push('domain ' + domName(F.dom));
	if (F.comm >= 0) f.push('process ' + S[F.comm]);
	if (F.img >= 0) f.push('image ' + S[F.img]);
	return f.length ? 'filter: ' + f.join(', ') : 'all domains';
}
// fresh: the frame was just written (nothing highlighted yet: a search
// for nothing would only draw it again)
function fgHighlight(fresh) {
	var w = fgFrame.contentWindow;
	if (!w || !w.fg) return;
	var re = selected >= 0 ? '^' + symLabel(selected).replace(/[.*+?^${}()|[\]\\]/g, '\\$&') + '$' : F.text;
	if (fresh && !re) return;
	w.fg.search(re);
	var se = w.document.getElementById('search');
	if (se) se.value = re;
}
// The page goes into the frame with document.write: parsed and its script
// run at once, with no navigation to wait for (a srcdoc would load
// asynchronously). document.open() clears what the previous page's script
// left (its listeners on the frame's window and document).
function drawFlame() {
	var json = JSON.stringify(fgData()).replace(/</g, '\\u003c');
	document.getElementById('fgsub').textContent = '(' + filterDesc() + '; ' + num(shown) + ' samples)';
	var doc = fgFrame.contentDocument;
	if (!doc) return;
	doc.open();
	doc.write(D.fgpage.slice(0, fgAt + FG_OPEN.length) + json + D.fgpage.slice(fgEnd));
	doc.close();
	fgReady();
}
// the frame as tall as its page (it draws the levels that fit in our
// window; with "All levels" the deepest stack, 512 frames, ~9000 px; the
// roots are at the bottom, so nothing may be cut there). The page calls
// it (window.fgLayout) after each drawing.
function fgFit() {
	var doc = fgFrame.contentDocument;
	if (doc && doc.documentElement)
		fgFrame.style.height = Math.min(Math.max(doc.documentElement.scrollHeight, 160), 20000) + 'px';
}
function fgReady() {
	var w = fgFrame.contentWindow, doc = fgFrame.contentDocument;
	if (!w || !doc || !w.fg) return;
	fgLoads++;
	w.fgLayout = fgFit;
	fgHighlight(true);
	fgFit();
	// a click on a frame zooms (the flame graph's own handler) and selects its symbol here
	doc.getElementById('fg').addEventListener('click', function (e) {
		var id = e.target.getAttribute && e.target.getAttribute('data-id');
		if (id === null || id === undefined) return;
		var s = fgSym[+id];
		if (s !== undefined && s >= 0) select(s, false);
	});
}

// the flame graph draws the levels that fit in our window: a new height fits others
window.addEventListener('resize', function () {
	var w = fgFrame.contentWindow;
	if (w && w.fg && w.fg.refit) w.fg.refit();
});

// ---- actions --------------------------------------------------------------------------
function refresh() {
	phase('setup');
	compute();
	phase('compute');
	buildRows();
	if (selected >= 0 && !symTotal[selected] && !symSelf[selected]) selected = -1;
	phase('rows');
	drawDomains();
	drawTable();
	drawImages();
	drawCalls();
	phase('draw');
	drawFlame();
	phase('flame');
	var sh = document.getElementById('shown');
	sh.textContent = num(shown) + ' of ' + num(ALL) + ' samples (' + pct(shown, ALL) + '%)';
}
function setFilter(f) {
	var samples = false;   // does it change which samples count, or only the rows?
	for (var k in f) {
		if (k !== 'text' && F[k] !== f[k]) samples = true;
		F[k] = f[k];
	}
	document.getElementById('procfilter').value = String(F.comm);
	document.getElementById('imgfilter').value = String(F.img);
	var tf = document.getElementById('textfilter');
	if (tf.value !== F.text) tf.value = F.text;
	if (samples) {
		refresh();
		return;
	}
	// the text chooses rows and what the flame graph highlights: no recount
	buildRows();
	drawTable();
	fgHighlight(false);
}
function select(s, scroll) {
	selected = s;
	var trs = document.querySelectorAll('#symtab tbody tr');
	for (var i = 0; i < trs.length; i++) trs[i].classList.toggle('sel', +trs[i].getAttribute('data-sym') === s);
	drawCalls();
	fgHighlight();
	if (scroll) {
		var tr = document.querySelector('#symtab tbody tr[data-sym="' + s + '"]');
		if (tr) tr.scrollIntoView({ block: 'nearest' });
	}
}
document.getElementById('domfilter').addEventListener('click', function (e) {
	var b = e.target.closest('button');
	if (b) setFilter({ dom: +b.getAttribute('data-dom') });
});
document.getElementById('domains').addEventListener('click', function (e) {
	var tr = e.target.closest('tr.d');
	if (tr) setFilter({ dom: F.dom === +tr.getAttribute('data-dom') ? -1 : +tr.getAttribute('data-dom') });
});
document.getElementById('procfilter').addEventListener('change', function (e) { setFilter({ comm: +e.target.value }); });
document.getElementById('imgfilter').addEventListener('change', function (e) { setFilter({ img: +e.target.value }); });
var textTimer = 0;
document.getElementById('textfilter').addEventListener('input', function (e) {
	clearTimeout(textTimer);
	textTimer = setTimeout(function () { setFilter({ text: e.target.value }); }, 150);
});
document.getElementById('textfilter').addEventListener('keydown', function (e) {
	if (e.key === 'Enter') { clearTimeout(textTimer); setFilter({ text: e.target.value }); }
});
document.getElementById('clearfilter').addEventListener('click', function () {
	selected = -1;
	setFilter({ dom: -1, comm: -1, img: -1, text: '' });
	drawCalls();
});
document.querySelector('#symtab thead').addEventListener('click', function (e) {
	var th = e.target.closest('th');
	if (!th) return;
	var k = th.getAttribute('data-key');
	if (k === sortKey) sortAsc = !sortAsc;
	else { sortKey = k; sortAsc = !(COLS.filter(function (c) { return c.key === k; })[0] || {}).num; }
	rows.sort(cmpRows);
	drawTable();
});
document.querySelector('#symtab tbody').addEventListener('click', function (e) {
	var tr = e.target.closest('tr[data-sym]');
	if (tr) select(+tr.getAttribute('data-sym'), false);
});
document.getElementById('callsbody').addEventListener('click', function (e) {
	var tr = e.target.closest('tr.c[data-sym]');
	if (tr) select(+tr.getAttribute('data-sym'), true);
});
document.getElementById('more').addEventListener('click', function () {
	limit += PAGE * 4;
	drawTable();
});

function rowObj(s) {
	return { sym: s, self: symSelf[s], total: symTotal[s], domain: domName(symDom[s]),
		image: S[symImg[s]], symbol: symLabel(s) };
}

var stats = { nodes: N, syms: NSYM, scriptMs: 0, readyMs: 0, paintedMs: 0, fgBuildMs: 0, phases: phases };
window.rpStats = stats;
refresh();
stats.scriptMs = performance.now() - t0;
stats.readyMs = performance.now();
stats.fgBuildMs = fgBuildMs;
// painted: the first frame after the page's and the flame graph's scripts ran
requestAnimationFrame(function () { setTimeout(function () { stats.paintedMs = performance.now(); }, 0); });
window.report = {
	filter: function () { return Object.assign({}, F); },
	setFilter: setFilter, select: select,
	selected: function () { return selected; },
	shown: function () { return shown; },
	sort: function () { return { key: sortKey, asc: sortAsc }; },
	// the table as shown: [{sym, self, total, domain, image, symbol}]
	rows: function () { return rows.slice(0, limit).map(rowObj); },
	allRows: function () { return rows.map(rowObj); },
	// the image summary: [{domain, app, image, samples}]
	images: function () {
		var v = [];
		imageApps().forEach(function (a) {
			a.imgs.forEach(function (n, im) { v.push({ domain: domName(a.dom), app: S[a.comm], image: S[im], samples: n }); });
		});
		return v;
	},
	find: function (label, domain) {
		for (var s = 0; s < NSYM; s++)
			if (symLabel(s) === label && (domain === undefined || domName(symDom[s]) === domain)) return s;
		return -1;
	},
	calls: function (s) {
		var c = calls(s);
		function named(v) { return v.map(function (e) { return { symbol: symLabel(e[0]), domain: domName(symDom[e[0]]), samples: e[1] }; }); }
		return { callers: named(c.callers), callees: named(c.callees), roots: c.roots };
	},
	fgLoads: function () { return fgLoads; },
};
})();
