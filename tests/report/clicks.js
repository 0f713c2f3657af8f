/* The report page's interactions, checked in headless Chromium (browser.sh adds this script after
 * the page's own): clicks through it and logs "CHECK ok|FAIL what" lines on the console, then
 * "CHECK done". */
"use strict";
(function () {
	const log = function (ok, what) { console.log("CHECK " + (ok ? "ok " : "FAIL ") + what); };
	const $ = function (s, r) { return (r || document).querySelector(s); };
	const $$ = function (s, r) { return Array.from((r || document).querySelectorAll(s)); };
	const later = function (f) { return new Promise(function (res) { setTimeout(function () { res(f()); }, 50); }); };
	async function run() {
		await later(function () {});
		const prof = $(".profile.active");
		log(!$(".mnemo-error"), "no error at load");
		log($$("section.module", prof).length >= 1, "module sections: " + $$("section.module", prof).length);
		const row = $(".src-body .line.has-sites", prof);
		log(!!row, "an annotated line");
		if (row) {
			row.click();
			const panel = $(".site-panel", prof);
			log(panel && !panel.hidden && $$("table", panel).length > 0, "line click shows its sites' rows: " + (panel ? $$("table", panel).length : 0) + " tables");
		}
		const body = $(".src-body.virtual", prof);
		if (body) {
			const before = $(".line", body).dataset.line;
			body.scrollTop += 20000;
			await later(function () {});
			const after = $(".line", body).dataset.line;
			log(before !== after && $$(".line", body).length < 400, "virtual scroll: first row " + before + " -> " + after + ", rows " + $$(".line", body).length);
		}
		const tabs = $$(".tab", prof);
		for (const t of tabs) {
			t.click();
			const sec = $(".pane.active", prof);
			log(sec && (sec.dataset.module || "source") === t.dataset.tab, "tab " + t.dataset.tab + " shows its section");
			const next = $$(".pager button", sec).find(function (b) { return b.textContent.indexOf("next") >= 0 && !b.disabled; });
			if (next) {
				const tb = next.closest(".table-wrap").querySelector("tbody");
				const first = tb.firstChild.textContent;
				next.click();
				log(tb.firstChild.textContent !== first && tb.children.length <= 50, t.dataset.tab + ": next page");
			}
			const th = $("table.data th", sec);
			if (th) {
				const tb = th.closest("table").querySelector("tbody");
				th.click();
				const a = tb.firstChild.textContent;
				th.click();
				log(!!tb.firstChild, t.dataset.tab + ": header sorts (" + a.slice(0, 30) + " / " + tb.firstChild.textContent.slice(0, 30) + ")");
			}
			const more = $$("button.more", sec).find(function (b) { return !b.hidden; });
			if (more) {
				const box = more.parentNode, n = box.children.length;
				more.click();
				log(box.children.length > n, t.dataset.tab + ": show more cards " + n + " -> " + box.children.length);
			}
		}
		const link = $("section.module .site.link", prof);
		if (link) {
			link.click();
			await later(function () {});
			const sel = $(".src-body .line.selected", prof);
			log($(".pane.active", prof).classList.contains("source") && !!sel, "site link opens the source at " + (sel ? sel.dataset.line : "?") + " for " + link.textContent);
		}
		log(!$(".mnemo-error"), "no error after the clicks");
		console.log("CHECK done");
	}
	window.addEventListener("load", function () { run().catch(function (e) { log(false, "exception " + e); }); });
})();
