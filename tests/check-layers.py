#!/usr/bin/env python3
"""The engine's core has no circle of units (issue #27).

The graph is drawn from the code's includes and calls: unit A (a .c file of
engine/ or engine/*/) depends on unit B when A uses a function or variable
that B defines and that a header A includes (directly or through other
headers) declares. A circle of such units is a core that can only be
understood, tested or replaced as a whole; this test fails and prints each
circle it finds.

The CUDA backend (engine/cuda/) is a loadable module above the engine: the
engine never calls into it, so it is left out of the core. An element
family file (engine/elements/) is part of the core like any other unit.

    check-layers.py SOURCE_ROOT [--graph]
"""
import os
import re
import sys

root = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), '..')
show_graph = '--graph' in sys.argv
engine = os.path.join(root, 'engine')
LEFT_OUT = {'cuda'}   # loadable modules: above the core
# Circles allowed by name (none: the TIFF reader's pages went into a unit
# below the reader and its layout finder, airy-tiff-page.c); an entry here
# must name a circle that exists (the test says when one is gone).
KNOWN = []

COMMENT = re.compile(r'/\*.*?\*/|//[^\n]*', re.S)
STRING = re.compile(r'"(?:\\.|[^"\\\n])*"|\'(?:\\.|[^\'\\\n])*\'')
INCLUDE = re.compile(r'^\s*#\s*include\s*"([^"]+)"', re.M)
IDENT = re.compile(r'\b[A-Za-z_][A-Za-z0-9_]*\b')
# GNU style: the return type on its own line, the name at the start of the next
FUNC_DEF = re.compile(r'^([A-Za-z_][A-Za-z0-9_]*)\s*\(', re.M)
# exported variables: `const AiryImageFormat airy_tiff_format = {`
VAR_DEF = re.compile(r'^(?:const\s+)?[A-Za-z_][A-Za-z0-9_]*\s+\**([A-Za-z_][A-Za-z0-9_]*)\s*(?:\[[^\]]*\])?\s*=', re.M)
TYPE_DEF = re.compile(r'^G_DEFINE_(?:[A-Z_]*TYPE[A-Z_]*|QUARK)\s*\(\s*([A-Za-z_][A-Za-z0-9_]*)\s*,\s*([A-Za-z_][A-Za-z0-9_]*)', re.M)


def read(path):
    with open(path, encoding='utf-8') as f:
        return f.read()


def strip(text):
    return STRING.sub('""', COMMENT.sub(' ', text))


def units():
    out = []
    for name in sorted(os.listdir(engine)):
        p = os.path.join(engine, name)
        if name.endswith('.c'):
            out.append(p)
        elif os.path.isdir(p) and name not in LEFT_OUT:
            out += [os.path.join(p, n) for n in sorted(os.listdir(p)) if n.endswith('.c')]
    return out


def header_dirs():
    dirs = [engine]
    for name in sorted(os.listdir(engine)):
        p = os.path.join(engine, name)
        if os.path.isdir(p):
            dirs.append(p)
    return dirs


DIRS = header_dirs()


def find_header(name, near):
    for d in [os.path.dirname(near)] + DIRS:
        p = os.path.normpath(os.path.join(d, name))
        if os.path.isfile(p):
            return p
    return None       # config.h, generated or outside the engine


def includes(path, seen=None):
    """The engine's headers a file includes, directly or through others."""
    seen = set() if seen is None else seen
    for name in INCLUDE.findall(read(path)):
        h = find_header(name, path)
        if h and h not in seen:
            seen.add(h)
            includes(h, seen)
    return seen


def definitions(text):
    defs = set()
    lines = text.split('\n')
    for m in FUNC_DEF.finditer(text):
        line_no = text.count('\n', 0, m.start())
        prev = lines[line_no - 1] if line_no > 0 else ''
        if 'static' in prev.split() or m.group(1) in ('if', 'for', 'while', 'switch', 'return'):
            continue
        if prev.strip() == '' or prev.rstrip().endswith((';', '}', '{')):
            continue  # a macro call at the start of a line, not a definition
        defs.add(m.group(1))
    for m in VAR_DEF.finditer(text):
        if not m.group(0).startswith('static'):
            defs.add(m.group(1))
    for m in TYPE_DEF.finditer(text):
        defs.add(m.group(2) + ('_quark' if 'QUARK' in m.group(0) else '_get_type'))
    return defs


def rel(p):
    return os.path.relpath(p, root)


def graph():
    files = units()
    text = {u: strip(read(u)) for u in files}
    defined_in = {}
    for u in files:
        for d in definitions(text[u]):
            defined_in.setdefault(d, set()).add(u)
    header_idents = {}
    edges = {u: {} for u in files}
    for u in files:
        visible = set()
        for h in includes(u):
            if h not in header_idents:
                header_idents[h] = set(IDENT.findall(strip(read(h))))
            visible |= header_idents[h]
        # a macro of a header that calls a function (AIRY_TYPE_STACK) counts
        # as a use by the unit that expands it
        used = set(IDENT.findall(text[u]))
        for ident in used & visible:
            for v in defined_in.get(ident, ()):
                if v != u:
                    edges[u].setdefault(v, set()).add(ident)
    return files, edges


def cycles(files, edges):
    """Tarjan's strongly connected components of more than one unit."""
    index, low, on, stack, out = {}, {}, set(), [], []
    counter = [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in edges[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    sys.setrecursionlimit(10000)
    for v in files:
        if v not in index:
            visit(v)
    return out


def one_circle(comp, edges):
    """A shortest circle through the component's first unit, for the message."""
    start = comp[0]
    members = set(comp)
    prev = {start: None}
    queue = [start]
    while queue:
        v = queue.pop(0)
        for w in sorted(edges[v]):
            if w not in members:
                continue
            if w == start:
                path = [v]
                while prev[path[-1]] is not None:
                    path.append(prev[path[-1]])
                path.reverse()
                return path + [start]
            if w not in prev:
                prev[w] = v
                queue.append(w)
    return comp


def main():
    files, edges = graph()
    if show_graph:
        for u in files:
            for v in sorted(edges[u]):
                print('%s -> %s (%s)' % (rel(u), rel(v), ', '.join(sorted(edges[u][v])[:4])))
    found = cycles(files, edges)
    if len(files) < 20:
        print('FAIL: only %d units found under %s' % (len(files), engine))
        return 1
    names = [set(rel(u) for u in comp) for comp in found]
    stale = [k for k in KNOWN if not any(k <= n for n in names)]
    if stale:
        for k in stale:
            print('FAIL: the known circle %s is gone: remove it from KNOWN' % ' '.join(sorted(k)))
        return 1
    new = [comp for comp, n in zip(found, names) if n not in KNOWN]
    for comp in found:
        if comp not in new:
            print('note: the known circle %s' % ' '.join(rel(u) for u in comp))
    if not new:
        print('ok: %d units of the engine, no circle%s' % (len(files), ' but the known one' if KNOWN else ''))
        return 0
    for comp in new:
        circle = one_circle(comp, edges)
        print('FAIL: a circle of %d units: %s' % (len(comp), ' '.join(rel(u) for u in comp)))
        for a, b in zip(circle, circle[1:]):
            print('  %s -> %s (uses %s)' % (rel(a), rel(b), ', '.join(sorted(edges[a][b])[:4])))
    return 1


sys.exit(main())
