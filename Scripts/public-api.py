#!/usr/bin/env python3
"""Lists swift-motion's public API from a build's symbol graphs, one declaration a line, and compares it with
Docs/PublicAPI.txt, so that a change of the public surface is a decision (reviewed in the diff), not an accident.

    Scripts/public-api.py GRAPHS_DIR            # check: exit 1 with the difference when the list changed
    Scripts/public-api.py GRAPHS_DIR --update   # write Docs/PublicAPI.txt

GRAPHS_DIR holds the `*.symbols.json` of `swift build -Xswiftc -emit-symbol-graph -Xswiftc -emit-symbol-graph-dir
-Xswiftc GRAPHS_DIR` (Scripts/check-docs.sh passes its own). Counted: declarations written `public` in Sources/ (not
what the compiler synthesises, what a protocol's extension gives, or what a module re-exports).
"""
import difflib
import glob
import json
import os
import sys

MODULES = ["MotionCore", "MotionAlgorithms", "MotionTrace", "MotionIIO", "MotionClient", "MotionStore", "MotionTesting", "Motion"]
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
LISTING = os.path.join(ROOT, "Docs", "PublicAPI.txt")
GOAL = 800  # issue 24: at most 800 public declarations


def declarations(graphs):
    lines = set()
    for module in MODULES:
        for path in glob.glob(os.path.join(graphs, f"{module}.symbols.json")) + glob.glob(
            os.path.join(graphs, f"{module}@*.symbols.json")
        ):
            for symbol in json.load(open(path))["symbols"]:
                uri = symbol.get("location", {}).get("uri", "")
                if symbol.get("accessLevel") != "public" or f"/Sources/{module}/" not in uri:
                    continue
                if "::SYNTHESIZED::" in symbol["identifier"]["precise"]:
                    continue  # a protocol extension's member as each conforming type shows it: counted once, there
                owner = ".".join(symbol["pathComponents"])
                declaration = "".join(f["spelling"] for f in symbol.get("declarationFragments", []))
                lines.add(f"{module}\t{owner}\t{' '.join(declaration.split())}")
    return sorted(lines)


def main():
    if len(sys.argv) < 2:
        print(__doc__.strip(), file=sys.stderr)
        return 2
    current = declarations(sys.argv[1])
    if not current:
        print(f"public-api: no symbol graphs of {', '.join(MODULES)} in {sys.argv[1]}", file=sys.stderr)
        return 1
    header = [
        "# swift-motion's public API: one declaration a line (module, path, declaration), from the symbol graphs.",
        f"# {len(current)} declarations. Written by Scripts/public-api.py GRAPHS_DIR --update; checked by .ci/run.",
    ]
    if "--update" in sys.argv[2:]:
        with open(LISTING, "w") as out:
            out.write("\n".join(header + current) + "\n")
        print(f"public-api: wrote {LISTING} ({len(current)} declarations; goal at most {GOAL})")
        return 0
    try:
        recorded = [line for line in open(LISTING).read().splitlines() if line and not line.startswith("#")]
    except FileNotFoundError:
        recorded = []
    print(f"public-api: {len(current)} public declarations (goal at most {GOAL}; recorded {len(recorded)})")
    if recorded == current:
        return 0
    diff = difflib.unified_diff(recorded, current, "Docs/PublicAPI.txt", "this build", lineterm="", n=0)
    print("\n".join(list(diff)[:200]), file=sys.stderr)
    print(
        "public-api: the public API changed. If that is intended, run Scripts/check-docs.sh --update-api (or "
        "Scripts/public-api.py GRAPHS_DIR --update) and commit Docs/PublicAPI.txt with the change.",
        file=sys.stderr,
    )
    return 1


sys.exit(main())
