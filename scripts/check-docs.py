#!/usr/bin/env python3
"""Checks the Markdown pages: every relative link of README.md, docs/ and the clients'
READMEs names a file that exists and, with `#anchor`, a heading of it (GitHub's anchors);
every reference page (docs/*.md) opens with a summary of at most five lines.

  scripts/check-docs.py        # from the repository's root; exit 1 naming each fault
"""

import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
LINK = re.compile(r"\]\(([^)\s]+)\)")
FENCE = re.compile(r"^```.*?^```", re.S | re.M)
SUMMARY_LINES = 5


def pages():
    found = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]
    found += sorted((ROOT / "clients").glob("*/README.md"))
    return found


def anchors(page):
    """GitHub's anchors of a page's headings: lowercase, punctuation dropped, spaces to
    hyphens, a repeated one numbered."""
    seen = {}
    out = set()
    for line in FENCE.sub("", page.read_text()).splitlines():
        heading = re.match(r"#{1,6} (.*)", line)
        if not heading:
            continue
        slug = re.sub(r"[^\w\- ]", "", heading.group(1).strip().lower()).replace(" ", "-")
        count = seen.get(slug, 0)
        seen[slug] = count + 1
        out.add(slug if count == 0 else f"{slug}-{count}")
    return out


def link_faults(page):
    faults = []
    text = FENCE.sub("", page.read_text())
    for target in LINK.findall(text):
        if re.match(r"[a-z]+:", target):
            continue
        path, _, anchor = target.partition("#")
        resolved = (page.parent / path).resolve() if path else page
        where = f"{page.relative_to(ROOT)}: ({target})"
        if not resolved.exists():
            faults.append(f"{where}: no such file")
        elif anchor and resolved.suffix == ".md" and anchor not in anchors(resolved):
            faults.append(f"{where}: no such heading")
    return faults


def summary_faults(page):
    """The first paragraph after the title is the summary."""
    lines = page.read_text().splitlines()
    if not lines or not lines[0].startswith("# "):
        return [f"{page.relative_to(ROOT)}: does not open with a title"]
    body = lines[1:]
    while body and not body[0].strip():
        body.pop(0)
    length = next((i for i, line in enumerate(body) if not line.strip()), len(body))
    if length > SUMMARY_LINES:
        return [f"{page.relative_to(ROOT)}: a summary of {length} lines (at most {SUMMARY_LINES})"]
    return []


def main():
    faults = [fault for page in pages() for fault in link_faults(page)]
    faults += [fault for page in sorted((ROOT / "docs").glob("*.md")) for fault in summary_faults(page)]
    for fault in faults:
        print(fault)
    return 1 if faults else 0


if __name__ == "__main__":
    sys.exit(main())
