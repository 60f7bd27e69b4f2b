#!/usr/bin/env python3
"""Checks the source layout: includes follow the layers, no include cycles, no long files.

Usage: tools/check-includes.py

LAYERS lists the source folders from the bottom up, as docs/ARCHITECTURE.md ("Layers") describes
them. A file may include ("...", paths from the repository's root) files of its own folder, of the
folders of lower layers and of the other folders of its own layer, but folders must not include each
other, directly or through others. Every C++ and CUDA source file outside the build trees must lie in
one of these folders and have at most MAX_LINES lines. The exit status is 1 when anything breaks
these rules, each break listed.
"""
import os
import re
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# From the bottom up; a folder stands for everything under it but the folders listed themselves.
LAYERS = [
    ["simulator/core"],
    ["cost_models"],
    ["simulator/graph"],
    ["simulator/engine"],
    ["simulator/workload"],
    ["simulator/plan"],
    ["simulator/planner", "simulator/resilience"],
    ["simulator/io"],
    ["calibration"],
    ["kernels"],
    ["tools", "tests"],
]
LAYER_OF = {folder: rank for rank, folders in enumerate(LAYERS) for folder in folders}
MAX_LINES = 600
SOURCE_SUFFIXES = (".cpp", ".hpp", ".cu", ".cuh")
INCLUDE = re.compile(r'\s*#\s*include\s*"([^"]+)"')


def folder_of(path):
    """The listed folder that holds `path` (the deepest), or None."""
    parts = path.split("/")
    for n in range(len(parts) - 1, 0, -1):
        folder = "/".join(parts[:n])
        if folder in LAYER_OF:
            return folder
    return None


def source_files():
    """Every source file, as a path from the root; build trees and hidden folders skipped."""
    for directory, subdirectories, files in os.walk(ROOT):
        relative = os.path.relpath(directory, ROOT)
        subdirectories[:] = sorted(d for d in subdirectories
                                   if not d.startswith(".") and not (relative == "." and d.startswith("build")))
        for name in sorted(files):
            if name.endswith(SOURCE_SUFFIXES):
                yield os.path.normpath(os.path.join(relative, name)).replace(os.sep, "/")


def include_cycles(edges):
    """The sets of folders that include each other (strongly connected components of two or more)."""
    index, low, on_stack, stack, cycles = {}, {}, set(), [], []

    def visit(folder):
        index[folder] = low[folder] = len(index)
        stack.append(folder)
        on_stack.add(folder)
        for target in sorted(edges.get(folder, {})):
            if target not in index:
                visit(target)
                low[folder] = min(low[folder], low[target])
            elif target in on_stack:
                low[folder] = min(low[folder], index[target])
        if low[folder] == index[folder]:
            component = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == folder:
                    break
            if len(component) > 1:
                cycles.append(sorted(component))

    for folder in sorted(edges):
        if folder not in index:
            visit(folder)
    return cycles


def main():
    if len(sys.argv) > 1:
        print(__doc__.strip())
        return 0 if sys.argv[1] in ("-h", "--help") else 2
    problems = []
    edges = {}  # folder -> folder it includes -> the first include that does
    files = list(source_files())
    for path in files:
        folder = folder_of(path)
        if folder is None:
            problems.append(f"{path}: in no folder of the layer order (LAYERS in tools/check-includes.py)")
            continue
        with open(os.path.join(ROOT, path), encoding="utf-8", errors="replace") as file:
            lines = file.read().splitlines()
        if len(lines) > MAX_LINES:
            problems.append(f"{path}: {len(lines)} lines, more than {MAX_LINES}")
        for number, line in enumerate(lines, start=1):
            match = INCLUDE.match(line)
            if not match:
                continue
            included = match.group(1)
            target = folder_of(included)
            where = f"{path}:{number}: includes {included}"
            if target is None:
                problems.append(f"{where}, which is in no folder of the layer order")
            elif LAYER_OF[target] > LAYER_OF[folder]:
                problems.append(f"{where}: {target} is a higher layer than {folder}")
            elif target != folder:
                edges.setdefault(folder, {}).setdefault(target, where)
    for cycle in include_cycles(edges):
        examples = "; ".join(edges[a][b] for a in cycle for b in cycle if b in edges.get(a, {}))
        problems.append(f"include cycle between {', '.join(cycle)} ({examples})")
    if problems:
        print(f"tools/check-includes.py: {len(problems)} problem(s):", *problems, sep="\n  ")
        return 1
    print(f"tools/check-includes.py: {len(files)} files: includes follow the layers, no file over {MAX_LINES} lines")
    return 0


if __name__ == "__main__":
    sys.exit(main())
