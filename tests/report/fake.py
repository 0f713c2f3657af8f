#!/usr/bin/env python3
"""Writes a stand-in for a page of `mnemo report --html`, built the way the real one is (the
skeleton of tools/html: a JSON data script, then a script that builds the DOM with createElement
and textContent), to check the checkers (selftest.sh): the sound page passes them, and each
--break FAULT makes exactly one check fail:
  svg          the heatmap SVG is missing          module    the value-pattern section is missing
  count        the walk line's count cell is empty        error     the script throws (div.mnemo-error)
  console      console.error at load               csp       a CSP violation (a remote image)
  warning      console.warn at load (every stand-in logs its build time, which is no error)
  img          an <img onerror=...> injected       script    a third <script> element injected
  blank        the page draws nothing
  innerhtml    source lines set as innerHTML       rawjson   <, >, & left raw in the JSON
Usage: fake.py SOURCE MODULES PICTURES OUT [--break FAULT]  (MODULES, PICTURES: comma-separated)."""
import json
import sys

SCRIPT = r"""
'use strict';
window.onerror = function (msg) {
  var d = document.createElement('div');
  d.className = 'mnemo-error';
  d.textContent = String(msg);
  document.body.appendChild(d);
  console.error(msg);
};
var data = JSON.parse(document.getElementById('mnemo-data').textContent);
var app = document.getElementById('mnemo-app');
var SVG = 'http://www.w3.org/2000/svg';
function el(tag, cls, text) {
  var e = document.createElement(tag);
  if (cls) e.className = cls;
  if (text !== undefined) e.textContent = text;
  return e;
}
function picture(cls, hue) {
  var s = document.createElementNS(SVG, 'svg');
  s.setAttribute('class', cls);
  s.setAttribute('width', '160');
  s.setAttribute('height', '90');
  for (var i = 0; i < 6; i++) {
    var r = document.createElementNS(SVG, 'rect');
    r.setAttribute('x', String(10 + 24 * i));
    r.setAttribute('y', String(80 - 12 * i));
    r.setAttribute('width', '20');
    r.setAttribute('height', String(12 * i + 5));
    r.setAttribute('fill', 'hsl(' + (hue + 20 * i) + ',70%,' + (40 + 5 * i) + '%)');
    s.appendChild(r);
  }
  return s;
}
app.textContent = '';
if (!data.blank) {
  app.appendChild(el('h1', '', 'Mnemo report: ' + data.program));
  var src = el('section', 'source');
  var table = el('table');
  data.lines.forEach(function (text, i) {
    var tr = el('tr', 'line');
    tr.setAttribute('data-line', String(i + 1));
    tr.appendChild(el('td', 'num', String(i + 1)));
    tr.appendChild(el('td', 'count', data.counts[i + 1] ? String(data.counts[i + 1]) : ''));
    var cell = el('td', 'text');
    if (data.fault === 'innerhtml') cell.innerHTML = text; else cell.textContent = text;
    tr.appendChild(cell);
    table.appendChild(tr);
  });
  src.appendChild(el('h2', '', data.file));
  src.appendChild(table);
  data.modules.forEach(function (m, k) {
    var sec = el('section', 'module');
    sec.setAttribute('data-module', m);
    sec.appendChild(el('h2', '', m));
    if (k < data.pictures.length) sec.appendChild(picture(data.pictures[k], 45 * k));
    app.appendChild(sec);
  });
  data.pictures.slice(data.modules.length).forEach(function (p, k) {
    app.appendChild(picture(p, 200 + 30 * k));
  });
  app.appendChild(src);
}
if (data.fault === 'error') data.missing.field = 1;
console.log('fake report: built in 5 ms');
if (data.fault === 'console') console.error('TypeError: something went wrong');
if (data.fault === 'warning') console.warn('Warning: ' + data.file + ' looks odd');
if (data.fault === 'csp') {
  var im = new Image();
  im.src = 'https://example.com/x.png';
}
"""

PAGE = """<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'; script-src 'unsafe-inline'; img-src data:">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Mnemo report: fake</title>
<style>
body {{ font-family: sans-serif; margin: 1em; }}
td.text {{ font-family: monospace; white-space: pre; }}
td.count {{ text-align: right; color: #a40; }}
section.module {{ border: 1px solid #ccc; margin: 0.5em 0; padding: 0.5em; background: #f4f8ff; }}
</style></head>
<body><div id="mnemo-app"><noscript>This report needs JavaScript.</noscript></div>
<script type="application/json" id="mnemo-data">{data}</script>
<script>{script}</script>{extra}</body></html>
"""


def main():
    args = sys.argv[1:]
    fault = None
    if "--break" in args:
        i = args.index("--break")
        fault = args[i + 1]
        del args[i:i + 2]
    source, modules, pictures, out = args
    with open(source, encoding="utf-8") as f:
        lines = f.read().split("\n")
    modules, pictures = modules.split(","), pictures.split(",")
    counts = {n + 1: 1000 + n for n, text in enumerate(lines) if "MARK:" in text}
    if fault == "count":
        counts = {n: c for n, c in counts.items() if "MARK:walk" not in lines[n - 1]}
    if fault == "svg":
        pictures.remove("heatmap")
    if fault == "module":
        modules.remove("value-pattern")
    data = {"program": "fake", "file": source, "lines": lines, "counts": counts,
            "modules": modules, "pictures": pictures, "fault": fault, "blank": fault == "blank"}
    text = json.dumps(data)
    if fault != "rawjson":
        text = text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")
    extra = {"img": '<img src="x" onerror="1">', "script": "<script>var injected = 1;</script>"}
    with open(out, "w", encoding="utf-8") as f:
        f.write(PAGE.format(data=text, script=SCRIPT, extra=extra.get(fault, "")))


if __name__ == "__main__":
    main()
