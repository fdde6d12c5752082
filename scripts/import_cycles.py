#!/usr/bin/env python3
"""Import circles between the workspace's Rust files.

Builds a file-level import graph of every crate (`ir`, `codegen`, `runtime`,
`compile`, the facade `src`, `conformance`): an edge A -> B when A names an item
defined in B, through a `use` or a `crate::`/`super::`/`self::` path. A name
imported through a re-export (`pub use`, or a parent's `use` that its children
read through `super::`) is followed to the file that defines it, and re-exports
themselves are not edges. Inline `#[cfg(test)] mod ... { }` blocks are left
out. Prints each strongly connected component of two or more files, with the
names behind each edge, then the count.

It reads text, so it is an approximation: a method called on a type defined
elsewhere (an `impl` block in another file) is not an edge.

Usage: python3 scripts/import_cycles.py [REPO_ROOT]
"""
import os
import re
import sys

CRATES = ["ir/src", "codegen/src", "runtime/src", "compile/src", "src", "conformance/src"]
USE = re.compile(r"\b(?:pub(?:\([^)]*\))?\s+)?use\s+([^;]+);")
PATH = re.compile(r"\b((?:crate|super|self)(?:::\w+)+)")


def module_files(src):
    """Module path (a tuple) -> file, for one crate's source folder."""
    mods = {}
    for folder, _, names in os.walk(src):
        for name in names:
            if not name.endswith(".rs"):
                continue
            path = os.path.join(folder, name)
            parts = os.path.relpath(path, src)[:-3].split(os.sep)
            if parts[-1] in ("mod", "lib", "main"):
                parts = parts[:-1]
            mods[tuple(parts)] = path
    return mods


def without_comments_and_tests(text):
    text = re.sub(r"//[^\n]*", "", text)
    while True:
        m = re.search(r"#\[cfg\(test\)\]\s*mod\s+\w+\s*\{", text)
        if not m:
            return text
        depth, j = 0, m.end() - 1
        while j < len(text):
            if text[j] == "{":
                depth += 1
            elif text[j] == "}":
                depth -= 1
                if depth == 0:
                    break
            j += 1
        text = text[: m.start()] + text[j + 1 :]


def expand(tree):
    """`a::{b, c::{d}}` -> [`a::b`, `a::c::d`]."""
    tree = tree.strip()
    i = tree.find("{")
    if i < 0:
        return [tree]
    prefix, inner = tree[:i], tree[i + 1 : tree.rfind("}")]
    parts, depth, cur = [], 0, ""
    for ch in inner:
        depth += (ch == "{") - (ch == "}")
        if ch == "," and depth == 0:
            parts.append(cur)
            cur = ""
        else:
            cur += ch
    if cur.strip():
        parts.append(cur)
    return [prefix + e for p in parts for e in expand(p.strip())]


def references(text):
    """(path, is a pub re-export) for every `use` and inline path."""
    out = []
    for m in USE.finditer(text):
        public = m.group(0).lstrip().startswith("pub")
        for p in expand(m.group(1).replace("\n", " ")):
            out.append((re.sub(r"\s+as\s+\w+$", "", p.strip()), public))
    for m in PATH.finditer(USE.sub("", text)):
        out.append((m.group(1), False))
    return out


def crate_edges(src, edges, why):
    mods = module_files(src)
    texts = {}

    def text(path):
        if path not in texts:
            with open(path) as f:
                texts[path] = without_comments_and_tests(f.read())
        return texts[path]

    def resolve(cur, path):
        segs = [s for s in path.split("::") if s]
        if segs[0] == "crate":
            base, segs = (), segs[1:]
        elif segs[0] == "self":
            base, segs = cur, segs[1:]
        elif segs[0] == "super":
            base = cur
            while segs and segs[0] == "super":
                base, segs = base[:-1], segs[1:]
        elif cur + (segs[0],) in mods:
            base = cur
        else:
            return None
        m = base
        for s in segs:
            if m + (s,) not in mods:
                break
            m = m + (s,)
        return m, segs[len(m) - len(base):]

    def defining(module, item, depth=0):
        """The module that defines `item`, following the imports of `module`."""
        path = mods.get(module)
        if path is None or depth > 5:
            return module
        for p, _ in references(text(path)):
            if p.split("::")[-1] == item:
                r = resolve(module, p)
                if r and r[0] != module:
                    return defining(r[0], item, depth + 1)
        return module

    for module, path in mods.items():
        for p, public in references(text(path)):
            if public:
                continue
            r = resolve(module, p)
            if not r:
                continue
            target, rest = r
            if rest:
                target = defining(target, rest[0])
            tpath = mods.get(target)
            if tpath and tpath != path:
                edges.setdefault(path, set()).add(tpath)
                why.setdefault((path, tpath), set()).add(p.split("::")[-1])


def components(edges):
    """Strongly connected components of two or more files (Tarjan)."""
    index, low, stack, on, out, counter = {}, {}, [], set(), [], [0]
    sys.setrecursionlimit(10000)

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in edges.get(v, ()):
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

    for v in list(edges):
        if v not in index:
            visit(v)
    return out


def main():
    root = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "..")
    edges, why = {}, {}
    for src in CRATES:
        if os.path.isdir(os.path.join(root, src)):
            crate_edges(os.path.join(root, src), edges, why)
    comps = components(edges)
    for comp in comps:
        print(len(comp), "files:", " ".join(os.path.relpath(f, root) for f in comp))
        for a in comp:
            for b in comp:
                if (a, b) in why:
                    names = ", ".join(sorted(why[(a, b)])[:8])
                    print(f"    {os.path.relpath(a, root)} -> {os.path.relpath(b, root)}: {names}")
    print(f"{len(comps)} import circles")


if __name__ == "__main__":
    main()
