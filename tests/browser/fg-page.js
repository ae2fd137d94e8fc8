// SPDX-License-Identifier: MIT
// A flame graph page in headless Chromium for the flame graph checks
// (check-flamegraph.js, check-roots.js, check-flamediff.js), on the
// shared driver tests/browser/cdp.js: open() navigates to the page file
// and waits for the page script's "painted" mark (window.fgStats); done()
// judges the page's errors and network requests, closes the browser and
// exits 0 (all checks passed) or 1. A browser that cannot start exits 3
// (the tests skip); nothing may hang: a watchdog fails the run at 150 s.
'use strict';
const path = require('path');
const cdp = require('./cdp');

async function open(file, check) {
	const watchdog = setTimeout(() => {
		check(false, 'browser session finished within 150 s');
		process.exit(1);
	}, 150000);
	let page;
	try {
		page = await cdp.open('file://' + path.resolve(file));
	} catch (e) {
		if (e.noBrowser) {
			console.error('cannot start chromium: ' + e.message.split('\n')[0]);
			process.exit(3);
		}
		throw e;
	}
	page.watchdog = watchdog;
	page.stats = await page.waitFor('window.fgStats && window.fgStats.paintedMs > 0 ? window.fgStats : null', 60000);
	if (!page.stats) throw new Error('window.fgStats.paintedMs not set 60 s after load (page script did not run?)');
	// A scrollbar that appears after the first drawing narrows the graph;
	// the page draws again (ResizeObserver, 100 ms later). Give it 3 s to
	// settle: the width checks then judge the settled page, and a page
	// that never redraws still fails them.
	await page.waitFor(`(function () {
		var f = document.getElementById('fg'), r = document.querySelector('#fg .f[data-id="0"]');
		return !f || !r || Math.abs(r.getBoundingClientRect().width - f.getBoundingClientRect().width) < 2;
	})()`, 3000);
	return page;
}

async function done(page, check, failed) {
	if (page) {
		check(page.errors.length === 0, 'no page or console errors' + (page.errors.length ? ': ' + page.errors.join('; ') : ''));
		check(page.requests.length === 0, 'no network requests' + (page.requests.length ? ': ' + page.requests.join(' ') : ''));
		await page.close();
		clearTimeout(page.watchdog);
	}
	process.exit(failed() || !page ? 1 : 0);
}

module.exports = { open, done };
