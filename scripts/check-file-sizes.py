#!/usr/bin/env python3
"""Keeps the house's files small: scripts/check-file-sizes.py

Code grows by named steps in small files: a file of code that passes about 400 lines
becomes a folder whose file names read like its steps (its unit tests in `tests.rs`).
This check refuses any tracked file of code past LIMIT lines, files generated from
another (GENERATED) aside, and lists each. Exits 1 when one is found.
"""

import subprocess
import sys

LIMIT = 450
CODE = (".rs", ".py", ".ts", ".mjs", ".js", ".php", ".sh", ".java", ".html")
# Written by a tool from openapi.json, never by hand.
GENERATED = {"clients/typescript/src/schema.ts"}


def main():
    listed = subprocess.run(["git", "ls-files", "-z"], capture_output=True, check=True)
    paths = [p for p in listed.stdout.decode().split("\0") if p.endswith(CODE)]
    too_long = []
    for path in sorted(set(paths) - GENERATED):
        try:
            with open(path, encoding="utf-8") as file:
                lines = sum(1 for _ in file)
        except FileNotFoundError:  # deleted in the working tree, not yet in git
            continue
        if lines > LIMIT:
            too_long.append((path, lines))
    for path, lines in too_long:
        print(f"{path}: {lines} lines, past {LIMIT}: make it a folder of named steps",
              file=sys.stderr)
    if too_long:
        return 1
    print(f"check-file-sizes: {len(paths)} files of code, none past {LIMIT} lines")
    return 0


if __name__ == "__main__":
    sys.exit(main())
