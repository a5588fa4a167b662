"""What the Unicode table generators (`confusables_table.py`, `unicode_tables.py`) share: write
the generated module, or with `--check` compare it with what the data gives.

Imported by those scripts from beside them (they put this folder on `sys.path`, as
`generate.py` does for its helpers), so it works however they are run or loaded.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def write_or_check(render: Callable[[], str], output: Path, script: str, doc: str | None) -> int:
    """The command line of a table generator: `python codegen/SCRIPT [--check]`.

    Args:
        render: returns the text of the generated module.
        output: the module's path.
        script: the generator's file name, named in the `--check` message.
        doc: the generator's module docstring (its first line is the `--help` description).

    Returns:
        The exit code: 0 written (or, with `--check`, up to date); 1 with `--check` when the
        module differs from what `render` gives (one line on stdout says which and what to run).
    """
    parser = argparse.ArgumentParser(description=doc.splitlines()[0] if doc else None)
    parser.add_argument("--check", action="store_true")
    args = parser.parse_args()
    text = render()
    if args.check:
        if output.read_text(encoding="utf-8") != text:
            shown = output.relative_to(ROOT) if output.is_relative_to(ROOT) else output
            print(f"{shown} differs from ucd/; run codegen/{script}")
            return 1
        return 0
    output.write_text(text, encoding="utf-8")
    return 0
