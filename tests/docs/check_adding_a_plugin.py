#!/usr/bin/env python3
"""Keeps docs/design/adding-a-plugin.md honest.

Every repository path the checklist names in backticks must exist (`<name>` read as `jax`, the
example plugin), and every "`X` in `path`" (also "`X` and `Y` in `path`") must find X in that
file. And the registry is the only list of plugins: every plugin folder whose header defines
kName is registered in runtime/plugins/registry.cc. Run from the repository root.
"""
import os
import re
import sys

DOC = "docs/design/adding-a-plugin.md"
EXAMPLE = "jax"
SYMBOLS_IN = re.compile(
    r"((?:`[^`]+`(?:,\s*|\s+and\s+|\s+or\s+))*`[^`]+`)\s+in\s+`([^`\s]+)`")


def concrete(path):
    return path.replace("<name>", EXAMPLE)


def check_doc(text):
    problems = []
    flat = " ".join(text.split())
    paths = {t for t in re.findall(r"`([^`\s]+)`", flat) if "/" in t and not t.startswith("-")}
    for p in sorted(paths):
        if not os.path.exists(concrete(p)):
            problems.append(f"{DOC} names {p}, which does not exist")
    pairs = 0
    for symbols, path in SYMBOLS_IN.findall(flat):
        if "/" not in path:
            continue
        try:
            with open(concrete(path), encoding="utf-8") as f:
                body = f.read()
        except OSError:
            problems.append(f"{DOC}: {path} cannot be read")
            continue
        for sym in re.findall(r"`([^`]+)`", symbols):
            pairs += 1
            if concrete(sym) not in body:
                problems.append(f"{DOC} says `{sym}` is in {path}; it is not")
    # A checklist that names nothing would pass trivially.
    if len(paths) < 15 or pairs < 15:
        problems.append(f"{DOC}: only {len(paths)} paths and {pairs} symbols found; "
                        "the parser no longer reads the checklist")
    return problems


def check_registry():
    problems = []
    with open("runtime/plugins/registry.cc", encoding="utf-8") as f:
        registry = f.read()
    for name in sorted(os.listdir("runtime/plugins")):
        header = os.path.join("runtime/plugins", name, name + ".h")
        if not os.path.isfile(header):
            continue
        with open(header, encoding="utf-8") as f:
            m = re.search(r"class (\w+) final[^{]*\{.*?kName\b", f.read(), re.S)
        if m and f"{m.group(1)}::kName" not in registry:
            problems.append(f"{header}: plugin {m.group(1)} is not in Registry() "
                            "(runtime/plugins/registry.cc)")
    return problems


def main():
    with open(DOC, encoding="utf-8") as f:
        problems = check_doc(f.read()) + check_registry()
    for p in problems:
        print(p, file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
