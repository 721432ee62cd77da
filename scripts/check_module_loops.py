#!/usr/bin/env python3
"""Fails on any loop of modules inside a folder (issue 34 item 2).

For every folder of `src/` and `parsers/src/`, the nodes are its direct children (a file or a
sub-folder, the module and everything under it) and there is an edge A -> B when code anywhere in
A names an item of B (`use crate::…`, `use super::…`, a `crate::…` path in code). A cycle among
siblings is a loop: shared types belong in a module that both use (the way ripgrep's
grep-matcher sits under searcher and printer). The parent's own `mod.rs` is not a node, so a
child using its parent's items is no loop.

KNOWN holds the loops still to cut, each with its reason; a loop not listed fails the check, and
so does a listed loop that is gone (remove it from the list).

Usage: scripts/check_module_loops.py [REPO]    exit 0 clean, 1 loops, 2 could not run.
"""
import os
import re
import sys

# Loops still to cut (folder, sorted members): each needs its shared types moved down.
KNOWN = {}

CRATES = ["src", "parsers/src"]
PATH = re.compile(r"\b(crate|super|self)((?:::[A-Za-z_][A-Za-z0-9_]*)+)")
USE = re.compile(r"\buse\s+((?:crate|super|self)\b[^;]*);", re.S)
# What is not code, read left to right in one pass so that each hides the others' markers: raw
# strings (`r#"…"#`), strings, char literals (`'"'`, `'\''`; not lifetimes), line and block
# comments. A `//` inside a string, or a quote inside a char literal or a comment, is text.
NOT_CODE = re.compile(
    r'r(#*)".*?"\1|"(?:\\.|[^"\\])*"|\'(?:\\.|[^\'\\\n])\'|//[^\n]*|/\*.*?\*/', re.S
)


def code_only(text):
    """`text` with comments removed and every string and char literal emptied."""
    def blank(m):
        s = m.group(0)
        if s.startswith("/"):
            return ""
        return "' '" if s.startswith("'") else '""'
    return NOT_CODE.sub(blank, text)


def modules(root):
    """Module path (tuple) of every .rs file under a crate root, and the set of module paths."""
    files = {}
    for dirpath, _, names in os.walk(root):
        for n in names:
            if not n.endswith(".rs"):
                continue
            rel = os.path.relpath(os.path.join(dirpath, n), root)
            parts = rel[:-3].split(os.sep)
            if parts[-1] in ("mod", "lib", "main"):
                parts = parts[:-1]
            files[os.path.join(dirpath, n)] = tuple(parts)
    mods = set(files.values())
    # Inline `mod x { … }` blocks are part of their file's module: not separate nodes.
    return files, mods


def expand(tree):
    """`a::{b, c::{d, e}}` -> ["a::b", "a::c::d", "a::c::e"] (one `use` tree)."""
    tree = re.sub(r"\s+", "", tree)
    out = []

    def walk(prefix, t):
        if "{" not in t:
            for p in t.split(","):
                if p:
                    p = p.split("as")[0] if "as" in p and "::" not in p.split("as")[-1] else p
                    out.append(prefix + p)
            return
        head, rest = t.split("{", 1)
        depth, items, cur = 0, [], ""
        body = rest[: rest.rfind("}")]
        for ch in body:
            if ch == "{":
                depth += 1
            elif ch == "}":
                depth -= 1
            if ch == "," and depth == 0:
                items.append(cur)
                cur = ""
            else:
                cur += ch
        items.append(cur)
        for it in items:
            walk(prefix + head, it)

    walk("", tree)
    return out


def resolve(me, is_mod_file, path, mods):
    """The module a `crate::…` / `super::…` / `self::…` path names, or None."""
    parts = [p for p in path.split("::") if p]
    here = list(me) if is_mod_file else list(me[:-1]) + [me[-1]] if me else []
    base = list(me)
    if parts[0] == "crate":
        base, parts = [], parts[1:]
    elif parts[0] in ("super", "self"):
        while parts and parts[0] in ("super", "self"):
            if parts[0] == "super":
                base = base[:-1]
            parts = parts[1:]
    del here
    full = base + parts
    for k in range(len(full), -1, -1):
        if tuple(full[:k]) in mods:
            return tuple(full[:k])
    return None


def main():
    repo = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "..")
    loops = {}
    for crate in CRATES:
        root = os.path.join(repo, crate)
        if not os.path.isdir(root):
            print(f"check_module_loops: no {root}", file=sys.stderr)
            return 2
        files, mods = modules(root)
        edges = {}
        for path, me in files.items():
            with open(path, encoding="utf-8") as fh:
                text = code_only(fh.read())
            # Test modules may reach anywhere: only the code that ships counts.
            cut = re.search(r"#\[cfg\(test\)\]\s*(?:pub(?:\([^)]*\))?\s+)?mod\s+\w+\s*\{", text)
            if cut:
                text = text[: cut.start()]
            is_mod = os.path.basename(path) in ("mod.rs", "lib.rs", "main.rs")
            refs = []
            for u in USE.finditer(text):
                refs.extend(expand(u.group(1)))
            refs.extend(m.group(0) for m in PATH.finditer(USE.sub("", text)))
            for r in refs:
                dst = resolve(me, is_mod, r, mods)
                if dst is None or dst == me:
                    continue
                k = 0
                while k < min(len(me), len(dst)) and me[k] == dst[k]:
                    k += 1
                if k < len(me) and k < len(dst):
                    folder = (crate,) + me[:k]
                    edges.setdefault(folder, {}).setdefault(me[k], set()).add(dst[k])
        for folder, g in edges.items():
            for comp in sccs(g):
                if len(comp) > 1:
                    loops["/".join(folder)] = loops.get("/".join(folder), []) + [sorted(comp)]
    found = {(f, tuple(c)) for f, cs in loops.items() for c in cs}
    known = {(f, tuple(sorted(c))) for f, cs in KNOWN.items() for c in cs}
    bad = False
    for f, c in sorted(found - known):
        print(f"loop in {f}/: {' <-> '.join(c)}")
        bad = True
    for f, c in sorted(known - found):
        print(f"listed loop in {f}/ is gone, remove it from KNOWN: {' <-> '.join(c)}")
        bad = True
    print(f"module loops: {len(found)} found, {len(known)} listed")
    return 1 if bad else 0


def sccs(g):
    """Tarjan's strongly connected components of a dict graph."""
    index, low, stack, on, out = {}, {}, [], set(), []
    counter = [0]
    nodes = set(g) | {d for v in g.values() for d in v}

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in g.get(v, ()):
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
            out.append(comp)

    sys.setrecursionlimit(10000)
    for v in sorted(nodes):
        if v not in index:
            visit(v)
    return out


if __name__ == "__main__":
    sys.exit(main())
