#!/usr/bin/env python3
"""tools/structure.py: the module structure of the tree, as the code has it.

  tools/structure.py modules   the include edges between modules (counts), and every include
                               that runs upward (a module including one above it)
  tools/structure.py calls DIR which files of DIR call functions defined in which others, and
                               the call cycles among them (groups of files that call each other
                               round)
  tools/structure.py check     exit 1 when an include runs upward or sort/'s files call round

The order, lowest first (STYLE.md): util; local, exchange, datagen, verify (each on util only);
sort; sim; bench; tests on anything. Reads the sources as text: an #include "module/file.h"
line is an edge; a call is a use of a name (called, or passed as a function) that another file
of the folder defines without "static". Comments and strings are stripped first.
"""

import os
import re
import sys

TOP = os.path.dirname(os.path.dirname(os.path.realpath(__file__)))
RANK = {"util": 0, "local": 1, "exchange": 1, "datagen": 1, "verify": 1, "sort": 2, "sim": 3,
        "bench": 4, "tests": 5}
SOURCES = (".c", ".h", ".cc")


def strip(text):
    """The text without comments and string literals (newlines kept)."""
    text = re.sub(r"/\*.*?\*/", lambda m: "\n" * m.group(0).count("\n"), text, flags=re.S)
    text = re.sub(r"//[^\n]*", "", text)
    return re.sub(r'"(\\.|[^"\\\n])*"', '""', text)


def files(folder):
    d = os.path.join(TOP, folder)
    if not os.path.isdir(d):
        return []
    return sorted(os.path.join(folder, f) for f in os.listdir(d) if f.endswith(SOURCES))


def includes():
    """[(file, module of file, included path, its module)] for every #include "m/x.h"."""
    out = []
    for mod in RANK:
        for f in files(mod) + (files("tests/unit") if mod == "tests" else []):
            with open(os.path.join(TOP, f), errors="replace") as fh:
                for line in fh:
                    m = re.match(r'\s*#\s*include\s+"([a-z]+)/([^"]+)"', line)
                    if m and m.group(1) in RANK:
                        out.append((f, mod, m.group(1) + "/" + m.group(2), m.group(1)))
    return out


def cmd_modules():
    edges, up = {}, []
    for f, mod, inc, to in includes():
        if mod != to:
            edges[(mod, to)] = edges.get((mod, to), 0) + 1
        if RANK[to] > RANK[mod] or (RANK[to] == RANK[mod] and mod != to):
            up.append("%s includes %s" % (f, inc))
    for (a, b), n in sorted(edges.items(), key=lambda kv: (RANK[kv[0][0]], kv[0])):
        print("%-8s -> %-8s %3d includes" % (a, b, n))
    print("upward: %d" % len(up))
    for u in up:
        print("  " + u)
    return up


def call_graph(folder):
    """{file: set of other files of folder whose functions it calls}."""
    defs, text = {}, {}
    for f in files(folder):
        if not f.endswith((".c", ".cc")):
            continue
        with open(os.path.join(TOP, f), errors="replace") as fh:
            t = strip(fh.read())
        text[f] = t
        # Definitions at file scope: a name and its parameters at the start of a line, then a
        # brace (the house style puts it on the next line).
        for m in re.finditer(r"^(?!static\b)[A-Za-z_][\w \*]*?\b([a-z_]\w*)\s*\([^;{]*\)\s*\{",
                             t, re.M):
            defs.setdefault(m.group(1), f)
    graph = {f: set() for f in text}
    for f, t in text.items():
        for name in set(re.findall(r"\b([a-z_]\w*)\b", t)):
            g = defs.get(name)
            if g is not None and g != f:
                graph[f].add(g)
    return graph


def cycles(graph):
    """The strongly connected components of more than one file (Tarjan)."""
    index, low, stack, on, out, n = {}, {}, [], set(), [], [0]

    def visit(v):
        index[v] = low[v] = n[0]
        n[0] += 1
        stack.append(v)
        on.add(v)
        for w in sorted(graph[v]):
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
    for v in sorted(graph):
        if v not in index:
            visit(v)
    return out


def cmd_calls(folder):
    graph = call_graph(folder)
    for f in sorted(graph):
        print("%-22s calls %s" % (f, ", ".join(sorted(graph[f])) or "-"))
    cyc = cycles(graph)
    print("call cycles: %d" % len(cyc))
    for c in cyc:
        print("  " + " <-> ".join(c))
    return cyc


def main(argv):
    if argv[:1] == ["modules"]:
        cmd_modules()
    elif argv[:1] == ["calls"] and len(argv) == 2:
        cmd_calls(argv[1])
    elif argv[:1] == ["check"]:
        up = cmd_modules()
        cyc = cmd_calls("sort")
        return 1 if up or cyc else 0
    else:
        print("usage: tools/structure.py modules | calls DIR | check", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
