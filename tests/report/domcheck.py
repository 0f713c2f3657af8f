#!/usr/bin/env python3
"""Checks a DOM that headless Chromium dumped (--dump-dom) from a page of `mnemo report --html`
against tools/html's skeleton (docs: /work/notes/i24-spec.md, kept in tools/html/html.c).  Every
failure is printed; exit status 1 if any.

Always checked (injection and crashes): the page holds exactly the skeleton's two <script>
elements (the JSON data, then the code), no <img>, <iframe>, <object>, <embed>, <frame>, <base>,
<link> or <form>, no attribute named on* and no javascript: URL anywhere, and no
<div class="mnemo-error"> (the page's window.onerror reports there).
  --module NAME      a <section class="module" data-module="NAME"> exists (repeatable)
  --svg CLASS        an <svg class="CLASS"> exists that draws something (repeatable)
  --line N:TEXT      the source view (<section class="source">) has a row class "line",
                     data-line="N", showing TEXT (white space runs compared as one space) and a
                     cell class "count" holding a number (repeatable)
  --text STRING      STRING is shown as text somewhere in the page (repeatable): escaped, not
                     dropped and not turned into markup
"""
import argparse
import html.parser
import re
import sys

VOID = {"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "param",
        "source", "track", "wbr", "frame", "keygen"}
FORBIDDEN = {"img", "iframe", "object", "embed", "frame", "base", "link", "form"}
SHAPES = {"path", "rect", "circle", "ellipse", "line", "polyline", "polygon", "text"}


class Node:
    def __init__(self, tag, attrs, parent):
        self.tag, self.attrs, self.parent = tag, dict(attrs), parent
        self.children, self.text = [], []

    def classes(self):
        return (self.attrs.get("class") or "").split()

    def walk(self):
        yield self
        for c in self.children:
            yield from c.walk()

    def content(self):
        """The element's text as the page shows it (scripts and styles left out)."""
        if self.tag in ("script", "style"):
            return ""
        return "".join(t if isinstance(t, str) else t.content() for t in self.text)


class Builder(html.parser.HTMLParser):
    """A tree of the dumped DOM.  Chromium writes every non-void element's end tag, so a stack
    suffices; an end tag closes up to its matching start."""

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.root = Node("#document", [], None)
        self.cur = self.root

    def handle_starttag(self, tag, attrs):
        node = Node(tag, [(k, v or "") for k, v in attrs], self.cur)
        self.cur.children.append(node)
        self.cur.text.append(node)
        if tag not in VOID:
            self.cur = node

    def handle_startendtag(self, tag, attrs):
        self.handle_starttag(tag, attrs)
        if tag not in VOID:
            self.cur = self.cur.parent

    def handle_endtag(self, tag):
        node = self.cur
        while node is not self.root and node.tag != tag:
            node = node.parent
        if node is not self.root:
            self.cur = node.parent

    def handle_data(self, data):
        self.cur.text.append(data)


def squash(s):
    return " ".join(s.split())


def injection(root, errors):
    nodes = list(root.walk())
    scripts = [n for n in nodes if n.tag == "script"]
    if len(scripts) != 2 or scripts[0].attrs.get("id") != "mnemo-data" or \
            scripts[0].attrs.get("type") != "application/json" or scripts[1].attrs:
        errors.append(f"{len(scripts)} <script> elements: "
                      f"{[n.attrs for n in scripts]}; the skeleton has two, "
                      "<script type=\"application/json\" id=\"mnemo-data\"> then <script>")
    for n in nodes:
        if n.tag in FORBIDDEN:
            errors.append(f"injected element <{n.tag} {n.attrs}>")
        for k, v in n.attrs.items():
            if k.startswith("on"):
                errors.append(f"<{n.tag}> has an event handler attribute {k}={v!r}")
            if re.match(r"\s*javascript:", v, re.I):
                errors.append(f"<{n.tag}> has a javascript: URL in {k}={v!r}")
        if "mnemo-error" in n.classes():
            errors.append(f"the page reports a script error: {squash(n.content())!r}")


def modules(root, names, errors):
    found = {n.attrs.get("data-module") for n in root.walk()
             if n.tag == "section" and "module" in n.classes()}
    for name in names:
        if name not in found:
            errors.append(f"no <section class=\"module\" data-module=\"{name}\"> "
                          f"(sections: {sorted(x for x in found if x)})")


def svgs(root, classes, errors):
    for cls in classes:
        drawn = [n for n in root.walk() if n.tag == "svg" and cls in n.classes()]
        if not drawn:
            errors.append(f"no <svg class=\"{cls}\">")
        elif not any(m.tag in SHAPES for n in drawn for m in n.walk()):
            errors.append(f"<svg class=\"{cls}\">: {len(drawn)} drawn, none holds a shape "
                          f"({', '.join(sorted(SHAPES))})")


def lines(root, specs, errors):
    if not specs:
        return
    source = [n for n in root.walk() if n.tag == "section" and "source" in n.classes()]
    if not source:
        errors.append("no <section class=\"source\">")
        return
    rows = {}
    for n in source[0].walk():
        if "line" in n.classes() and "data-line" in n.attrs:
            rows.setdefault(n.attrs["data-line"], n)
    for spec in specs:
        num, _, text = spec.partition(":")
        row = rows.get(num)
        if row is None:
            errors.append(f"source view: no row class \"line\" with data-line=\"{num}\" "
                          f"({len(rows)} rows)")
            continue
        shown = squash(row.content())
        if squash(text) not in shown:
            errors.append(f"source line {num}: shows {shown!r}, not the line {squash(text)!r}")
        counts = [squash(m.content()) for m in row.walk() if "count" in m.classes()]
        if not counts or not re.search(r"[1-9]", counts[0]):
            errors.append(f"source line {num}: count cell {counts[:1]}, expected a number > 0 "
                          "(the line executed)")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("dump")
    ap.add_argument("--module", action="append", default=[])
    ap.add_argument("--svg", action="append", default=[])
    ap.add_argument("--line", action="append", default=[])
    ap.add_argument("--text", action="append", default=[])
    args = ap.parse_args()
    b = Builder()
    with open(args.dump, encoding="utf-8", errors="replace") as f:
        b.feed(f.read())
    b.close()
    errors = []
    injection(b.root, errors)
    modules(b.root, args.module, errors)
    svgs(b.root, args.svg, errors)
    lines(b.root, args.line, errors)
    shown = b.root.content()
    for s in args.text:
        if s not in shown:
            errors.append(f"the text {s!r} is not shown in the page")
    for e in errors:
        print(f"{args.dump}: {e}", file=sys.stderr)
    sys.exit(1 if errors else 0)


if __name__ == "__main__":
    main()
