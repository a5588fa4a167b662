"""The Unicode table generators share one command line (`codegen/table_module.py`): each runs
as a script from any folder, `--check` says whether its module is what the data gives."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "codegen"))

from table_module import write_or_check  # noqa: E402


@pytest.mark.parametrize("script", ["confusables_table.py", "unicode_tables.py"])
def test_each_generator_checks_its_module_from_any_folder(script: str, tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, str(ROOT / "codegen" / script), "--check"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert (done.returncode, done.stdout, done.stderr) == (0, "", "")


def test_check_reports_a_module_that_differs_and_writing_fixes_it(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    output = tmp_path / "probe_table.py"
    output.write_text("stale\n", encoding="utf-8")
    monkeypatch.setattr(sys, "argv", ["probe.py", "--check"])
    assert write_or_check(lambda: "fresh\n", output, "probe.py", "Probe.\n\nMore.") == 1
    assert capsys.readouterr().out == f"{output} differs from ucd/; run codegen/probe.py\n"
    monkeypatch.setattr(sys, "argv", ["probe.py"])
    assert write_or_check(lambda: "fresh\n", output, "probe.py", None) == 0
    assert output.read_text(encoding="utf-8") == "fresh\n"
    monkeypatch.setattr(sys, "argv", ["probe.py", "--check"])
    assert write_or_check(lambda: "fresh\n", output, "probe.py", None) == 0
