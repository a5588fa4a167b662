"""Run tests/guard on the lowest and on the newest SDK releases pyproject.toml allows.

`make test-sdk-matrix` runs this. For each end it keeps a venv under `.cache/sdk-matrix/<end>`
holding the project (editable) with the extras the guard tests need, then:

- `lowest`: every SDK at the lower bound of its range (`mcp>=2.0.0,<3` installs `mcp==2.0.0`);
- `newest`: every SDK at the newest release its range allows (`pip install --upgrade`);

prints the versions installed and runs `pytest tests/guard` there. Exit status 0 only when both
ends pass. The dev venv (`make venv`) holds the versions of constraints-dev.txt instead.
"""

from __future__ import annotations

import argparse
import hashlib
import re
import subprocess
import sys
from pathlib import Path

import tomllib

ROOT = Path(__file__).resolve().parents[1]

#: The extras whose SDKs the guard seams wrap, and what else the guard tests import.
SDK_EXTRAS = ("mcp", "fastmcp", "pydantic-ai")
TEST_EXTRAS = ("test", "cli", "postgresql")

_LOWER = re.compile(r"^(?P<name>[A-Za-z0-9_.-]+)(?:\[[^\]]*\])?\s*>=\s*(?P<version>[^,;\s]+)")


def sdk_requirements(pyproject: Path = ROOT / "pyproject.toml") -> dict[str, str]:
    """The SDK extras' requirements, as `{distribution name: lower bound}`.

    Args:
        pyproject: the project's pyproject.toml.

    Returns:
        One entry per requirement with a `>=` bound in the `mcp`, `fastmcp` and `pydantic-ai`
        extras (a self-reference such as `conduit-mcp-client[mcp]` has none and is skipped).

    Raises:
        ValueError: an SDK requirement that is neither a self-reference nor bounded below.
    """
    project = tomllib.loads(pyproject.read_text(encoding="utf-8"))["project"]
    found: dict[str, str] = {}
    for extra in SDK_EXTRAS:
        for requirement in project["optional-dependencies"][extra]:
            if requirement.startswith(project["name"] + "["):
                continue
            match = _LOWER.match(requirement)
            if match is None:
                raise ValueError(f"[{extra}] {requirement!r} has no lower bound (>=)")
            found[match["name"]] = match["version"]
    return found


def _run(args: list[str]) -> None:
    subprocess.run(args, cwd=ROOT, check=True)


def prepare(end: str, venvs: Path) -> Path:
    """Create or update the venv of `end` ("lowest" or "newest"); returns its python.

    Raises:
        subprocess.CalledProcessError: venv creation or pip failed.
    """
    venv = venvs / end
    python = venv / "bin" / "python"
    stamp = venv / ".pyproject-sha256"
    digest = hashlib.sha256((ROOT / "pyproject.toml").read_bytes()).hexdigest()
    if not python.exists() or not stamp.exists() or stamp.read_text() != digest:
        _run([sys.executable, "-m", "venv", "--clear", str(venv)])
    bounds = sdk_requirements()
    extras = ",".join((*TEST_EXTRAS, *SDK_EXTRAS))
    pip = [str(python), "-m", "pip", "install", "--quiet", "--disable-pip-version-check"]
    if end == "lowest":
        pins = [f"{name}=={version}" for name, version in bounds.items()]
        _run([*pip, "-e", f".[{extras}]", *pins])
    else:
        _run([*pip, "--upgrade", "-e", f".[{extras}]", *bounds])
    stamp.write_text(digest)
    return python


def installed(python: Path) -> str:
    """`name version` of each SDK distribution in the venv of `python`, comma-separated."""
    names = sorted(sdk_requirements())
    code = (
        "import sys\nfrom importlib import metadata\n"
        "print(', '.join(f'{n} {metadata.version(n)}' for n in sys.argv[1:]))"
    )
    done = subprocess.run(
        [str(python), "-c", code, *names], check=True, capture_output=True, text=True
    )
    return done.stdout.strip()


def main(argv: list[str] | None = None) -> int:
    """Prepare both ends, run tests/guard in each; returns the exit status (0: both passed)."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--venvs", type=Path, default=ROOT / ".cache" / "sdk-matrix")
    parser.add_argument("--ends", nargs="+", default=["lowest", "newest"])
    parser.add_argument("pytest_args", nargs="*", default=["tests/guard", "-q", "-n", "2"])
    args = parser.parse_args(argv)
    verdicts: list[str] = []
    failed = False
    for end in args.ends:
        python = prepare(end, args.venvs)
        versions = installed(python)
        print(f"sdk-matrix {end}: {versions}", flush=True)
        status = subprocess.run(
            [str(python), "-m", "pytest", "-p", "no:cacheprovider", *args.pytest_args], cwd=ROOT
        ).returncode
        failed = failed or status != 0
        verdicts.append(f"sdk-matrix {end}: {'passed' if status == 0 else 'FAILED'} ({versions})")
    print("\n".join(verdicts))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
