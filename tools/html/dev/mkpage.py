#!/usr/bin/env python3
"""Developer stand-in for `mnemo report --html`: builds the page from profiles with PyYAML and
`dot -Tjson`, so report.js/report.css can be worked on without the C writer.  Not used by the
build or the tests; the weights are guessed from column names, not read from the schemas.

    python3 tools/html/dev/mkpage.py [--inject SCRIPT.js] OUT.html PROFILE.mnemo.yaml...

--inject adds SCRIPT.js after report.js (interaction checks: tools/html/dev/clicks.js).
"""
import json, os, subprocess, sys
import yaml

HERE = os.path.dirname(os.path.abspath(__file__))
PREFER = ['iterations', 'traversals', 'stores', 'executions', 'entries', 'cost', 'accesses',
          'count', 'bytes', 'events']


def tables(node, path, out):
    """TABLEPATH -> weight for every list of mappings below node (a guess: see PREFER)."""
    if isinstance(node, dict):
        for k, v in node.items():
            tables(v, path + [str(k)], out)
    elif isinstance(node, list):
        rows = [r for r in node if isinstance(r, dict)]
        if rows:
            cols = rows[0].keys()
            w = next((c for c in (['bytes'] if 'bytes' in cols and 'mean' in cols else []) + PREFER
                      if c in cols), None)
            if w:
                out['/'.join(path)] = w
            for r in rows:
                tables(r, path + ['[]'], out)


def jsonable(v):
    if isinstance(v, dict):
        return {str(k): jsonable(x) for k, x in v.items()}
    if isinstance(v, list):
        return [jsonable(x) for x in v]
    if isinstance(v, bool) or v is None:
        return v
    if isinstance(v, int):
        return v if abs(v) <= 2**53 else str(v)
    if isinstance(v, float):
        return v if v == v and abs(v) != float('inf') else ('nan' if v != v else ('inf' if v > 0 else '-inf'))
    return str(v)


def site_text(sites, s):
    x = sites.get(str(s)) or {}
    if 'file' not in x:
        return 'site %s' % s
    return '%s:%s:%s %s' % (os.path.basename(x['file']), x.get('line'), x.get('column'), x.get('function', ''))


def layout(nodes, edges):
    """nodes [(id,label)], edges [(from,to,label,kind)] -> LAYOUT via dot -Tjson."""
    q = lambda s: '"' + str(s).replace('\\', '\\\\').replace('"', '\\"') + '"'
    src = ['digraph{node[shape=box,fontsize=10,fontname="DejaVu Sans"];edge[fontsize=9,fontname="DejaVu Sans"];']
    src += ['%s[label=%s];' % (q(i), q(l)) for i, l in nodes]
    src += ['%s->%s[label=%s];' % (q(a), q(b), q(l)) for a, b, l, _ in edges]
    d = json.loads(subprocess.run(['dot', '-Tjson'], input='\n'.join(src) + '}', capture_output=True,
                                  text=True, check=True).stdout)
    H = float(d['bb'].split(',')[3])
    W = float(d['bb'].split(',')[2])
    pt = lambda s: [float(s.split(',')[0]), H - float(s.split(',')[1])]
    lay = {'width': W, 'height': H, 'nodes': [], 'edges': []}
    for o in d.get('objects', []):
        x, y = pt(o['pos'])
        lay['nodes'].append({'id': o['name'], 'label': o['label'], 'x': x, 'y': y,
                             'w': float(o['width']) * 72, 'h': float(o['height']) * 72})
    for e, (a, b, l, k) in zip(d.get('edges', []), edges):
        parts = e['pos'].split()
        arrow = None
        if parts[0].startswith('e,'):
            arrow = pt(parts[0][2:]); parts = parts[1:]
        pts = [c for p in parts for c in pt(p)]
        lx, ly = pt(e['lp']) if 'lp' in e else (None, None)
        lay['edges'].append({'from': a, 'to': b, 'label': l, 'kind': k, 'points': pts,
                             'arrow': arrow, 'lx': lx, 'ly': ly})
    return lay


def dep_graphs(sec, sites):
    rows = {}
    for r in sec.get('dependences', []):
        rows.setdefault(r['loop'], []).append(r)
    out = {}
    for loop, rs in rows.items():
        if loop == 0:
            continue
        if len(rs) > 80:
            out[str(loop)] = {'skipped': '%d dependences: more than 80 to draw; the table lists them' % len(rs)}
            continue
        ids = sorted({r['src'] for r in rs} | {r['dst'] for r in rs})
        edges = []
        for r in rs:
            if r['carried']:
                a, b = r.get('min_distance'), r.get('max_distance')
                d = ' d=%s' % a if a == b else ' d=%s..%s' % (a, b)
            else:
                d = ' (not carried)'
            edges.append((str(r['src']), str(r['dst']), '%s%s \u00d7%s' % (r['kind'], d, r['count']), r['kind']))
        out[str(loop)] = layout([(str(i), site_text(sites, i)) for i in ids], edges)
    return out


def shape_graphs(sec, sites):
    out = {}
    key = lambda s, c: '%s@%s' % (s, ','.join(map(str, c))) if c else str(s)
    for t in sec.get('types', []):
        pairs = [(p[0], p[1]) if isinstance(p, list) else (p, None) for p in t.get('sites', [])]
        pairs = [(s, c if isinstance(c, list) else ([c] if c is not None else [])) for s, c in pairs]
        mine = {key(s, c) for s, c in pairs}
        edges = []
        for r in sec.get('static_shape_graph', []):
            a = key(r['src_site'], r.get('src_context'))
            b = key(r['dst_site'], r.get('dst_context'))
            if a in mine:
                edges.append((a, b, '%s stores' % r['stores'], 'self' if a == b else 'static'))
        nodes = {key(s, c): site_text(sites, s) for s, c in pairs}
        for a, b, _, _ in edges:
            nodes.setdefault(b, b)
        out[str(t['type'])] = layout(list(nodes.items()), edges)
    return out


def main():
    global INJECT
    args = sys.argv[1:]
    if args[0] == '--inject':
        INJECT = open(args[1], encoding='utf-8').read()
        args = args[2:]
    out, paths = args[0], args[1:]
    data = {'format': 'mnemo-html/1', 'profiles': [], 'sources': {}}
    for p in paths:
        root = yaml.safe_load(open(p))
        sites = jsonable(root.get('sites', {}))
        mods, graphs = [], {}
        for name, sec in (root.get('modules') or {}).items():
            w = {}
            tables(sec, [], w)
            mods.append({'name': name, 'known': True, 'weights': w})
            if name == 'dependence':
                graphs[name] = dep_graphs(sec, sites)
            if name == 'rds-shape':
                graphs[name] = shape_graphs(sec, sites)
        data['profiles'].append({'path': p, 'root': jsonable(root), 'complete': bool(root.get('complete')),
                                 'incomplete_reason': root.get('incomplete_reason'), 'unchecked': [],
                                 'modules': mods, 'graphs': graphs})
        for s in sites.values():
            f = s.get('file')
            if f and f not in data['sources']:
                try:
                    with open(f, encoding='utf-8', errors='replace') as fh:
                        data['sources'][f] = {'path': f, 'lines': fh.read().split('\n')[:-1]}
                except OSError as e:
                    data['sources'][f] = {'missing': 'cannot open %s: %s' % (f, e.strerror)}
    js = json.dumps(data, ensure_ascii=False).replace('<', '\\u003c').replace('>', '\\u003e') \
        .replace('&', '\\u0026').replace('\u2028', '\\u2028').replace('\u2029', '\\u2029')
    wrap(out, os.path.basename(paths[0]), js)


INJECT = ''


def wrap(out, title, js):
    rd = lambda n: open(os.path.join(HERE, '..', n), encoding='utf-8').read()
    esc = title.replace('&', '&amp;').replace('<', '&lt;').replace('>', '&gt;')
    with open(out, 'w', encoding='utf-8') as f:
        f.write('<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">\n'
                '<meta http-equiv="Content-Security-Policy" content="default-src \'none\'; '
                'style-src \'unsafe-inline\'; script-src \'unsafe-inline\'; img-src data:">\n'
                '<meta name="viewport" content="width=device-width, initial-scale=1">\n'
                '<title>Mnemo report: %s</title>\n<style>\n%s</style></head>\n'
                '<body><div id="mnemo-app"><noscript>This report needs JavaScript.</noscript></div>\n'
                '<script type="application/json" id="mnemo-data">%s</script>\n<script>\n%s</script>%s</body></html>\n'
                % (esc, rd('report.css'), js, rd('report.js'),
                   '<script>\n%s</script>' % INJECT if INJECT else ''))


if __name__ == '__main__':
    main()
