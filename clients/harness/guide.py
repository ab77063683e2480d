#!/usr/bin/env python3
"""Runs a guide as written: every `php`, `ts`, `python` and `sh` block of a Markdown page,
in order, against TALLY_URL (clients/harness/run.sh sets it, with credentials).

  guide.py docs/integrate.md

What a reader installs is stood in for: `vendor/autoload.php` loads the PHP client from
clients/php (as Composer would), `@tally/client` is clients/typescript (as `npm
install ./tally/clients/typescript` would link it), and `tally` is this repository (the
checkout beside the reader's app, its command line built in target/debug). A block fails
the run when it exits non-zero or, for PHP, prints a warning or notice.
"""

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
RUNNABLE = ("php", "ts", "python", "sh")


def blocks(page):
    """(line, language, code) of each runnable fenced block."""
    found = []
    for match in re.finditer(r"^```(\w+)\n(.*?)^```$", page, re.S | re.M):
        if match.group(1) in RUNNABLE:
            line = page.count("\n", 0, match.start()) + 1
            found.append((line, match.group(1), match.group(2)))
    return found


def prepare(work):
    """A folder where the blocks find the clients as a reader's project would."""
    shutil.rmtree(work, ignore_errors=True)
    (work / "vendor").mkdir(parents=True)
    (work / "vendor" / "autoload.php").write_text(
        f"<?php\nrequire {json.dumps(str(ROOT / 'clients' / 'php' / 'autoload.php'))};\n"
    )
    (work / "node_modules" / "@tally").mkdir(parents=True)
    (work / "node_modules" / "@tally" / "client").symlink_to(ROOT / "clients" / "typescript")
    (work / "tally").symlink_to(ROOT)
    (work / "package.json").write_text('{"type": "module", "private": true}\n')
    types = ROOT / "clients" / "typescript" / "node_modules" / "@types"
    # The blocks only: `tally` links the whole repository, whose sources are no block.
    config = {
        "include": ["*.ts"],
        "compilerOptions": {
            "target": "ES2022",
            "module": "NodeNext",
            "moduleResolution": "NodeNext",
            "strict": True,
            "skipLibCheck": True,
            "typeRoots": [str(types)],
            "types": ["node"],
        }
    }
    (work / "tsconfig.json").write_text(json.dumps(config))


def command(work, number, language, code):
    """The command that runs a block, its file written."""
    name = f"block-{number:02}"
    if language == "php":
        (work / f"{name}.php").write_text(code)
        return ["php", "-d", "error_reporting=-1", "-d", "display_errors=stderr", f"{name}.php"]
    if language == "python":
        (work / f"{name}.py").write_text(code)
        return [sys.executable, f"{name}.py"]
    if language == "ts":
        (work / f"{name}.ts").write_text(code)
        tsc = ROOT / "clients" / "typescript" / "node_modules" / ".bin" / "tsc"
        compiled = subprocess.run([str(tsc), "--project", "tsconfig.json"], cwd=work, capture_output=True, text=True)
        if compiled.returncode != 0:
            raise SystemExit(f"{name}.ts does not compile:\n{compiled.stdout}{compiled.stderr}")
        return ["node", f"{name}.js"]
    return ["bash", "-euo", "pipefail", "-c", code]


def main():
    page_path = Path(sys.argv[1])
    page = page_path.read_text()
    work = ROOT / "target" / "clients" / "guide"
    prepare(work)
    found = blocks(page)
    for number, (line, language, code) in enumerate(found, 1):
        ran = subprocess.run(command(work, number, language, code), cwd=work, capture_output=True, text=True)
        output = ran.stdout + ran.stderr
        print(f"--- {page_path}:{line} ({language})\n{output}", end="" if output.endswith("\n") else "\n")
        warned = language == "php" and re.search(r"(Warning|Notice|Deprecated):", ran.stderr)
        if ran.returncode != 0 or warned:
            raise SystemExit(f"{page_path}:{line}: the {language} block failed")
    print(f"{len(found)} passed, 0 failed: the blocks of {page_path}")


if __name__ == "__main__":
    main()
