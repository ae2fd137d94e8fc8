// SPDX-License-Identifier: MIT
// domprof flame graph page script, compiled into the binary (see
// mk/flamegraph.mk) and inlined into every page: no network access.
// Reads the JSON in #fgdata: a flat pre-order node list (depth, name,
// kind, domain, samples) rebuilt here into a tree. Draws frames as
// absolutely positioned divs, skipping any frame narrower than half a
// pixel (its samples stay visible as the parent's width), so the number
// of boxes is bounded by the screen, not by the profile.
// The graph stands on its root at the bottom (flamegraph.pl's way) and
// opens with only as many levels as fit in the window under the header,
// so the base and its wide frames are on the first screen however deep a
// few narrow stacks go; frames whose callees are cut there have a dotted
// top, and the "All levels" button draws everything, keeping the base
// where it was on the screen (the window scrolls by what grew above it).
// The bound counts from the zoomed frame, whose ancestors are drawn below
// it as before. docs/flamegraph.md, "The HTML page".
// window.fg exposes zoom/reset/search/levels and window.fgStats the
// timings, for the browser test.
// Differential mode (D.diff, `domprof diff --flamegraph`): each node also
// has its A and B samples (at or below, self), its width is B's samples
// plus what only A has (drawn from A), and frames are coloured by their
// change from A to B: red hotter, blue colder, grey unchanged, hatched
// only in A; a stripe at the bottom of each frame keeps its domain's hue.
(function () {
'use strict';
var t0 = performance.now();
var K_ROOT = 0, K_DOMAIN = 1, K_PROCESS = 2, K_USER = 3, K_KERNEL = 4;
var FRAME_H = 17, MIN_PX = 0.5;
// the fewest levels drawn however small the window, and the room kept
// under the graph for the details line
var MIN_LEVELS = 8, BELOW_PX = 40;
// The graph's data (load() sets them all from one document, so a page
// that embeds the graph can hand it another: window.fg.load).
var D, DF, STRIDE, N, depth, name, kind, dom, total, x, parent, child, sib, self,
	ta, tb, sa, sb, ALL, escCache, colCache, maxChange;
function load(data) {
	D = data;
	DF = D.diff || null;
	STRIDE = DF ? 9 : 5;
	N = D.nodes.length / STRIDE;
	depth = new Int32Array(N); name = new Int32Array(N); kind = new Uint8Array(N);
	dom = new Int32Array(N); total = new Float64Array(N); x = new Float64Array(N);
	parent = new Int32Array(N); child = new Int32Array(N); sib = new Int32Array(N);
	self = new Float64Array(N);
	var last = new Int32Array(N), nextX = new Float64Array(N), path = [];
	ta = DF ? new Float64Array(N) : null; tb = DF ? new Float64Array(N) : null;
	sa = DF ? new Float64Array(N) : null; sb = DF ? new Float64Array(N) : null;
	for (var i = 0; i < N; i++) {
		var o = i * STRIDE, d = D.nodes[o];
		depth[i] = d; name[i] = D.nodes[o + 1]; kind[i] = D.nodes[o + 2];
		dom[i] = D.nodes[o + 3]; total[i] = D.nodes[o + 4];
		if (DF) { ta[i] = D.nodes[o + 5]; tb[i] = D.nodes[o + 6]; sa[i] = D.nodes[o + 7]; sb[i] = D.nodes[o + 8]; }
		self[i] = total[i]; child[i] = -1; sib[i] = -1; last[i] = -1;
		path.length = d;
		var p = d > 0 ? path[d - 1] : -1;
		parent[i] = p;
		if (p >= 0) {
			x[i] = nextX[p]; nextX[p] += total[i]; self[p] -= total[i];
			if (last[p] < 0) child[p] = i; else sib[last[p]] = i;
			last[p] = i;
		}
		nextX[i] = x[i];
		path.push(i);
	}
	ALL = N ? total[0] : 0;
	escCache = new Array(D.names.length);
	colCache = {};
	maxChange = 0;
	if (DF) for (var mi = 1; mi < N; mi++) maxChange = Math.max(maxChange, Math.abs(change(mi)));
	zoomed = 0;
	matches = null;
	frame();
}

// ---- labels, colours ----------------------------------------------------
function label(i) { return D.names[name[i]][0]; }
function image(i) { var m = D.names[name[i]][1]; return m >= 0 ? D.images[m] : ''; }
function esc(s) {
	return s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');
}
function escName(i) {
	var n = name[i];
	if (escCache[n] === undefined) escCache[n] = esc(D.names[n][0]);
	return escCache[n];
}
// host warm (classic flame colours), each guest its own cool hue;
// kernel frames pale and grey, user frames saturated.
var GUEST_HUES = [210, 130, 275, 175, 320, 60];
function domHue(di) { return di === 0 ? 18 : GUEST_HUES[(di - 1) % GUEST_HUES.length]; }
function hash(s) {
	var h = 2166136261;
	for (var j = 0; j < s.length; j++) h = Math.imul(h ^ s.charCodeAt(j), 16777619);
	return h >>> 0;
}
// ---- differential colours ------------------------------------------------
// change: B's share minus A's, in percentage points of each side's total,
// or B - A in samples (absolute); the colour's strength is the change
// against the largest change of any frame.
function change(i) {
	if (DF.absolute) return tb[i] - ta[i];
	return 100 * ((DF.totalB ? tb[i] / DF.totalB : 0) - (DF.totalA ? ta[i] / DF.totalA : 0));
}
function diffColour(i) {
	var t = maxChange > 0 ? change(i) / maxChange : 0;
	t = Math.max(-1, Math.min(1, t));
	if (Math.abs(t) < 0.005) return 'hsl(0,0%,88%)';
	return 'hsl(' + (t > 0 ? 0 : 220) + ',80%,' + (90 - 42 * Math.abs(t)).toFixed(0) + '%)';
}
function diffStyle(i) {
	var c = diffColour(i), s = 'box-shadow:inset 0 -3px 0 hsl(' + domHue(dom[i]) + ',70%,42%);';
	if (!tb[i]) return s + 'background:repeating-linear-gradient(135deg,rgba(255,255,255,.6) 0 3px,transparent 3px 6px),' + c;
	return s + 'background:' + c;
}
function colour(i) {
	var key = name[i] + ':' + kind[i] + ':' + dom[i];
	var c = colCache[key];
	if (c) return c;
	var hue = domHue(dom[i]), v = hash(label(i)), jit = (v % 30) - 15;
	switch (kind[i]) {
	case K_ROOT: c = 'hsl(0,0%,80%)'; break;
	case K_DOMAIN: c = 'hsl(' + hue + ',30%,72%)'; break;
	case K_PROCESS: c = 'hsl(' + hue + ',25%,82%)'; break;
	case K_KERNEL: c = 'hsl(' + (hue + jit / 2) + ',30%,' + (74 + (v >>> 8) % 10) + '%)'; break;
	default: c = 'hsl(' + (hue + jit) + ',85%,' + (55 + (v >>> 8) % 12) + '%)';
	}
	colCache[key] = c;
	return c;
}
function pct(n, of) { return of ? (100 * n / of).toFixed(2) + '%' : '0%'; }

// ---- page frame ---------------------------------------------------------
var fgEl = document.getElementById('fg'), tip = document.getElementById('tip'),
	details = document.getElementById('details'), matchedEl = document.getElementById('matched'),
	searchEl = document.getElementById('search');
// title, subtitle and legend of the current data
function frame() {
	document.getElementById('title').textContent = D.title;
	document.getElementById('subtitle').textContent = D.subtitle +
		(D.subtitle ? ' \u2014 ' : '') + (DF ? 'A ' + DF.totalA + ' samples, B ' + DF.totalB : ALL) + ' samples' +
		(D.event ? ' of ' + D.event : '') + (D.inverted ? ', inverted (callees at the top)' : '');
	legend();
}
function legend() {
	var h = [];
	if (DF) {
		var sw = function (bg, text) { return '<span class="lg"><i style="background:' + bg + '"></i>' + text + '</span>'; };
		h.push(sw('hsl(0,80%,50%)', 'hotter in B than in A'), sw('hsl(220,80%,50%)', 'colder in B'),
			sw('hsl(0,0%,88%)', 'unchanged'), sw('#e600c8', 'search match'),
			sw('repeating-linear-gradient(135deg,rgba(255,255,255,.6) 0 3px,transparent 3px 6px),hsl(220,80%,60%)',
				'only in A (drawn from A)'));
		D.domains.forEach(function (d, di) {
			h.push('<span class="lg"><i style="background:#fff;box-shadow:inset 0 -3px 0 hsl(' + domHue(di) +
				',70%,42%)"></i>stripe: ' + esc(d.name) + '</span>');
		});
		h.push('<span class="lg">A = ' + esc(DF.a) + ' (' + DF.totalA + ' samples), B = ' + esc(DF.b) + ' (' +
			DF.totalB + ' samples); change ' + (DF.absolute ? 'in samples (B \u2212 A)' :
			'in points of each side\u2019s total') + '</span>');
		document.getElementById('legend').innerHTML = h.join('');
		return;
	}
	h.push('<span class="lg"><i style="background:hsl(0,0%,80%)"></i>all; domain and process frames pale</span>' +
		'<span class="lg"><i style="background:#e600c8"></i>search match</span>');
	D.domains.forEach(function (d, di) {
		if (!d.samples) return;
		var hue = domHue(di);
		h.push('<span class="lg"><i style="background:hsl(' + hue + ',85%,60%)"></i>' + esc(d.name) +
			' user</span><span class="lg"><i style="background:hsl(' + hue + ',30%,78%)"></i>' +
			esc(d.name) + ' kernel</span>');
	});
	h.push('<span class="lg">kernel frames in <i style="width:auto;border:0;font-style:italic">italics</i></span>');
	document.getElementById('legend').innerHTML = h.join('');
}

// ---- drawing ------------------------------------------------------------
var zoomed = 0, matches = null, drawn = 0, renderedW = 0;
// allLevels: the "All levels" button's state; levels: the bound of the
// last drawing (0: none); hidden: levels above it that were not drawn
var allLevels = false, levels = 0, hidden = 0;
var levelsEl = document.getElementById('levels');
// The window the reader scrolls: ours, or the page that shows us in a
// frame sized to our height (the HTML report), whose own bar and heading
// take D.viewReserve pixels of it.
function outer() {
	try { if (window.frameElement) return window.parent; } catch (e) { /* another origin: ours */ }
	return window;
}
// the levels that fit in that window under our header
function fitLevels() {
	var vh = outer().innerHeight || 800;
	var above = fgEl.getBoundingClientRect().top + (window.scrollY || 0);
	var n = Math.floor((vh - (+D.viewReserve || 0) - above - BELOW_PX) / FRAME_H);
	return Math.max(MIN_LEVELS, n);
}
// the graph's base (its bottom edge; the top when inverted) in the
// viewport of outer()
function baseY() {
	var r = fgEl.getBoundingClientRect(), y = D.inverted ? r.top : r.bottom;
	var fe = null;
	try { fe = window.frameElement; } catch (e) { /* none */ }
	if (fe) y += fe.getBoundingClientRect().top + fe.clientTop;
	return y;
}
function setAllLevels(on) {
	var y0 = baseY();
	allLevels = !!on;
	render();
	var dy = baseY() - y0;
	if (dy) outer().scrollBy(0, dy);
	return levels;
}
load(JSON.parse(document.getElementById('fgdata').textContent));
// again: the second drawing of one call (see the end)
function render(again) {
	if (!N || !ALL) {
		fgEl.innerHTML = '<p class="empty">No samples match: the profile is empty.</p>';
		fgEl.style.height = '';
		if (levelsEl) levelsEl.hidden = true;
		relayout();
		return;
	}
	var W = fgEl.clientWidth || 1000;
	renderedW = W;
	var zx = x[zoomed], zw = total[zoomed], scale = W / zw;
	var out = [], top = 0, items = [], deepest = 0;
	levels = allLevels ? 0 : fitLevels();
	var last = levels ? depth[zoomed] + levels - 1 : Infinity;   // the deepest level drawn
	// ancestors of the zoomed frame: full width, dimmed
	for (var a = parent[zoomed]; a >= 0; a = parent[a]) items.push(a, 0, W, 1);
	// the zoomed frame and what is wide enough below it
	var st = [zoomed];
	while (st.length) {
		var n = st.pop(), w = total[n] * scale, cut = 0;
		var kids = [];
		for (var c = child[n]; c >= 0; c = sib[c]) {
			if (total[c] * scale < MIN_PX) break; // sorted widest first
			kids.push(c);
		}
		if (depth[n] >= last && kids.length) {
			cut = 1;
			deepest = Math.max(deepest, maxDepth(n, scale));
			kids.length = 0;
		}
		items.push(n, (x[n] - zx) * scale, w, cut ? 2 : 0);
		if (depth[n] > top) top = depth[n];
		for (var k = kids.length - 1; k >= 0; k--) st.push(kids[k]);
	}
	hidden = deepest > top ? deepest - top : 0;
	drawn = items.length / 4;
	for (var j = 0; j < items.length; j += 4) {
		var id = items[j], left = items[j + 1], wd = items[j + 2], dim = items[j + 3];
		var y = D.inverted ? depth[id] * FRAME_H : (top - depth[id]) * FRAME_H;
		var cls = 'f';
		if (dim === 1) cls += ' anc';
		if (dim === 2) cls += ' cut';
		if (matches && matches[id]) cls += ' m';
		if (kind[id] === K_KERNEL) cls += ' k';
		if (DF && !tb[id]) cls += ' gone';
		out.push('<div class="', cls, '" data-id="', id, '" style="left:', left.toFixed(1),
			'px;width:', Math.max(wd - 0.5, 0.5).toFixed(1), 'px;top:', y, 'px;',
			DF ? diffStyle(id) : 'background:' + colour(id), '">', wd > 22 ? escName(id) : '', '</div>');
	}
	fgEl.style.height = ((top + 1) * FRAME_H) + 'px';
	fgEl.classList.toggle('inv', !!D.inverted);   // (a cut frame's mark on the side of its callees)
	fgEl.innerHTML = out.join('');
	if (levelsEl) {
		levelsEl.hidden = !hidden && !allLevels;
		levelsEl.textContent = allLevels ? 'Fewer levels' : 'All levels (' + hidden + ' more)';
	}
	relayout();
	// the new height brought or took away the window's scroll bar: drawn
	// once more at the new width now (not after the resize timer)
	if (again !== true && fgEl.clientWidth !== W) render(true);
}
// the deepest level under n that is wide enough to draw (bounded by N:
// an explicit stack)
function maxDepth(n, scale) {
	var best = depth[n], st = [n];
	while (st.length) {
		var i = st.pop();
		if (depth[i] > best) best = depth[i];
		for (var c = child[i]; c >= 0; c = sib[c]) {
			if (total[c] * scale < MIN_PX) break;
			st.push(c);
		}
	}
	return best;
}
// a page that shows us in a frame fits the frame to our new height
function relayout() {
	if (typeof window.fgLayout === 'function') window.fgLayout();
}

function signed(v, digits) { return (v > 0 ? '+' : v < 0 ? '\u2212' : '\u00b1') + Math.abs(v).toFixed(digits); }
function describeDiff(i) {
	var A = DF.totalA, B = DF.totalB, unit = DF.absolute ? ' samples' : ' points';
	var s = label(i) + '\nA: ' + ta[i] + ' samples (' + pct(ta[i], A) + ')' +
		'\nB: ' + tb[i] + ' samples (' + pct(tb[i], B) + ')' +
		'\nchange: ' + signed(change(i), DF.absolute ? 0 : 2) + unit +
		'\nself: A ' + sa[i] + ' (' + pct(sa[i], A) + '), B ' + sb[i] + ' (' + pct(sb[i], B) + '), change ' +
		(DF.absolute ? signed(sb[i] - sa[i], 0) : signed(100 * ((B ? sb[i] / B : 0) - (A ? sa[i] / A : 0)), 2)) + unit;
	if (!tb[i]) s += '\nonly in A: drawn from A' + (DF.absolute ? '' : ', scaled to B\u2019s total');
	else if (!ta[i]) s += '\nonly in B';
	if (kind[i] >= K_DOMAIN && D.domains[dom[i]]) s += '\ndomain: ' + D.domains[dom[i]].name;
	if (kind[i] >= K_USER) s += '\nimage: ' + image(i) + (kind[i] === K_KERNEL ? ' (kernel)' : ' (user)');
	return s;
}

function describe(i) {
	if (DF) return describeDiff(i);
	var s = label(i) + '\n' + total[i] + ' samples, ' + pct(total[i], ALL) + ' of all';
	if (zoomed && zoomed !== i) s += ', ' + pct(total[i], total[zoomed]) + ' of zoomed';
	s += '\nself: ' + self[i] + ' (' + pct(self[i], ALL) + ')';
	if (kind[i] >= K_DOMAIN && D.domains[dom[i]]) s += '\ndomain: ' + D.domains[dom[i]].name;
	if (kind[i] >= K_USER) s += '\nimage: ' + image(i) + (kind[i] === K_KERNEL ? ' (kernel)' : ' (user)');
	if (levels && depth[i] === depth[zoomed] + levels - 1 && child[i] >= 0)
		s += '\ndeeper frames not drawn: All levels, or click to zoom';
	return s;
}

function zoom(i) {
	if (i < 0 || i >= N) return;
	zoomed = i;
	render();
}

function search(re) {
	if (!re) {
		matches = null;
		matchedEl.textContent = '';
		render();
		return 0;
	}
	var rx;
	try { rx = new RegExp(re); } catch (e) { rx = null; }
	var nameHit = D.names.map(function (nm) { return rx ? rx.test(nm[0]) : nm[0].indexOf(re) >= 0; });
	matches = new Uint8Array(N);
	// share: a matched frame counts with its subtree, once (no double count
	// of recursion or nested matches)
	var sum = 0, st = [0];
	for (var i2 = 0; i2 < N; i2++) if (nameHit[name[i2]]) matches[i2] = 1;
	while (st.length) {
		var n = st.pop();
		if (matches[n]) { sum += DF ? tb[n] : total[n]; continue; }
		for (var c = child[n]; c >= 0; c = sib[c]) st.push(c);
	}
	if (DF) matchedEl.textContent = 'Matched: ' + pct(sum, DF.totalB) + ' of B (' + sum + ' of ' + DF.totalB + ' samples)';
	else matchedEl.textContent = 'Matched: ' + pct(sum, ALL) + ' (' + sum + ' of ' + ALL + ' samples)';
	render();
	return sum;
}

fgEl.addEventListener('click', function (e) {
	var id = e.target.getAttribute && e.target.getAttribute('data-id');
	if (id !== null && id !== undefined) zoom(+id);
});
fgEl.addEventListener('mousemove', function (e) {
	var id = e.target.getAttribute && e.target.getAttribute('data-id');
	if (id === null || id === undefined) { tip.hidden = true; return; }
	var s = describe(+id);
	tip.textContent = s;
	tip.hidden = false;
	var tx = e.clientX + 14, ty = e.clientY + 14;
	if (tx + tip.offsetWidth > window.innerWidth) tx = Math.max(0, e.clientX - tip.offsetWidth - 8);
	if (ty + tip.offsetHeight > window.innerHeight) ty = Math.max(0, e.clientY - tip.offsetHeight - 8);
	tip.style.left = tx + 'px';
	tip.style.top = ty + 'px';
	details.textContent = s.replace(/\n/g, ' \u00b7 ');
});
fgEl.addEventListener('mouseleave', function () { tip.hidden = true; });
document.getElementById('reset').addEventListener('click', function () { zoom(0); });
if (levelsEl) levelsEl.addEventListener('click', function () { setAllLevels(!allLevels); });
document.getElementById('clear').addEventListener('click', function () { searchEl.value = ''; search(''); });
var searchTimer = 0;
searchEl.addEventListener('input', function () {
	clearTimeout(searchTimer);
	searchTimer = setTimeout(function () { search(searchEl.value); }, 120);
});
searchEl.addEventListener('keydown', function (e) {
	if (e.key === 'Enter') { clearTimeout(searchTimer); search(searchEl.value); }
});
document.addEventListener('keydown', function (e) {
	if (e.key === 'Escape') { zoom(0); }
});
// Drawn again when the graph's width or the levels that fit change: a
// window resize, and also
// a scrollbar that appears once the page is taller than the window (no
// resize event for that; the first drawing would stay wider than the box).
var resizeTimer = 0;
function resized() {
	if (fgEl.clientWidth === renderedW && (allLevels || fitLevels() === levels)) return;
	clearTimeout(resizeTimer);
	resizeTimer = setTimeout(render, 100);
}
window.addEventListener('resize', resized);
if (window.ResizeObserver) new ResizeObserver(resized).observe(fgEl);

render();
var stats = {
	nodes: N, treeNodes: D.treeNodes, drawn: drawn,
	scriptMs: performance.now() - t0, readyMs: performance.now(), paintedMs: 0
};
window.fgStats = stats;
window.fg = {
	zoom: zoom, reset: function () { zoom(0); }, search: search,
	find: function (s) { for (var i3 = 0; i3 < N; i3++) if (label(i3) === s) return i3; return -1; },
	drawn: function () { return drawn; }, describe: describe,
	// all levels (true) or those that fit (false), as the button does;
	// returns the bound now drawn (0: none). levels() reads it and how
	// many levels it hides.
	allLevels: setAllLevels,
	levels: function () { return { bound: levels, hidden: hidden, all: allLevels }; },
	// drawn again if the levels that fit changed: for a page that shows
	// us in a frame when its own window's height changes (our window's
	// does not then)
	refit: resized,
	// another document of the same layout (flamegraph_data /
	// flamegraph_diff_data): drawn at once, zoom and search reset
	load: function (data) { load(data); searchEl.value = ''; matchedEl.textContent = ''; render(); },
	node: function (i) {
		var n = { label: label(i), kind: kind[i], depth: depth[i], total: total[i], self: self[i], dom: dom[i],
			domain: D.domains[dom[i]] ? D.domains[dom[i]].name : '' };
		if (DF) { n.a = ta[i]; n.b = tb[i]; n.selfA = sa[i]; n.selfB = sb[i]; n.change = change(i); }
		return n;
	}
};
requestAnimationFrame(function () { setTimeout(function () { stats.paintedMs = performance.now(); }, 0); });
})();
