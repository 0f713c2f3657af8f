/*
 * Mnemo HTML report: the page script.  `mnemo report --html` embeds it verbatim after the data
 * (the JSON script element #mnemo-data, format "mnemo-html/1", tools/html/html.c), so this file
 * must never hold a closing tag, a comment opener or a script opener in its text.
 * It builds every element with createElement/createElementNS and textContent/setAttribute only:
 * every string of the data (file names, function names, source text) comes from the profiled
 * program, so none is ever parsed as markup.  Large profiles: only the first page of a table and
 * the first cards of a list are built at load; the rest when asked for.
 */
"use strict";
(function () {
	const SVGNS = "http://www.w3.org/2000/svg";
	const PAGE = 50;      /* table rows per page */
	const CARDS = 20;     /* cards (and so graphs) drawn at load, and per "more" click */
	const VIRTUAL = 5000; /* source files longer than this render only their visible lines */
	const LINE_PX = 18;   /* a source row's height: fixed, as virtualization needs it */
	const DEBUG = /[?&]debug\b/.test(location.search); /* report.html?debug: timings on the console */

	/* ---------- errors: visible on the page, and on the console for the browser tests ---------- */
	function showError(msg) {
		try {
			const d = document.createElement("div");
			d.className = "mnemo-error";
			d.textContent = "Report script error: " + msg;
			(document.getElementById("mnemo-app") || document.body).prepend(d);
		} catch (e) { /* nothing more can be done */ }
	}
	window.onerror = function (msg, src, line, col, err) {
		showError(String(msg) + (line ? " (line " + line + ")" : ""));
		console.error("mnemo report:", err || msg);
		return false;
	};
	window.addEventListener("unhandledrejection", function (ev) {
		showError(String(ev.reason));
		console.error("mnemo report:", ev.reason);
	});

	/* ---------- DOM helpers ---------- */
	/* el("div", {class: "x", title: "y"}, child, "text", ...): attributes never come from a key
	 * named by the data, and no on* attribute or URL is ever set. */
	function el(tag, attrs) {
		const e = document.createElement(tag);
		setAttrs(e, attrs);
		for (let i = 2; i < arguments.length; i++)
			add(e, arguments[i]);
		return e;
	}
	function svg(tag, attrs) {
		const e = document.createElementNS(SVGNS, tag);
		setAttrs(e, attrs);
		for (let i = 2; i < arguments.length; i++)
			add(e, arguments[i]);
		return e;
	}
	function setAttrs(e, attrs) {
		if (!attrs)
			return;
		for (const k of Object.keys(attrs)) {
			if (/^on/i.test(k) || k === "href" || k === "src")
				throw new Error("refusing attribute " + k);
			if (attrs[k] !== null && attrs[k] !== undefined && attrs[k] !== false)
				e.setAttribute(k, String(attrs[k]));
		}
	}
	function add(e) {
		for (let i = 1; i < arguments.length; i++)
			add1(e, arguments[i]);
	}
	function add1(e, c) {
		if (c === null || c === undefined || c === false)
			return;
		if (Array.isArray(c))
			c.forEach(function (x) { add1(e, x); });
		else if (typeof c === "object")
			e.appendChild(c);
		else
			e.appendChild(document.createTextNode(String(c)));
	}
	function title(e, text) {
		e.setAttribute("title", text);
		return e;
	}

	/* ---------- numbers and colours ---------- */
	const isNum = function (v) { return typeof v === "number" && isFinite(v); };
	function fmtInt(v) {
		return Math.round(v).toLocaleString("en-US");
	}
	function fmtNum(v) {
		if (!isNum(v))
			return v === null || v === undefined ? "" : String(v);
		if (Number.isInteger(v))
			return fmtInt(v);
		const a = Math.abs(v);
		if (a !== 0 && (a < 1e-3 || a >= 1e7))
			return v.toExponential(2);
		return String(Number(v.toPrecision(4)));
	}
	/* A count: a number, or a big integer written as its digits (exact, with separators). */
	function fmtCount(v) {
		if (typeof v === "string" && /^-?\d+$/.test(v))
			return v.replace(/\B(?=(\d{3})+$)/g, ",");
		return isNum(v) ? fmtInt(v) : "0";
	}
	function fmtPct(v) {
		return isNum(v) ? (v * 100).toFixed(v >= 0.1 ? 1 : 2) + "%" : String(v);
	}
	function hex(v) {
		try {
			return "0x" + BigInt(v).toString(16);
		} catch (e) {
			return String(v);
		}
	}
	/* The double (width 64) or float (32: the low bits) whose bits are v, shortest round trip. */
	function fpNumber(v, width) {
		try {
			const d = new DataView(new ArrayBuffer(8));
			d.setBigUint64(0, BigInt(v));
			const x = width === 32 ? d.getFloat32(4) : d.getFloat64(0);
			if (Number.isNaN(x))
				return "nan";
			if (!Number.isFinite(x))
				return x < 0 ? "-inf" : "inf";
			return width === 32 ? shortFloat(x) : String(x);
		} catch (e) {
			return String(v);
		}
	}
	/* A float's shortest decimal that reads back as the same float. */
	function shortFloat(x) {
		for (let p = 1; p <= 9; p++) {
			const t = Number(x.toPrecision(p));
			if (Math.fround(t) === x)
				return String(t);
		}
		return String(x);
	}
	/* A sequential heat scale (ColorBrewer YlOrRd), t in 0..1. */
	const HEAT = [[255, 255, 204], [254, 217, 118], [253, 141, 60], [227, 26, 28], [128, 0, 38]];
	function heat(t) {
		t = Math.max(0, Math.min(1, isNum(t) ? t : 0)) * (HEAT.length - 1);
		const i = Math.min(HEAT.length - 2, Math.floor(t)), f = t - i;
		const c = HEAT[i].map(function (x, k) { return Math.round(x + (HEAT[i + 1][k] - x) * f); });
		return "rgb(" + c.join(",") + ")";
	}
	function ink(t) {
		return t > 0.55 ? "#fff" : "#222";
	}
	/* Log scale for counts spanning decades: 1 -> small, max -> 1. */
	function logScale(v, max) {
		return v > 0 && max > 0 ? Math.log(1 + v) / Math.log(1 + max) : 0;
	}

	/* ---------- sites ---------- */
	function siteColumn(name) {
		const n = name.length;
		return name === "site" || name === "src" || name === "dst" || name === "loop" ||
		       name === "callers" || name === "context" || (n > 5 && name.endsWith("_site")) ||
		       (n > 4 && name.endsWith("_via")) || (n > 8 && name.endsWith("_context"));
	}

	/* Per profile: site texts, and the files shortened to what tells them apart. */
	function Sites(root) {
		this.sites = root.sites || {};
		this.units = root.units || null;
		const dirs = new Set();
		for (const id in this.sites) {
			const f = this.sites[id].file;
			if (f)
				dirs.add(f.slice(0, f.lastIndexOf("/") + 1));
		}
		this.prefix = commonPrefix(Array.from(dirs));
	}
	function commonPrefix(list) {
		if (!list.length)
			return "";
		let p = list[0];
		/* Folder by folder; an absolute and a relative path share nothing ("/" must go too). */
		for (const s of list)
			while (p && !s.startsWith(p))
				p = p.length > 1 ? p.slice(0, p.lastIndexOf("/", p.length - 2) + 1) : "";
		return p;
	}
	/* A file as the page shows it: its basename when no other file of the profile has it, else
	 * its path less the folders every file shares. */
	Sites.prototype.file = function (f) {
		if (!f)
			return f;
		if (!this.short) {
			const count = new Map();
			this.short = new Map();
			for (const id in this.sites) {
				const g = this.sites[id].file;
				if (g && !this.short.has(g)) {
					this.short.set(g, null);
					const b = g.slice(g.lastIndexOf("/") + 1);
					count.set(b, (count.get(b) || 0) + 1);
				}
			}
			for (const g of this.short.keys()) {
				const b = g.slice(g.lastIndexOf("/") + 1);
				this.short.set(g, count.get(b) === 1 ? b : (this.prefix && g.startsWith(this.prefix) ? g.slice(this.prefix.length) : g));
			}
		}
		return this.short.get(f) || (this.prefix && f.startsWith(this.prefix) ? f.slice(this.prefix.length) : f);
	};
	Sites.prototype.text = function (id) {
		id = String(id);
		if (id === "0")
			return "site 0 (none: outside every loop, or no site)";
		const s = this.sites[id];
		if (!s)
			return "site " + id + " (not in the sites table)";
		let t;
		let fn = s.function || "";
		if (s.inlined_into)
			fn += ", inlined into " + s.inlined_into + (s.inlined_at ? " at " + this.place(s.inlined_at) : "");
		if (!s.file) {
			t = "site " + id + " (no debug info)" + (fn ? " " + fn : "");
		} else {
			t = this.file(s.file);
			if (s.line)
				t += ":" + s.line + (s.column ? ":" + s.column : "");
			if (s.line_nearest)
				t += " (nearest line)";
			if (fn)
				t += " " + fn;
		}
		/* A library's site names its unit (the profile's units: name, libz.so.1). */
		if (typeof s.unit === "string" && s.unit)
			t = "[" + s.unit + "] " + t;
		return t;
	};
	/* "file:line:col" with the file as the page names it. */
	Sites.prototype.place = function (text) {
		const m = /^(.*?)(:\d+(?::\d+)?)$/.exec(String(text));
		return m ? this.file(m[1]) + m[2] : String(text);
	};
	Sites.prototype.kind = function (id) {
		const s = this.sites[String(id)];
		return s ? s.kind || "" : "";
	};
	/* 64 for a load or store of a double, 32 of a float (the site table's name), else 0. */
	Sites.prototype.fpWidth = function (id) {
		const s = this.sites[String(id)];
		if (!s || (s.kind !== "load" && s.kind !== "store"))
			return 0;
		return s.name === "double" ? 64 : s.name === "float" ? 32 : 0;
	};

	/* ---------- application state ---------- */
	const app = { data: null, views: [] };

	/* A site cell: its text; a click opens it in the source view. */
	function siteCell(view, id) {
		const s = el("span", { class: "site", "data-site": String(id) }, view.sites.text(id));
		const site = view.sites.sites[String(id)];
		if (site && site.file && site.line) {
			s.classList.add("link");
			title(s, (site.kind || "site") + " site " + id + " in " + site.file + ": click to show it in the source");
			s.addEventListener("click", function () { view.goto(site.file, site.line); });
		} else {
			title(s, (site && site.kind ? site.kind + " " : "") + "site " + id);
		}
		return s;
	}
	function chainCell(view, ids) {
		const span = el("span", { class: "chain" });
		ids.forEach(function (id, i) {
			if (i)
				add(span, el("span", { class: "lt" }, " < "));
			add(span, siteCell(view, id));
		});
		return span;
	}

	/* Columns of numbers that name things: shown without thousands separators. */
	const ID_COLUMNS = new Set(["group", "type", "instance", "field", "object", "key"]);

	/* One value of a table cell. */
	function cell(view, col, v, row) {
		if (v === undefined)
			return "";
		if (siteColumn(col)) {
			if (Array.isArray(v))
				return chainCell(view, v);
			if (isNum(v) || typeof v === "string")
				return siteCell(view, v);
		}
		if (row && row.pointer === true && (col === "value" || col === "values"))
			return Array.isArray(v) ? shortList(v.map(hex)) : hex(v);
		const fp = row && (col === "value" || col === "values") ? view.sites.fpWidth(row.site) : 0;
		if (fp && v !== null)
			return Array.isArray(v) ? shortList(v.map(function (x) { return fpNumber(x, fp); })) : fpNumber(v, fp);
		if (v === null)
			return el("span", { class: "none" }, "—");
		if (typeof v === "boolean")
			return v ? "yes" : "no";
		if ((col === "share" || col.endsWith("_fraction")) && isNum(v))
			return shareBar(v);
		if (isNum(v))
			return ID_COLUMNS.has(col) ? String(v) : fmtNum(v);
		if (typeof v === "string")
			return /^-?\d{16,}$/.test(v) ? fmtCount(v) : v;
		if (Array.isArray(v)) {
			if (v.length && typeof v[0] === "object" && v[0] !== null)
				return el("span", { class: "nested" }, v.length + " rows");
			return shortList(v.map(function (x) { return isNum(x) ? String(x) : compact(x); }));
		}
		return compact(v);
	}
	/* A list of values: the first 8, the whole in the tooltip. */
	function shortList(list) {
		if (list.length <= 8)
			return el("span", { class: "vlist" }, list.join(", "));
		return title(el("span", { class: "vlist" }, list.slice(0, 8).join(", ") + ", … (" + list.length + " in all)"), list.join(", "));
	}
	function compact(v) {
		if (v === null || typeof v !== "object")
			return isNum(v) ? fmtNum(v) : String(v);
		if (Array.isArray(v))
			return "[" + v.map(compact).join(", ") + "]";
		return "{" + Object.keys(v).map(function (k) { return k + ": " + compact(v[k]); }).join(", ") + "}";
	}
	function shareBar(v) {
		const w = Math.max(0, Math.min(1, v));
		return el("span", { class: "share" },
			el("span", { class: "bar", style: "width:" + (w * 60).toFixed(1) + "px" }),
			el("span", { class: "pct" }, fmtPct(v)));
	}

	/* ---------- paged, sortable tables ---------- */
	function columnsOf(rows) {
		const seen = new Set(), cols = [];
		const n = Math.min(rows.length, 2000); /* the schema's columns show in the first rows */
		for (let i = 0; i < n; i++)
			for (const k in rows[i])
				if (!seen.has(k)) {
					seen.add(k);
					cols.push(k);
				}
		return cols;
	}
	function numeric(v) {
		if (isNum(v))
			return v;
		if (typeof v === "string" && /^-?\d+$/.test(v))
			return Number(v);
		return null;
	}
	/* The weight, else the first numeric column that is not a site (as the text report). */
	function defaultSort(rows, cols, weight) {
		if (weight && cols.indexOf(weight) >= 0)
			return weight;
		for (const c of cols)
			if (!siteColumn(c) && rows.length && numeric(rows[0][c]) !== null)
				return c;
		return null;
	}
	/* Sorted copy of rows: by column `by` (numbers, big integers as digits, then text), ties by
	 * the tie column ascending, then the original order.  Keys are computed once per row. */
	function sortKey(v) {
		const n = numeric(v);
		if (n !== null)
			return n;
		if (typeof v === "boolean")
			return +v;
		return v === undefined || v === null ? null : String(v);
	}
	function sortRows(rows, by, desc, tie) {
		const n = rows.length, keys = new Array(n), ties = new Float64Array(n), idx = new Array(n);
		for (let i = 0; i < n; i++) {
			keys[i] = sortKey(rows[i][by]);
			ties[i] = tie ? numeric(rows[i][tie]) || 0 : 0;
			idx[i] = i;
		}
		const sign = desc ? -1 : 1;
		idx.sort(function (a, b) {
			const x = keys[a], y = keys[b];
			let d = 0;
			if (x !== y) {
				if (x === null) d = 1;
				else if (y === null) d = -1;
				else if (typeof x === "number" && typeof y === "number") d = sign * (x - y);
				else if (typeof x === "number") d = -1;
				else if (typeof y === "number") d = 1;
				else d = sign * (x < y ? -1 : 1);
			}
			return d || ties[a] - ties[b] || a - b;
		});
		const out = new Array(n);
		for (let i = 0; i < n; i++)
			out[i] = rows[idx[i]];
		return out;
	}

	/* opts: weight, columns (shown, in order), tip {col: text}, rowClick(row, tr), pageSize. */
	function pagedTable(view, rows, opts) {
		opts = opts || {};
		const cols = opts.columns || columnsOf(rows);
		const tie = cols.find(siteColumn);
		let by = defaultSort(rows, cols, opts.weight), desc = true, page = 0, sorted = null;
		const size = opts.pageSize || PAGE;
		const wrap = el("div", { class: "table-wrap" });
		const table = el("table", { class: "data" });
		const thead = el("thead"), tbody = el("tbody");
		const nav = el("div", { class: "pager" });
		add(table, thead, tbody);
		add(wrap, table, nav);
		if (!rows.length) {
			add(wrap, el("p", { class: "empty" }, "(no rows)"));
			table.remove();
			return wrap;
		}
		function head() {
			thead.textContent = "";
			const tr = el("tr");
			for (const c of cols) {
				const th = el("th", { class: isNum(rows[0][c]) && !siteColumn(c) ? "num" : null }, c);
				if (c === by)
					add(th, el("span", { class: "arrow" }, desc ? " ▼" : " ▲"));
				title(th, (opts.tip && opts.tip[c] ? opts.tip[c] + ". " : "") +
				      (c === opts.weight ? "The table's weight. " : "") + "Click to sort.");
				th.addEventListener("click", function () {
					if (by === c)
						desc = !desc;
					else {
						by = c;
						desc = isNum(rows[0][c]);
					}
					sorted = null;
					page = 0;
					draw();
				});
				add(tr, th);
			}
			add(thead, tr);
		}
		function draw() {
			if (!sorted)
				sorted = by ? sortRows(rows, by, desc, tie) : rows;
			head();
			tbody.textContent = "";
			const first = page * size, last = Math.min(sorted.length, first + size);
			for (let i = first; i < last; i++) {
				const r = sorted[i];
				const tr = el("tr");
				for (const c of cols)
					add(tr, el("td", { class: isNum(r[c]) && !siteColumn(c) ? "num" : null }, cell(view, c, r[c], r)));
				if (opts.rowClick) {
					tr.classList.add("clickable");
					tr.addEventListener("click", function (ev) {
						if (!ev.target.closest(".link"))
							opts.rowClick(r, tr);
					});
				}
				add(tbody, tr);
			}
			nav.textContent = "";
			const pages = Math.ceil(sorted.length / size);
			if (pages > 1) {
				const prev = el("button", { type: "button" }, "‹ prev");
				const next = el("button", { type: "button" }, "next ›");
				prev.disabled = page === 0;
				next.disabled = page >= pages - 1;
				prev.addEventListener("click", function () { page--; draw(); });
				next.addEventListener("click", function () { page++; draw(); });
				add(nav, prev, el("span", null, " rows " + fmtInt(first + 1) + "–" + fmtInt(last) +
					" of " + fmtInt(sorted.length) + " (page " + (page + 1) + " of " + fmtInt(pages) + ") "), next);
			} else {
				add(nav, el("span", null, fmtInt(sorted.length) + (sorted.length === 1 ? " row" : " rows")));
			}
		}
		draw();
		return wrap;
	}

	/* A list of cards shown CARDS at a time: the first at load, more on a click. */
	function cardList(items, render, what, grid) {
		const box = el("div", { class: grid ? "cards grid" : "cards" });
		const more = el("button", { type: "button", class: "more" });
		let shown = 0;
		function step() {
			const end = Math.min(items.length, shown + CARDS);
			for (; shown < end; shown++)
				box.insertBefore(render(items[shown], shown), more);
			more.textContent = "Show " + Math.min(CARDS, items.length - shown) + " more " + what +
				" (" + fmtInt(items.length - shown) + " not shown)";
			more.hidden = shown >= items.length;
		}
		more.addEventListener("click", step);
		add(box, more);
		step();
		return box;
	}

	/* A key: value grid of a map's scalars; nested maps flattened as a.b. */
	function scalars(obj, skip, tips) {
		const dl = el("dl", { class: "scalars" });
		function walk(o, pre) {
			for (const k of Object.keys(o)) {
				const v = o[k];
				if (!pre && skip && skip.has(k))
					continue;
				if (Array.isArray(v) && v.length && typeof v[0] === "object")
					continue;
				if (v && typeof v === "object" && !Array.isArray(v)) {
					if (!Object.values(v).some(function (x) { return x && typeof x === "object"; }))
						walk(v, pre + k + ".");
					continue;
				}
				const dt = el("dt", null, pre + k);
				if (tips && tips[pre + k])
					title(dt, tips[pre + k]);
				add(dl, dt, el("dd", null, typeof v === "boolean" ? (v ? "yes" : "no") :
					Array.isArray(v) ? compact(v) : (isNum(v) && /share|fraction/.test(k) ? fmtPct(v) : fmtNum(v))));
			}
		}
		walk(obj, "");
		return dl.childNodes.length ? dl : null;
	}

	/* Every table (list of maps) of a section not shown otherwise, paged, with its weight. */
	function genericTables(view, mod, sec, skip) {
		const box = el("div", { class: "tables" });
		const weights = mod.weights || {};
		function walk(o, path, depth) {
			for (const k of Object.keys(o)) {
				const v = o[k];
				const p = path ? path + "/" + k : k;
				if (!path && skip && skip.has(k))
					continue;
				if (Array.isArray(v) && v.length && v[0] && typeof v[0] === "object" && !Array.isArray(v[0])) {
					add(box, el("h4", null, p.replace(/\//g, " › ")),
						pagedTable(view, v, { weight: weights[p] }));
				} else if (v && typeof v === "object" && !Array.isArray(v) && depth < 3) {
					walk(v, p, depth + 1);
				}
			}
		}
		walk(sec, "", 0);
		return box.childNodes.length ? box : null;
	}

	/* ---------- plots ---------- */
	function axisText(x, y, text, anchor, cls) {
		return svg("text", { x: x, y: y, "text-anchor": anchor || "middle", class: cls || "axis" }, text);
	}
	/* Bars: [{label, value, tip}], vertical, in a w x h box. */
	function barChart(cls, bars, opts) {
		const W = opts.width || 360, H = opts.height || 150, L = 44, B = 34, T = 10;
		const s = svg("svg", { class: cls, width: W, height: H, viewBox: "0 0 " + W + " " + H, role: "img" });
		const max = Math.max.apply(null, bars.map(function (b) { return b.value; }).concat([1]));
		const bw = Math.min(48, (W - L - 8) / Math.max(1, bars.length));
		add(s, svg("line", { x1: L, y1: H - B, x2: W - 4, y2: H - B, class: "frame" }),
			svg("line", { x1: L, y1: T, x2: L, y2: H - B, class: "frame" }),
			axisText(L - 4, T + 8, fmtNum(max), "end"), axisText(L - 4, H - B, "0", "end"));
		const every = Math.max(1, Math.ceil(bars.length / Math.floor((W - L) / 34)));
		bars.forEach(function (b, i) {
			const h = (H - B - T) * b.value / max;
			const x = L + i * bw;
			const r = svg("rect", { x: x + 1, y: H - B - h, width: Math.max(1, bw - 2), height: h,
			                        fill: heat(0.25 + 0.7 * b.value / max), class: "bar" });
			add(r, svg("title", null, b.tip || b.label + ": " + fmtNum(b.value)));
			add(s, r);
			if (i % every === 0)
				add(s, axisText(x + bw / 2, H - B + 13, b.label));
		});
		if (opts.xlabel)
			add(s, axisText(L + (W - L) / 2, H - 4, opts.xlabel, "middle", "axis-label"));
		return s;
	}

	/* A graph laid out by Graphviz (LAYOUT of the spec), in points. */
	function graphSvg(cls, lay) {
		const pad = 6, W = lay.width + 2 * pad, H = lay.height + 2 * pad;
		const s = svg("svg", { class: cls, width: W, height: H, viewBox: [-pad, -pad, W, H].join(" "), role: "img" });
		const mark = graphSvg.n = (graphSvg.n || 0) + 1; /* marker ids unique in the page */
		add(s, svg("defs", null, ["raw", "war", "waw", "forward", "backward", "self", "static"].map(function (k) {
			return svg("marker", { id: "arrow-" + k + "-" + mark, viewBox: "0 0 10 10", refX: 9, refY: 5,
			                       markerWidth: 7, markerHeight: 7, orient: "auto-start-reverse", class: "kind-" + k },
				svg("path", { d: "M0,0 L10,5 L0,10 z" }));
		})));
		for (const e of lay.edges || []) {
			const p = e.points || [];
			if (p.length < 2)
				continue;
			let d = "M" + p[0] + "," + p[1];
			for (let i = 2; i + 5 < p.length; i += 6)
				d += " C" + p.slice(i, i + 6).join(",");
			if (e.arrow)
				d += " L" + e.arrow[0] + "," + e.arrow[1];
			const kind = /^[a-z]+$/.test(e.kind || "") ? e.kind : "static";
			const path = svg("path", { d: d, class: "edge kind-" + kind, "marker-end": e.arrow ? "url(#arrow-" + kind + "-" + mark + ")" : null });
			add(path, svg("title", null, (e.label || kind) + " (" + e.from + " → " + e.to + ")"));
			add(s, path);
			if (e.label && isNum(e.lx) && isNum(e.ly))
				add(s, svg("text", { x: e.lx, y: e.ly + 3, "text-anchor": "middle", class: "edge-label kind-" + kind }, e.label));
		}
		for (const n of lay.nodes || []) {
			const g = svg("g", { class: "node" });
			add(g, svg("rect", { x: n.x - n.w / 2, y: n.y - n.h / 2, width: n.w, height: n.h, rx: 4 }),
				/* the layout measured the label in its own font: squeeze it if ours looks wider */
				svg("text", { x: n.x, y: n.y + 4, "text-anchor": "middle", textLength: String(n.label).length * 5.8 > n.w - 6 ? n.w - 6 : null,
				              lengthAdjust: "spacingAndGlyphs" }, n.label),
				svg("title", null, "site " + n.id + ": " + n.label));
			add(s, g);
		}
		return s;
	}
	function graphBox(cls, lay, what) {
		if (!lay)
			return el("p", { class: "note" }, "No " + what + " in the data.");
		if (lay.skipped)
			return el("p", { class: "note skipped" }, "Graph not drawn: " + lay.skipped);
		const g = graphSvg(cls, lay), box = el("div", { class: "graph" }, g);
		/* a wide graph starts fitted to 880 pixels; a click toggles its full size */
		const W = Number(g.getAttribute("width")), H = Number(g.getAttribute("height"));
		if (W > 880) {
			let fit = true;
			const size = function () {
				const k = fit ? 880 / W : 1;
				g.setAttribute("width", String(W * k));
				g.setAttribute("height", String(H * k));
			};
			size();
			box.classList.add("zoomable");
			title(box, "Click to toggle between fitted and full size");
			box.addEventListener("click", function (ev) {
				if (ev.target.closest && ev.target.closest(".link"))
					return;
				fit = !fit;
				size();
			});
		}
		return box;
	}

	/* ---------- module views ---------- */
	/* table[name] when the table itself has it (a module named "constructor" has no view) */
	function own(table, name) {
		return Object.prototype.hasOwnProperty.call(table, name) ? table[name] : undefined;
	}
	const VIEWS = {};
	const LEDE = {
		"dependence": "Memory dependences that manifested in each loop: which access was the source and which the destination, the kind (raw: read after write, war: write after read, waw: write after write), whether the loop carried it (the source ran in an earlier iteration) and at which distances in iterations.",
		"structure-affinity": "Per hot structure: how often its fields are used together (affinity 0..1), how it could be split, and its fields drawn to scale by offset and size, coloured by their share of the cost.",
		"rds-shape": "Recursive data structures: types are strongly connected groups of allocation sites linked by pointers; instances are the connected structures built from them. Stability factor: how many of the largest traversal intervals between alterations hold 99% of the traversals (1: built, then walked unchanged).",
		"object-relative": "Each load and store as object-relative streams: which object of which allocation group, at which offset, over time, summarized as LMADs (offset + k × stride). Groups are allocation sites (with contexts).",
		"value-pattern": "Values and address strides seen per load and store: constant and few-valued sites, and the strides between successive addresses (strongly strided: one stride covers at least the threshold fraction of them).",
		"null": "Events per kind, decoded and thrown away: this module measures what the instrumentation and the backend's decode loop cost; it says nothing about the program.",
		"shadow-cost": "Shadow memory written for every load and store (8 bytes per 8-byte word touched): this module measures what shadow memory costs the backend; it says nothing about the program.",
		"alloc-sizes": "Per heap allocation site: allocations (count), their bytes, the smallest, the largest and the mean size; log2 is the histogram of sizes, 2^k: n allocations of a size in [2^k, 2^(k+1))."
	};

	/* rows by the value of their key column (as a string), in order */
	function groupBy(rows, key) {
		const m = new Map();
		for (const r of rows) {
			const k = String(r[key]);
			if (!m.has(k))
				m.set(k, []);
			m.get(k).push(r);
		}
		return m;
	}

	VIEWS["dependence"] = function (view, mod, sec, box) {
		const loops = Array.isArray(sec.loops) ? sec.loops : [];
		const deps = Array.isArray(sec.dependences) ? sec.dependences : [];
		const byLoop = groupBy(deps, "loop");
		let total = 0;
		for (const l of loops)
			total += numeric(l.iterations) || 0;
		const ran = loops.filter(function (l) { return (numeric(l.iterations) || 0) > 0 || byLoop.has(String(l.loop)); });
		const order = sortRows(ran, "iterations", true, "loop");
		const graphs = (view.p.graphs || {}).dependence || {};
		add(box, el("h3", null, "Loops by share of accesses"),
			el("p", { class: "hint" }, "Share = the loop's iterations over all loops' iterations. " +
				fmtInt(ran.length) + " of " + fmtInt(loops.length) + " loops ran or hold dependences."));
		add(box, cardList(order, function (l) {
			const rows = byLoop.get(String(l.loop)) || [];
			const carried = rows.filter(function (d) { return d.carried; });
			const it = numeric(l.iterations) || 0;
			const card = el("div", { class: "card loop" });
			add(card, el("div", { class: "card-head" }, el("span", { class: "label" }, "loop "), siteCell(view, l.loop),
				el("span", { class: "stats" }, fmtCount(l.invocations) + " invocations · " + fmtInt(it) + " iterations · "),
				shareBar(total ? it / total : 0)));
			const verdict = el("div", { class: "verdict " + (carried.length ? "carried" : "clean") });
			if (!carried.length) {
				add(verdict, rows.length ? "no carried memory dependence (" + rows.length + " within iterations)" : "no carried memory dependence");
			} else {
				add(verdict, el("div", null, carried.length + " carried " + (carried.length === 1 ? "dependence" : "dependences") + ":"));
				const ul = el("ul");
				for (const d of sortRows(carried, "count", true, "src").slice(0, 8))
					add(ul, el("li", null, el("b", null, String(d.kind)), " ", siteCell(view, d.src), " → ", siteCell(view, d.dst),
						" distance " + distance(d) + ", ×" + fmtNum(d.count)));
				if (carried.length > 8)
					add(ul, el("li", null, "… " + (carried.length - 8) + " more in the table below"));
				add(verdict, ul);
			}
			add(card, el("div", { class: "card-body" }, verdict, rows.length ? graphBox("dep-graph", graphs[String(l.loop)], "graph for this loop") :
				el("p", { class: "note" }, "No memory dependence manifested in this loop: nothing to draw.")));
			return card;
		}, "loops"));
		add(box, el("h3", null, "Dependences"),
			el("p", { class: "hint" }, "Loop 0 collects dependences outside every loop, or whose source ran before the loop was invoked. " +
				"_via: the call through which the loop reached the access; _context: the calling context."),
			pagedTable(view, deps, { weight: mod.weights && mod.weights.dependences,
				tip: { carried: "the source ran in an earlier iteration of the same invocation",
				       min_distance: "iterations between source and destination, smallest", max_distance: "largest" } }));
		add(box, el("h3", null, "All loops"), pagedTable(view, loops, { weight: mod.weights && mod.weights.loops }));
		return new Set(["loops", "dependences"]);
	};
	function distance(d) {
		const a = d.min_distance, b = d.max_distance;
		return a === b || b === undefined ? String(a) : a + ".." + b;
	}

	VIEWS["structure-affinity"] = function (view, mod, sec, box) {
		const structs = sec.structures && typeof sec.structures === "object" ? sec.structures : {};
		const list = sortRows(Object.keys(structs).map(function (k) { return Object.assign({ _key: k }, structs[k]); }), "share", true, "site");
		add(box, el("h3", null, "Hot structures"));
		add(box, cardList(list, function (st) { return structureCard(view, st); }, "structures"));
		if (Array.isArray(sec.hot))
			add(box, el("h3", null, "Hot objects"), pagedTable(view, sec.hot, { weight: mod.weights && mod.weights.hot }));
		return new Set(["structures", "hot"]);
	};
	function fieldName(st, off) {
		const f = (st.fields || []).find(function (x) { return String(x.offset) === String(off); });
		return f && f.name ? f.name : "@" + off;
	}
	function structureCard(view, st) {
		const card = el("div", { class: "card struct" });
		const size = st.size && typeof st.size === "object" ? st.size : {};
		add(card, el("div", { class: "card-head" }, el("span", { class: "label" }, st.kind + " "), siteCell(view, st.site),
			st.name ? el("code", null, " " + st.name) : null,
			Array.isArray(st.context) && st.context.length ? [el("span", { class: "stats" }, "called from"), chainCell(view, st.context)] : null, st.type ? el("span", { class: "type" }, " struct " + st.type) : null,
			el("span", { class: "stats" }, fmtCount(st.instances) + " instances · " + fmtCount(st.bytes) +
				" bytes · " + fmtCount(st.accesses) + " accesses · size " + (size.used !== undefined ? size.used : "?") +
				" bytes (" + (size.source || "?") + ") · "), shareBar(st.share)));
		const body = el("div", { class: "card-body" });
		add(body, heatmap(st), el("div", { class: "advice" }, el("div", { class: "advice-title" }, "Advice"),
			el("p", null, String(st.advice || "none")),
			clusterList(st)));
		add(card, body, fieldLayout(st));
		const det = el("details", null, el("summary", null, "fields, loops and streams"));
		det.addEventListener("toggle", function once() {
			det.removeEventListener("toggle", once);
			for (const k of ["fields", "loops", "streams"])
				if (Array.isArray(st[k]) && st[k].length)
					add(det, el("h4", null, k), pagedTable(view, st[k], { weight: "cost" }));
		});
		add(card, det);
		return card;
	}
	function clusterList(st) {
		if (!Array.isArray(st.clusters) || !st.clusters.length)
			return null;
		return el("div", null, el("div", { class: "advice-title" }, "Clusters (fields used together)"),
			el("ul", null, st.clusters.map(function (c) {
				return el("li", null, "{" + (Array.isArray(c) ? c : [c]).map(function (o) { return fieldName(st, o); }).join(", ") + "}");
			})));
	}
	const HEAT_FIELDS = 40; /* a larger matrix shows the fields of the largest cost */
	function heatmap(st) {
		let rows = Array.isArray(st.affinity) ? st.affinity : [];
		const all = rows.length;
		if (all > HEAT_FIELDS)
			rows = sortRows(rows, "cost", true, "field").slice(0, HEAT_FIELDS).sort(function (a, b) { return numeric(a.field) - numeric(b.field); });
		const names = rows.map(function (r) { return fieldName(st, r.field); });
		const longest = names.reduce(function (m, x) { return Math.max(m, x.length); }, 0);
		const n = rows.length, C = n > 16 ? 14 : 26;
		const L = Math.min(130, 12 + longest * 6.2), T = Math.min(110, 14 + longest * 5.4);
		const s = svg("svg", { class: "heatmap", width: L + n * C + 4, height: T + n * C + 4, role: "img" });
		add(s, svg("title", null, "Affinity between fields: 1 = always accessed together"));
		rows.forEach(function (r, i) {
			add(s, svg("text", { x: L - 4, y: T + i * C + C / 2 + 4, "text-anchor": "end", class: "axis" }, names[i]));
			add(s, svg("text", { x: 0, y: 0, transform: "translate(" + (L + i * C + C / 2 + 4) + "," + (T - 4) + ") rotate(-60)", class: "axis" }, names[i]));
			rows.forEach(function (c, j) {
				const v = r[String(c.field)];
				const t = isNum(v) ? v : 0;
				add(s, svg("rect", { x: L + j * C, y: T + i * C, width: C - 1, height: C - 1, fill: isNum(v) ? heat(t) : "#eee" },
					svg("title", null, names[i] + " × " + names[j] + ": affinity " + (isNum(v) ? v.toFixed(3) : "—"))));
				if (C >= 26 && isNum(v))
					add(s, svg("text", { x: L + j * C + C / 2, y: T + i * C + C / 2 + 3, "text-anchor": "middle", class: "cell", fill: ink(t) }, v.toFixed(2)));
			});
		});
		return el("div", { class: "figure" }, el("div", { class: "caption" }, all > n ? "Affinity of the " + n + " costliest of " + all + " fields" : "Affinity between fields"),
			s, legend("affinity", 0, 1));
	}
	/* The heat scale from lo to hi, as a small bar. */
	function legend(what, lo, hi) {
		const s = svg("svg", { class: "legend", width: 170, height: 26, role: "img" });
		for (let i = 0; i < 20; i++)
			add(s, svg("rect", { x: 30 + i * 6, y: 2, width: 6, height: 10, fill: heat(i / 19) }));
		add(s, axisText(26, 11, fmtNum(lo), "end"), axisText(156, 11, fmtNum(hi), "start"), axisText(90, 24, what));
		return el("div", null, s);
	}
	function fieldLayout(st) {
		const fields = Array.isArray(st.fields) ? st.fields : [];
		const size = Math.max(numeric(st.size && st.size.used) || 0,
			fields.reduce(function (m, f) { return Math.max(m, (numeric(f.offset) || 0) + (numeric(f.bytes) || 0)); }, 0), 1);
		const W = Math.min(900, Math.max(300, size * 24)), H = 64, X = 10, scale = (W - 2 * X) / size;
		const s = svg("svg", { class: "field-layout", width: W, height: H, role: "img" });
		add(s, svg("title", null, "Field layout to scale: bytes 0.." + size + "; colour: share of the cost"));
		add(s, svg("rect", { x: X, y: 8, width: size * scale, height: 30, class: "unused" }));
		const maxShare = fields.reduce(function (m, f) { return Math.max(m, isNum(f.share) ? f.share : 0); }, 0) || 1;
		for (const f of fields) {
			const x = X + (numeric(f.offset) || 0) * scale, w = Math.max(1, (numeric(f.bytes) || 1) * scale);
			const t = isNum(f.share) ? f.share / maxShare : 0;
			const g = svg("g");
			add(g, svg("rect", { x: x, y: 8, width: w, height: 30, fill: heat(0.1 + 0.85 * t), class: "field" }));
			if (w > 26)
				add(g, svg("text", { x: x + w / 2, y: 27, "text-anchor": "middle", class: "cell", fill: ink(0.1 + 0.85 * t) }, f.name || "@" + f.offset));
			add(g, svg("title", null, (f.name || "field") + " @" + f.offset + ", " + f.bytes + " bytes, share " + fmtPct(f.share)));
			add(s, g);
		}
		const step = size <= 16 ? 4 : size <= 64 ? 8 : Math.pow(2, Math.ceil(Math.log2(size / 8)));
		for (let b = 0; b <= size; b += step)
			add(s, svg("line", { x1: X + b * scale, y1: 38, x2: X + b * scale, y2: 43, class: "frame" }),
				axisText(X + b * scale, 55, String(b)));
		return el("div", { class: "figure layout" }, el("div", { class: "caption" }, "Field layout, bytes 0–" + size + " (unused bytes grey)"), s);
	}

	VIEWS["rds-shape"] = function (view, mod, sec, box) {
		const types = Array.isArray(sec.types) ? sec.types : [];
		const inst = Array.isArray(sec.instances) ? sec.instances : [];
		const byType = groupBy(inst, "type");
		const graphs = (view.p.graphs || {})["rds-shape"] || {};
		add(box, el("h3", null, "RDS types"));
		if (!types.length)
			add(box, el("p", { class: "note" }, "No recursive data structure found (no type: no allocation site points, through a cycle, to its own kind)."));
		add(box, cardList(sortRows(types, "traversals", true, "type"), function (t) {
			const card = el("div", { class: "card rds" });
			add(card, el("div", { class: "card-head" }, el("span", { class: "label" }, "type " + t.type + " "), siteCell(view, t.alloc_site),
				Array.isArray(t.context) && t.context.length ? [el("span", { class: "stats" }, "called from"), chainCell(view, t.context)] : null,
				el("span", { class: "stats" }, fmtCount(t.instances) + " instances · " + fmtNum(t.avg_nodes) + " nodes each · " +
					fmtCount(t.forward_edges) + " forward, " + fmtCount(t.backward_edges) + " backward, " +
					fmtCount(t.self_edges) + " self edges · " + fmtCount(t.traversals) + " traversals")));
			const mine = byType.get(String(t.type)) || [];
			const stab = el("div", { class: "advice" }, el("div", { class: "advice-title" }, "Stability factor"),
				el("p", { class: "big" }, fmtNum(t.avg_stability_factor)),
				el("p", null, "average over the " + fmtCount(t.traversed_instances) + " traversed instances; largest " + fmtNum(t.max_stability_factor) +
					". 1: built, then walked unchanged; 0: never traversed."),
				el("p", null, "Traversals: " + fmtCount(t.dfs_like) + " dfs-like, " + fmtCount(t.bfs_like) + " bfs-like pairs. " +
					"Average lifetime " + fmtPct(t.avg_lifetime) + " of the run."));
			add(card, el("div", { class: "card-body" },
				el("div", null, el("div", { class: "caption" }, "Shape graph: allocation sites, edges = pointer stores between their objects"),
					graphBox("shape-graph", graphs[String(t.type)], "shape graph for this type")),
				lifetimeCdf(mine, sec), stab));
			return card;
		}, "types"));
		add(box, el("h3", null, "Instances"), el("p", { class: "hint" }, "Listed: " + fmtInt(numeric(sec.instances_listed) || inst.length) +
			". lifetime: (destroyed − created) over the run's clock; destroyed = the last traversal."),
			pagedTable(view, inst, { weight: mod.weights && mod.weights.instances }));
		add(box, el("h3", null, "Static shape graph"), pagedTable(view, sec.static_shape_graph || [], { weight: mod.weights && mod.weights.static_shape_graph }));
		return new Set(["types", "instances", "static_shape_graph"]);
	};
	function lifetimeCdf(inst, sec) {
		const W = 300, H = 170, L = 40, B = 32, T = 10, R = 10;
		const v = inst.map(function (i) { return i.lifetime; }).filter(isNum).sort(function (a, b) { return a - b; });
		const s = svg("svg", { class: "lifetime-cdf", width: W, height: H, role: "img" });
		add(s, svg("title", null, "Lifetime CDF of the listed instances: fraction of instances living at most x of the run"));
		const px = function (x) { return L + x * (W - L - R); }, py = function (y) { return H - B - y * (H - B - T); };
		for (const t of [0, 0.25, 0.5, 0.75, 1]) {
			add(s, svg("line", { x1: px(0), y1: py(t), x2: px(1), y2: py(t), class: "grid" }),
				axisText(L - 4, py(t) + 4, t.toFixed(2), "end"), axisText(px(t), H - B + 14, (t * 100) + "%"));
		}
		add(s, axisText(px(0.5), H - 3, "lifetime (fraction of the run)", "middle", "axis-label"));
		if (v.length) {
			let d = "M" + px(0) + "," + py(0);
			v.forEach(function (x, i) {
				const xx = px(Math.max(0, Math.min(1, x)));
				d += " L" + xx + "," + py(i / v.length) + " L" + xx + "," + py((i + 1) / v.length);
			});
			d += " L" + px(1) + "," + py(1);
			add(s, svg("path", { d: d, class: "cdf" }));
		} else {
			add(s, axisText(px(0.5), py(0.5), "no listed instance"));
		}
		return el("div", { class: "figure" }, el("div", { class: "caption" }, "Lifetime CDF (" + v.length + " instances)"), s);
	}

	VIEWS["object-relative"] = function (view, mod, sec, box) {
		const insns = Array.isArray(sec.instructions) ? sec.instructions : [];
		const groups = Array.isArray(sec.groups) ? sec.groups : [];
		if (sec.sample_quality)
			add(box, el("h3", null, "Sample quality"), scalars(sec.sample_quality, null, {
				captured_fraction: "accesses that fall in some LMAD", instruction_fraction: "instructions all of whose accesses are captured" }));
		add(box, el("h3", null, "Instructions"), el("p", { class: "hint" },
			"An LMAD is object + k × object_stride, offset + k × offset_stride for k = 0..count−1, between first_time and last_time (the module's clock). " +
			"The plot shows the offsets in the first object over time."));
		add(box, cardList(sortRows(insns, "accesses", true, "site"), function (ins) { return insnCard(view, ins); }, "instructions"));
		add(box, el("h3", null, "Groups"), el("p", { class: "hint" }, "Lifetime histogram: objects per lifetime bucket; bucket b holds lifetimes 2^(b−1) to 2^b − 1 events (bucket 0: lifetime 0)."));
		add(box, cardList(sortRows(groups, "accesses", true, "group"), function (g) {
			const card = el("div", { class: "card group" });
			add(card, el("div", { class: "card-head" }, el("span", { class: "label" }, "group " + g.group + " (" + g.kind + ") "),
				String(g.group) === "0" ? "allocations from uninstrumented code" : siteCell(view, g.group),
				g.context ? [" via ", chainCell(view, g.context)] : null,
				el("span", { class: "stats" }, fmtCount(g.objects) + " objects · " + fmtCount(g.bytes) + " bytes · " +
					fmtCount(g.accesses) + " accesses · lifetime min " + fmtNum(g.lifetime_min) + ", median " + fmtNum(g.lifetime_median) +
					", max " + fmtNum(g.lifetime_max))));
			const h = Array.isArray(g.lifetime_log2) ? g.lifetime_log2 : [];
			add(card, el("div", { class: "card-body" }, barChart("lifetime-hist", h.map(function (c, b) {
				return { label: b === 0 ? "0" : "2^" + (b - 1), value: numeric(c) || 0,
				         tip: (b === 0 ? "lifetime 0" : "lifetime " + fmtInt(Math.pow(2, b - 1)) + "–" + fmtInt(Math.pow(2, b) - 1)) + ": " + fmtNum(c) + " objects" };
			}), { width: Math.max(240, Math.min(700, 60 + 22 * h.length)), height: 140, xlabel: "lifetime (events, log2 buckets)" })));
			return card;
		}, "groups", true));
		return new Set(["instructions", "groups", "sample_quality"]);
	};
	function insnCard(view, ins) {
		const card = el("div", { class: "card insn" });
		const streams = Array.isArray(ins.streams) ? ins.streams : [];
		add(card, el("div", { class: "card-head" }, el("span", { class: "label" }, String(ins.access) + " "), siteCell(view, ins.site),
			el("span", { class: "stats" }, fmtCount(ins.accesses) + " accesses · " + fmtCount(ins.unattributed) +
				" unattributed · " + streams.length + (streams.length === 1 ? " stream" : " streams"))));
		if (!streams.length) {
			add(card, el("p", { class: "note" }, "No stream: no object holds the addresses of its accesses (unattributed)."));
			return card;
		}
		const body = el("div", { class: "card-body" });
		/* the plot: object 0 of the first stream that has an LMAD there, else the first stream's
		 * lowest object */
		const has0 = function (st) {
			return (Array.isArray(st.lmads) ? st.lmads : []).some(function (l) { return numeric(l.object) === 0; });
		};
		const first = streams.find(has0) || streams[0];
		const objs = (Array.isArray(first.lmads) ? first.lmads : []).map(function (l) { return numeric(l.object); }).filter(isNum);
		add(body, offsetPlot(first, objs.length && !has0(first) ? Math.min.apply(null, objs) : 0));
		const rows = [];
		for (const st of streams.slice(0, 20))
			for (const l of Array.isArray(st.lmads) ? st.lmads : [])
				rows.push(Object.assign({ group: st.group }, l));
		add(body, el("div", { class: "lmads" }, pagedTable(view, rows, { weight: "count", pageSize: 10,
			columns: ["group", "object", "offset", "object_stride", "offset_stride", "count", "first_time", "last_time"],
			tip: { group: "the stream's allocation group (a site id)" } }),
			streams.length > 20 ? el("p", { class: "note" }, "LMADs of the first 20 of " + streams.length + " streams.") : null,
			first.full ? el("p", { class: "note" }, "The plotted stream is full: an LMAD was refused, its later accesses are only in its min/max/granularity.") : null));
		add(card, body);
		return card;
	}
	function offsetPlot(st, obj) {
		const W = 320, H = 170, L = 58, B = 30, T = 10, R = 10;
		const lm = (Array.isArray(st.lmads) ? st.lmads : []).filter(function (l) { return numeric(l.object) === obj; });
		const s = svg("svg", { class: "offset-plot", width: W, height: H, role: "img" });
		add(s, svg("title", null, "Offset against time in object " + obj + " of group " + st.group + ": each LMAD a line of points"));
		let t0 = Infinity, t1 = -Infinity, o0 = Infinity, o1 = -Infinity;
		const segs = lm.map(function (l) {
			const c = numeric(l.count) || 1, a = numeric(l.first_time) || 0, b = numeric(l.last_time) || a;
			const off = numeric(l.offset) || 0, end = off + (c - 1) * (numeric(l.offset_stride) || 0);
			t0 = Math.min(t0, a); t1 = Math.max(t1, b); o0 = Math.min(o0, off, end); o1 = Math.max(o1, off, end);
			return { a: a, b: b, off: off, end: end, c: c, l: l };
		});
		if (!segs.length) {
			add(s, axisText(W / 2, H / 2, "no LMAD in object " + obj));
			return el("div", { class: "figure" }, s);
		}
		if (t1 === t0) t1 = t0 + 1;
		if (o1 === o0) o1 = o0 + 1;
		const px = function (t) { return L + (t - t0) / (t1 - t0) * (W - L - R); };
		const py = function (o) { return H - B - (o - o0) / (o1 - o0) * (H - B - T); };
		add(s, svg("line", { x1: L, y1: H - B, x2: W - R, y2: H - B, class: "frame" }), svg("line", { x1: L, y1: T, x2: L, y2: H - B, class: "frame" }),
			axisText(L - 4, py(o0) + 4, fmtNum(o0), "end"), axisText(L - 4, py(o1) + 4, fmtNum(o1), "end"),
			axisText(L, H - B + 13, fmtNum(t0), "start"), axisText(W - R, H - B + 13, fmtNum(t1), "end"),
			axisText((L + W) / 2, H - 3, "time (events)", "middle", "axis-label"),
			svg("text", { transform: "translate(12," + ((H - B) / 2) + ") rotate(-90)", "text-anchor": "middle", class: "axis-label" }, "offset (bytes)"));
		/* each LMAD: its line, and its accesses as dots (one path, at most 400 dots a plot) */
		const per = Math.max(2, Math.floor(400 / segs.length));
		for (const g of segs) {
			const n = Math.min(g.c, per);
			let d = "";
			for (let k = 0; k < n; k++) {
				const f = n === 1 ? 0 : k / (n - 1);
				d += "M" + px(g.a + f * (g.b - g.a)).toFixed(1) + "," + py(g.off + f * (g.end - g.off)).toFixed(1) + "h0";
			}
			const grp = svg("g", { class: "lmad" });
			add(grp, svg("line", { x1: px(g.a), y1: py(g.off), x2: px(g.b), y2: py(g.end), class: "lmad-line" }),
				svg("path", { d: d, class: "dots" }),
				svg("title", null, "offset " + g.l.offset + " + k × " + g.l.offset_stride + ", " + fmtInt(g.c) + " accesses, time " + g.a + "–" + g.b));
			add(s, grp);
		}
		return el("div", { class: "figure" }, el("div", { class: "caption" }, "Offset vs time: the LMADs from object " + obj + " of group " + st.group), s);
	}

	VIEWS["value-pattern"] = function (view, mod, sec, box) {
		const entries = Array.isArray(sec.entries) ? sec.entries : [];
		const few = entries.filter(function (e) { return e.constant === true || Array.isArray(e.values); });
		add(box, el("h3", null, "Constant and few-valued sites"), el("p", { class: "hint" },
			"constant: every execution saw the same value (a candidate for hoisting or value speculation); values: the few distinct values of a site that saw at most " +
			fmtNum(sec.value_cap) + "."),
			pagedTable(view, few, { weight: "executions", columns: ["site", "access", "executions", "constant", "value", "values", "distinct", "pointer"].filter(function (c) {
				return c !== "pointer" || few.some(function (e) { return e.pointer; });
			}) }));
		add(box, el("h3", null, "Strides per site"), el("p", { class: "hint" },
			"Bytes from one execution's address to the next one's. Strongly strided: the dominant stride covers at least " + fmtPct(sec.strong_stride_fraction) + " of them."));
		add(box, cardList(sortRows(entries.filter(function (e) { return e.strides && typeof e.strides === "object"; }), "executions", true, "site"), function (e) {
			const card = el("div", { class: "card vp" });
			add(card, el("div", { class: "card-head" }, el("span", { class: "label" }, String(e.access) + " "), siteCell(view, e.site),
				el("span", { class: "stats" }, fmtCount(e.executions) + " executions · dominant stride " + e.stride +
					(e.strongly_strided ? " (strongly strided) · " : " · ")), shareBar(e.stride_fraction)));
			const keys = Object.keys(e.strides).sort(function (a, b) { return Number(a) - Number(b); });
			add(card, el("div", { class: "card-body" }, barChart("stride-hist", keys.map(function (k) {
				return { label: k, value: numeric(e.strides[k]) || 0, tip: "stride " + k + " bytes: " + fmtNum(e.strides[k]) + " times" +
					(e.stride_errs && e.stride_errs[k] ? " (error up to " + e.stride_errs[k] + ")" : "") };
			}), { width: Math.max(200, Math.min(640, 70 + 40 * keys.length)), height: 130, xlabel: "stride (bytes)" })));
			return card;
		}, "sites", true));
		add(box, el("h3", null, "All entries"), pagedTable(view, entries, { weight: mod.weights && mod.weights.entries }));
		return new Set(["entries"]);
	};

	/* ---------- one module's section ---------- */
	function moduleSection(view, mod) {
		const sec = (view.p.root.modules || {})[mod.name];
		const s = el("section", { class: "module", "data-module": mod.name, id: view.id + "-m-" + view.p.modules.indexOf(mod) });
		add(s, el("h2", null, mod.name), own(LEDE, mod.name) ? el("p", { class: "lede" }, own(LEDE, mod.name)) : null);
		if (!mod.known || view.p.unchecked && view.p.unchecked.indexOf(mod.name) >= 0)
			add(s, el("p", { class: "note" }, "This mnemo does not know the module '" + mod.name + "': its section is shown as it is, unchecked."));
		if (!sec || typeof sec !== "object") {
			add(s, el("p", { class: "note" }, "Empty section."));
			return s;
		}
		let skip = new Set();
		const top = el("div", { class: "summary" });
		add(s, top);
		if (own(VIEWS, mod.name)) {
			try {
				skip = own(VIEWS, mod.name)(view, mod, sec, s) || skip;
			} catch (e) {
				showError(mod.name + ": " + e.message);
				console.error(e);
			}
		}
		/* the section's scalars first, its other tables last */
		const sc = scalars(sec, skip);
		if (sc && own(VIEWS, mod.name))
			add(top, el("details", { class: "figures" }, el("summary", null, "Section figures (" + sc.childNodes.length / 2 + ")"), sc));
		else
			add(top, sc);
		const tables = genericTables(view, mod, sec, skip);
		if (tables)
			add(s, el("h3", null, own(VIEWS, mod.name) ? "Other tables" : "Tables"), tables);
		return s;
	}

	/* ---------- source view ---------- */
	const EXEC_WEIGHTS = new Set(["executions", "accesses", "iterations"]);

	/* Per site: executions, and per module its key figure (the weight of its row). */
	function indexSites(p) {
		const exec = new Map(), key = new Map(), cols = [];
		for (const mod of p.modules) {
			const sec = (p.root.modules || {})[mod.name];
			if (!sec || typeof sec !== "object")
				continue;
			const fig = new Map();
			let label = null;
			/* the section's top-level tables, by their weight (else the text report's guess) */
			for (const path of Object.keys(sec)) {
				const rows = sec[path];
				if (!Array.isArray(rows) || !rows.length || !rows[0] || typeof rows[0] !== "object")
					continue;
				const w = (mod.weights || {})[path] || defaultSort(rows, columnsOf(rows), null);
				if (!w)
					continue;
				const col = "site" in rows[0] ? "site" : (w === "iterations" && "loop" in rows[0] ? "loop" : null);
				if (!col)
					continue;
				const sum = new Map();
				for (const r of rows) {
					const v = numeric(r[w]);
					if (v === null || r[col] === undefined)
						continue;
					const id = String(r[col]);
					sum.set(id, (sum.get(id) || 0) + v);
				}
				for (const [id, v] of sum) {
					if (v > (fig.get(id) || 0))
						fig.set(id, v);
					if (EXEC_WEIGHTS.has(w) && v > (exec.get(id) || 0))
						exec.set(id, v);
				}
				label = label ? label : w;
			}
			if (fig.size) {
				key.set(mod.name, fig);
				cols.push({ mod: mod.name, label: label });
			}
		}
		return { exec: exec, key: key, cols: cols };
	}

	function SourceView(view) {
		this.view = view;
		const p = view.p, sites = view.sites.sites;
		this.idx = indexSites(p);
		/* file -> line -> [site ids] */
		this.files = new Map();
		for (const id of Object.keys(sites)) {
			const s = sites[id];
			if (!s.file || !s.line)
				continue;
			if (!this.files.has(s.file))
				this.files.set(s.file, { name: s.file, lines: new Map(), exec: 0, max: 0 });
			const f = this.files.get(s.file);
			if (!f.lines.has(s.line))
				f.lines.set(s.line, []);
			f.lines.get(s.line).push(id);
		}
		for (const f of this.files.values()) {
			for (const ids of f.lines.values()) {
				const e = this.lineExec(ids);
				f.exec += e;
				f.max = Math.max(f.max, e);
			}
		}
		this.order = Array.from(this.files.values()).sort(function (a, b) { return b.exec - a.exec || (a.name < b.name ? -1 : 1); });
	}
	SourceView.prototype.lineExec = function (ids) {
		let m = 0;
		for (const id of ids)
			m = Math.max(m, this.idx.exec.get(id) || 0);
		return m;
	};
	SourceView.prototype.lineKey = function (ids, mod) {
		const fig = this.idx.key.get(mod);
		let m = null;
		for (const id of ids) {
			const v = fig.get(id);
			if (v !== undefined && (m === null || v > m))
				m = v;
		}
		return m;
	};
	SourceView.prototype.build = function () {
		const self = this;
		const sec = el("section", { class: "source" });
		this.sec = sec;
		add(sec, el("h2", null, "Source"), el("p", { class: "lede" }, "Executions per line: the largest count of a site on it " +
			"(value-pattern executions, object-relative accesses, dependence loop iterations). The other columns: per module, the " +
			"weight of the site's row. Click a line with sites to see their rows."));
		if (!this.order.length) {
			add(sec, el("p", { class: "note" }, "No site of this profile names a source file (built without -g?)."));
			return sec;
		}
		const layout = el("div", { class: "src-layout" });
		const list = el("ul", { class: "files" });
		this.fileItems = new Map();
		for (const f of this.order) {
			const li = el("li", { class: "file", "data-file": f.name }, el("span", { class: "fname" }, this.view.sites.file(f.name)),
				el("span", { class: "fexec" }, f.exec ? fmtNum(f.exec) : ""));
			const src = (app.data.sources || {})[f.name];
			if (!src || !Array.isArray(src.lines))
				li.classList.add("no-source");
			title(li, f.name + ": " + f.lines.size + " annotated lines" + (src && src.missing ? " (" + src.missing + ")" : ""));
			li.addEventListener("click", function () { self.show(f.name); });
			this.fileItems.set(f.name, li);
			add(list, li);
		}
		this.pane = el("div", { class: "src-pane" });
		this.panel = el("div", { class: "site-panel", hidden: "hidden" });
		add(layout, el("div", { class: "files-box" }, el("div", { class: "files-title" }, "Files by executions"), list),
			el("div", { class: "src-main" }, this.pane, this.panel));
		add(sec, layout);
		this.show(this.order[0].name);
		return sec;
	};
	SourceView.prototype.show = function (name, line) {
		const f = this.files.get(name);
		if (!f)
			return;
		for (const [n, li] of this.fileItems)
			li.classList.toggle("active", n === name);
		this.cur = f;
		this.pane.textContent = "";
		this.panel.hidden = true;
		const src = (app.data.sources || {})[name];
		const cols = this.idx.cols;
		add(this.pane, el("div", { class: "src-title" }, el("code", null, src && src.path ? src.path : name)));
		const head = el("div", { class: "src-head" }, el("span", { class: "ln" }, "line"), el("span", { class: "count" }, "executions"));
		for (const c of cols)
			add(head, title(el("span", { class: "key" }, shortMod(c.mod)), c.mod + ": " + c.label + " of the line's sites (the largest)"));
		add(head, el("span", { class: "text" }, "source"));
		add(this.pane, head);
		if (!src || !Array.isArray(src.lines)) {
			add(this.pane, el("p", { class: "missing" }, src && src.missing ? src.missing : "The source of " + name + " is not in the report."));
			/* the annotated lines alone, as many as a big file has: virtualized like its text */
			const nums = Array.from(f.lines.keys()).sort(function (a, b) { return a - b; });
			const body = el("div", { class: "src-body" + (nums.length > VIRTUAL ? " virtual" : "") });
			add(this.pane, body);
			if (nums.length > VIRTUAL)
				this.virtual(body, f, null, nums);
			else
				for (const ln of nums)
					add(body, this.row(f, ln, null));
			body.rowOf = function (ln) {
				let lo = 0, hi = nums.length;
				while (lo < hi) {
					const mid = (lo + hi) >> 1;
					if (nums[mid] < ln)
						lo = mid + 1;
					else
						hi = mid;
				}
				return lo;
			};
			const at = line || this.hottest(f);
			if (at)
				this.scrollTo(body, at, !!line);
			return;
		}
		const n = src.lines.length;
		const body = el("div", { class: "src-body" + (n > VIRTUAL ? " virtual" : "") });
		add(this.pane, body);
		if (n > VIRTUAL)
			this.virtual(body, f, src.lines);
		else {
			const frag = document.createDocumentFragment();
			for (let i = 1; i <= n; i++)
				frag.appendChild(this.row(f, i, src.lines[i - 1]));
			/* sites on lines past the end (an edited file): still listed */
			for (const ln of f.lines.keys())
				if (ln > n)
					frag.appendChild(this.row(f, ln, ""));
			body.appendChild(frag);
		}
		const target = line || this.hottest(f);
		if (target)
			this.scrollTo(body, target, !!line);
	};
	function shortMod(m) {
		return { "dependence": "dep", "object-relative": "objrel", "structure-affinity": "affinity", "value-pattern": "values",
		         "rds-shape": "rds", "alloc-sizes": "alloc", "shadow-cost": "shadow" }[m] || m;
	}
	SourceView.prototype.hottest = function (f) {
		let best = 0, line = 0;
		for (const [ln, ids] of f.lines) {
			const e = this.lineExec(ids);
			if (e > best) {
				best = e;
				line = ln;
			}
		}
		return line;
	};
	SourceView.prototype.row = function (f, ln, text) {
		const self = this, ids = f.lines.get(ln);
		const r = el("div", { class: "line", "data-line": ln });
		const e = ids ? this.lineExec(ids) : 0;
		const t = logScale(e, f.max);
		const cnt = el("span", { class: "count" }, e ? fmtNum(e) : "");
		if (e)
			cnt.setAttribute("style", "background:" + heat(0.08 + 0.8 * t) + ";color:" + ink(0.08 + 0.8 * t));
		add(r, el("span", { class: "ln" }, String(ln)), cnt);
		for (const c of this.idx.cols) {
			const v = ids ? this.lineKey(ids, c.mod) : null;
			add(r, el("span", { class: "key" }, v === null ? "" : fmtNum(v)));
		}
		add(r, el("span", { class: "text" }, text === null ? "" : text));
		if (ids) {
			r.classList.add("has-sites");
			title(r, ids.length + (ids.length === 1 ? " site" : " sites") + ": click for their rows");
			r.addEventListener("click", function () { self.details(f, ln, r); });
		}
		return r;
	};
	/* Only the rows in view (and MARGIN more each side): the text's lines, or (a source not in
	 * the page) nums, the annotated lines' numbers. */
	SourceView.prototype.virtual = function (body, f, lines, nums) {
		const self = this, n = nums ? nums.length : lines.length, MARGIN = 40;
		body.style.height = "70vh";
		const spacer = el("div", { class: "spacer" });
		spacer.style.height = (n * LINE_PX) + "px";
		const win = el("div", { class: "window" });
		add(spacer, win);
		add(body, spacer);
		let from = -1, to = -1, pending = false;
		function draw() {
			pending = false;
			const top = body.scrollTop, h = body.clientHeight || 700;
			const a = Math.max(0, Math.floor(top / LINE_PX) - MARGIN), b = Math.min(n, Math.ceil((top + h) / LINE_PX) + MARGIN);
			if (a === from && b === to)
				return;
			from = a;
			to = b;
			win.textContent = "";
			win.style.transform = "translateY(" + (a * LINE_PX) + "px)";
			const frag = document.createDocumentFragment();
			for (let i = a; i < b; i++)
				frag.appendChild(nums ? self.row(f, nums[i], null) : self.row(f, i + 1, lines[i]));
			win.appendChild(frag);
		}
		body.addEventListener("scroll", function () {
			if (!pending) {
				pending = true;
				requestAnimationFrame(draw);
			}
		});
		body.redraw = draw;
		draw();
	};
	SourceView.prototype.scrollTo = function (body, line, mark) {
		const go = function () {
			body.scrollTop = Math.max(0, ((body.rowOf ? body.rowOf(line) + 1 : line) - 6) * LINE_PX);
			if (body.redraw)
				body.redraw();
			if (mark) {
				const r = body.querySelector('.line[data-line="' + Number(line) + '"]');
				if (r) {
					r.classList.add("flash");
					r.click();
				}
			}
		};
		/* a hidden or detached pane has no layout: scroll once it is shown (ProfileView.select) */
		this.pending = body.clientHeight ? null : go;
		go();
	};
	SourceView.prototype.details = function (f, ln, rowEl) {
		const view = this.view, ids = f.lines.get(ln) || [];
		const old = this.pane.querySelector(".line.selected");
		if (old)
			old.classList.remove("selected");
		rowEl.classList.add("selected");
		const p = this.panel;
		p.textContent = "";
		p.hidden = false;
		const close = el("button", { type: "button", class: "close" }, "×");
		close.addEventListener("click", function () { p.hidden = true; rowEl.classList.remove("selected"); });
		add(p, close, el("h3", null, view.sites.file(f.name) + ":" + ln));
		const want = new Set(ids);
		for (const id of ids)
			add(p, el("div", { class: "panel-site" }, el("b", null, view.sites.kind(id) + " "), siteCell(view, id),
				this.idx.exec.has(id) ? el("span", { class: "stats" }, " executions " + fmtNum(this.idx.exec.get(id))) : null));
		for (const mod of view.p.modules) {
			const sec = (view.p.root.modules || {})[mod.name];
			const found = rowsNaming(sec, want, mod.weights || {});
			if (!found.length)
				continue;
			add(p, el("h4", null, mod.name));
			for (const t of found)
				add(p, el("div", { class: "panel-table" }, el("div", { class: "caption" }, t.path.replace(/\//g, " › ")),
					pagedTable(view, t.rows, { weight: t.weight })));
		}
		if (p.scrollIntoView)
			p.scrollIntoView({ block: "nearest" });
	};
	/* The rows of a section's tables (nested ones too) whose site columns name one of ids. */
	function rowsNaming(sec, ids, weights) {
		const out = [];
		function walk(o, path, depth) {
			if (!o || typeof o !== "object" || depth > 5)
				return;
			if (Array.isArray(o)) {
				if (!o.length || !o[0] || typeof o[0] !== "object" || Array.isArray(o[0]))
					return;
				const hit = [];
				for (const r of o) {
					for (const k in r) {
						if (siteColumn(k) && (ids.has(String(r[k])) || Array.isArray(r[k]) && r[k].some(function (x) { return ids.has(String(x)); }))) {
							hit.push(r);
							break;
						}
					}
				}
				if (hit.length)
					out.push({ path: path, rows: hit, weight: weights[path] });
				if (o.length <= 5000)
					for (const r of o)
						for (const k in r)
							if (r[k] && typeof r[k] === "object")
								walk(r[k], path + "/[]/" + k, depth + 1);
				return;
			}
			for (const k of Object.keys(o))
				walk(o[k], path ? path + "/" + k : k, depth + 1);
		}
		walk(sec, "", 0);
		return out;
	}

	/* ---------- one profile ---------- */
	function ProfileView(p, i) {
		this.p = p;
		this.id = "p" + i;
		this.sites = new Sites(p.root || {});
	}
	ProfileView.prototype.goto = function (file, line) {
		this.select("source");
		this.src.show(file, line);
	};
	ProfileView.prototype.select = function (name) {
		for (const t of this.tabs) {
			const on = t.name === name;
			if (on)
				this.fill(t);
			if (on && t.name === "source" && this.src.pending && document.body.contains(t.sec)) {
				const go = this.src.pending;
				this.src.pending = null;
				t.sec.classList.add("active");
				go();
			}
			t.tab.classList.toggle("active", on);
			t.tab.setAttribute("aria-selected", on ? "true" : "false");
			t.sec.classList.toggle("active", on);
		}
	};
	ProfileView.prototype.build = function () {
		const self = this, p = this.p, root = p.root || {};
		const box = el("div", { class: "profile", "data-path": p.path });
		add(box, header(p, root));
		const tabs = el("nav", { class: "tabs", role: "tablist" });
		const panes = el("div", { class: "panes" });
		add(box, tabs, panes);
		this.tabs = [];
		const t1 = performance.now();
		this.src = new SourceView(this);
		if (DEBUG)
			console.log("mnemo report: source index " + Math.round(performance.now() - t1) + " ms");
		const entries = [{ name: "source", label: "Source", make: function () { return self.src.build(); } }];
		for (const mod of p.modules || [])
			entries.push({ name: mod.name, label: mod.name, make: function () { return moduleSection(self, mod); } });
		/* report.html#dependence opens that tab (links, screenshots) */
		let hash = "";
		try {
			hash = decodeURIComponent((location.hash || "").slice(1));
		} catch (err) { /* a malformed #fragment opens the Source tab */ }
		const want = entries.some(function (e) { return e.name === hash; }) ? hash : "source";
		for (const e of entries) {
			const tab = el("button", { type: "button", class: "tab", role: "tab", "data-tab": e.name }, e.label);
			tab.addEventListener("click", function () {
				self.select(e.name);
				try {
					history.replaceState(null, "", "#" + encodeURIComponent(e.name));
				} catch (err) { /* some browsers refuse it on file: URLs */ }
			});
			add(tabs, tab);
			const t = { name: e.name, tab: tab, sec: null, make: e.make };
			this.tabs.push(t);
			if (app.big && e.name !== want) {
				/* A large profile shows its first tab at once and builds the others just after,
				 * one per task, so the page paints first; a click builds a tab's at once. */
				t.sec = el("section", { class: e.name === "source" ? "source pane" : "module pane", "data-module": e.name === "source" ? null : e.name },
					el("p", { class: "note" }, "Building this view…"));
				setTimeout(function () { self.fill(t); }, 0);
			} else {
				this.fill(t);
			}
			add(panes, t.sec);
		}
		this.select(want);
		return box;
	};
	/* Builds a tab's section (in place of its placeholder, if any). */
	ProfileView.prototype.fill = function (t) {
		if (t.built)
			return;
		t.built = true;
		let sec;
		const t0 = performance.now();
		try {
			sec = t.make();
			if (DEBUG)
				console.log("mnemo report: " + t.name + " " + Math.round(performance.now() - t0) + " ms");
		} catch (err) {
			showError(t.name + ": " + err.message);
			console.error(err);
			sec = el("section", { class: t.name === "source" ? "source" : "module", "data-module": t.name === "source" ? null : t.name },
				el("p", { class: "missing" }, "This view failed: " + err.message));
		}
		sec.classList.add("pane");
		if (t.sec) {
			sec.classList.toggle("active", t.sec.classList.contains("active"));
			t.sec.replaceWith(sec);
		}
		t.sec = sec;
	};
	function header(p, root) {
		const prog = root.program || {};
		const h = el("header", { class: "profile-head" });
		const argv = Array.isArray(prog.argv) ? prog.argv.join(" ") : String(prog.argv || "");
		add(h, el("h1", null, el("span", { class: "brand" }, "Mnemo"), " ", el("code", { class: "argv" }, argv || "(program)")));
		const facts = el("div", { class: "facts" });
		const fact = function (k, v, tip) {
			const s = el("span", { class: "fact" }, el("span", { class: "k" }, k), " ", el("span", { class: "v" }, v));
			if (tip)
				title(s, tip);
			add(facts, s);
		};
		if (prog.signal !== null && prog.signal !== undefined)
			fact("signal", String(prog.signal));
		else if (prog.exit_status !== undefined)
			fact("exit", String(prog.exit_status));
		if (isNum(prog.wall_seconds))
			fact("wall", fmtNum(prog.wall_seconds) + " s", "wall-clock time of the profiled run");
		if (prog.events !== undefined)
			fact("events", fmtNum(prog.events), "events the instrumented program sent");
		if (Array.isArray(root.threads))
			fact("threads", String(root.threads.length));
		fact("profile", p.path);
		add(h, facts);
		if (p.complete === false)
			add(h, el("div", { class: "incomplete" }, "INCOMPLETE profile: " + (p.incomplete_reason || "no reason given") +
				". Its figures cover only part of the run."));
		else
			add(facts, el("span", { class: "fact ok" }, "complete"));
		return h;
	}

	/* ---------- start ---------- */
	function main() {
		const root = document.getElementById("mnemo-app");
		const t0 = performance.now();
		root.textContent = "";
		const text = document.getElementById("mnemo-data").textContent;
		app.big = text.length > 4000000;
		const data = JSON.parse(text);
		if (DEBUG)
			console.log("mnemo report: JSON.parse " + Math.round(performance.now() - t0) + " ms");
		if (!data || data.format !== "mnemo-html/1")
			throw new Error("unknown data format " + (data && data.format));
		app.data = data;
		const profiles = Array.isArray(data.profiles) ? data.profiles : [];
		if (profiles.length > 1) {
			const sel = el("select", { class: "profile-select", "aria-label": "profile" });
			profiles.forEach(function (p, i) { add(sel, el("option", { value: String(i) }, p.path)); });
			sel.addEventListener("change", function () {
				app.views.forEach(function (v, i) {
					v.box.classList.toggle("active", String(i) === sel.value);
					if (String(i) === sel.value)
						v.select(v.tabs.find(function (t) { return t.sec.classList.contains("active"); }).name);
				});
			});
			add(root, el("div", { class: "profile-bar" }, el("label", null, "Profile "), sel, " (" + profiles.length + " profiles)"));
		}
		profiles.forEach(function (p, i) {
			const v = new ProfileView(p, i);
			v.box = v.build();
			if (i === 0)
				v.box.classList.add("active");
			app.views.push(v);
			add(root, v.box);
			if (i === 0)
				v.select(v.tabs.find(function (t) { return t.sec.classList.contains("active"); }).name);
		});
		/* For bench/html.sh: when the first view was drawn, from navigation start. */
		document.documentElement.setAttribute("data-ready-ms", String(Math.round(performance.now())));
		if (DEBUG)
			console.log("mnemo report: built in " + Math.round(performance.now() - t0) + " ms, " + Math.round(performance.now()) + " ms after navigation");
	}
	try {
		main();
	} catch (e) {
		showError(e && e.message ? e.message : String(e));
		console.error(e);
	}
})();
