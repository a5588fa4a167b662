"""The distributions as a user gets them: built, checked, installed into a fresh venv.

`python -m build` (isolated, as a release is built: the sdist first, the wheel from the sdist)
runs once per session into a temporary folder; `twine check --strict` reads both. One
distribution, `conduit-mcp-client`, holds two import packages and the `conduit-mcp` command.

The build (two isolated environments, each installing the backend: about 14 s of CPU) and every
test of what it made are `slow`: `make test-slow` (CI runs it after `make test`) runs them
with the fresh venv installing the wheel; `make test` keeps the checks of pyproject.toml and
of the installed package (the pins, the extras, the faces importable without the CLI).
"""

from __future__ import annotations

import ast
import email.parser
import os
import re
import shlex
import shutil
import subprocess
import sys
import venv
import zipfile
from pathlib import Path

import pytest
import tomllib

from conduit_mcp._program import install_command

ROOT = Path(__file__).resolve().parents[1]
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
DISTRIBUTION = "conduit-mcp-client"
DIST_INFO = f"conduit_mcp_client-{PYPROJECT['project']['version']}.dist-info"

# The tests of this module run on one xdist worker (make test runs --dist loadgroup); the build
# itself is shared by the whole run anyway (`dist`).
pytestmark = pytest.mark.xdist_group("packaging")


@pytest.fixture(scope="session")
def dist(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The folder `python -m build` wrote the sdist and the wheel into: built once per pytest
    run (the slowest set-up of the suite), whichever worker asks first, under a
    lock in the run's shared temporary folder; the others find it done."""
    from filelock import FileLock

    base = tmp_path_factory.getbasetemp()
    shared = base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base
    out, built = shared / "packaging-dist", shared / "packaging-dist.built"
    with FileLock(str(shared / "packaging-dist.lock")):
        if not built.is_file():
            shutil.rmtree(out, ignore_errors=True)
            out.mkdir()
            done = subprocess.run(
                [sys.executable, "-m", "build", "--outdir", str(out), str(ROOT)],
                capture_output=True,
                text=True,
                check=False,
            )
            assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
            built.write_text("")
    return out


@pytest.fixture(scope="session")
def wheel(dist: Path) -> Path:
    (built,) = dist.glob("*.whl")
    return built


def _metadata(wheel: Path) -> email.message.Message:
    with zipfile.ZipFile(wheel) as archive:
        (name,) = [n for n in archive.namelist() if n.endswith(".dist-info/METADATA")]
        return email.parser.Parser().parsestr(archive.read(name).decode("utf-8"))


@pytest.mark.slow
def test_build_gives_one_sdist_and_one_wheel_under_the_distribution_name(dist: Path) -> None:
    """PEP 625 / wheel spec file names: the normalized name `conduit_mcp_client`."""
    version = PYPROJECT["project"]["version"]
    assert sorted(p.name for p in dist.iterdir()) == [
        f"conduit_mcp_client-{version}-py3-none-any.whl",
        f"conduit_mcp_client-{version}.tar.gz",
    ]


@pytest.mark.slow
def test_twine_check_strict_accepts_both(dist: Path) -> None:
    """What the package index would reject (metadata, the README as long description)."""
    files = sorted(str(p) for p in dist.iterdir())
    done = subprocess.run(
        [sys.executable, "-m", "twine", "check", "--strict", *files],
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.count("PASSED") == 2, done.stdout


@pytest.mark.slow
def test_wheel_holds_both_packages_and_the_schemas_only(wheel: Path) -> None:
    """conduit_mcp (handwritten) and conduit_mcp_wire (generated) in one wheel, with every
    vendored schema.json; neither the spec's examples nor codegen's templates."""
    names = set(zipfile.ZipFile(wheel).namelist())
    versions = sorted(p.parent.name for p in (ROOT / "schema").glob("*/schema.json"))
    assert len(versions) >= 6
    for required in (
        "conduit_mcp/__init__.py",
        "conduit_mcp/py.typed",
        "conduit_mcp/client/__init__.py",
        "conduit_mcp/llm/__init__.py",
        "conduit_mcp/pins/__init__.py",
        "conduit_mcp/guard/__init__.py",
        "conduit_mcp/cli/__init__.py",
        "conduit_mcp_wire/__init__.py",
        "conduit_mcp_wire/_base.py",
        "conduit_mcp_wire/py.typed",
        "conduit_mcp_wire/v2024_11_05.py",
        "conduit_mcp_wire/v2026_07_28.py",
        "conduit_mcp_wire/draft.py",
        "conduit_mcp/_schema/PINNED.json",
        f"{DIST_INFO}/licenses/LICENSE",
        *(f"conduit_mcp/_schema/{v}/schema.json" for v in versions),
    ):
        assert required in names
    assert not any("/examples/" in n for n in names)
    tops = {n.split("/")[0] for n in names}
    assert tops == {"conduit_mcp", "conduit_mcp_wire", DIST_INFO}


@pytest.mark.slow
def test_the_library_requires_neither_the_cli_nor_an_sdk(wheel: Path) -> None:
    """Requires-Dist without an extra marker: the core's few dependencies; typer, rich and
    click come with `cli`, the SDKs with their seam's extra, each as a range."""
    meta = _metadata(wheel)
    assert meta["Name"] == DISTRIBUTION
    requires = meta.get_all("Requires-Dist") or []
    core = {re.split(r"[<>=!\[; ]", r, maxsplit=1)[0] for r in requires if "extra ==" not in r}
    assert core == {"pydantic", "orjson", "jsonschema-rs", "filetype", "tomli"}
    # tomli is the standard library's tomllib (the policy file) before Python 3.11 only.
    (tomli,) = [r for r in requires if r.startswith("tomli")]
    assert re.search(r"python_version\s*<\s*['\"]3\.11['\"]", tomli), tomli
    extras = set(meta.get_all("Provides-Extra") or [])
    assert {"cli", "mcp", "fastmcp", "pydantic-ai", "postgresql", "release", "test"} <= extras

    def names(extra: str) -> set[str]:
        marker = f"extra == '{extra}'"
        return {re.split(r"[<>=!\[; ]", r, maxsplit=1)[0] for r in requires if marker in r}

    assert names("cli") == {"typer", "rich", "click"}
    assert names("mcp") == {"mcp", "mcp-types"}
    assert names("fastmcp") == {"mcp", "mcp-types", "fastmcp"}
    assert {"fastmcp", "pydantic-ai-slim"} <= names("pydantic-ai")
    for sdk in ("mcp", "mcp-types", "fastmcp", "pydantic-ai-slim", "psycopg"):
        (line,) = {r.split(";")[0] for r in requires if re.match(rf"{sdk}(\[.*\])?[<>]", r)}
        assert ">=" in line and "<" in line.replace(">=", ""), line  # a range, both ends


def test_every_exact_pin_has_its_reason_beside_it() -> None:
    """An `==` requirement in pyproject.toml has a comment on the line above it, or its whole
    list has one above the list's name (a group pinned for one reason: codegen, test, ...)."""
    lines = [line.strip() for line in (ROOT / "pyproject.toml").read_text("utf-8").splitlines()]
    unexplained, pins = [], 0
    list_explained = None  # inside a requirement list: whether a comment heads it
    for previous, line in zip(["", *lines[:-1]], lines, strict=True):
        if re.fullmatch(r"[a-z-]+ = \[", line):
            list_explained = previous.startswith("#")
        elif line == "]":
            list_explained = None
        elif list_explained is not None and line.startswith('"') and "==" in line:
            pins += 1
            if not (list_explained or previous.startswith("#")):
                unexplained.append(line)
    assert pins > 10  # the scan saw the lists
    assert unexplained == []


def test_the_command_without_the_cli_extra_says_what_to_install() -> None:
    """No traceback: one line naming the extra, exit 2 (the CLI's code for input it cannot use)."""
    code = (
        "import sys\nsys.modules['typer'] = None  # as if the cli extra were not installed\n"
        "from conduit_mcp.cli import main\nmain()\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=False)
    assert done.returncode == 2
    assert done.stdout == ""
    assert done.stderr.count("\n") == 1 and "Traceback" not in done.stderr
    assert install_command("cli") in done.stderr


def test_the_install_hint_names_the_checkout_this_copy_came_from() -> None:
    """The distribution is not on the package index: a newcomer ran the hint `pip install
    'conduit-mcp-client[proxy]'` and pip found nothing. The dev venv is installed from this
    checkout, so the hint names its folder, with the Python that runs this copy."""
    command = shlex.split(install_command("proxy"))
    assert command[:4] == [sys.executable, "-m", "pip", "install"]
    folder, _, extra = command[4].partition("[")
    assert extra == "proxy]"
    assert (Path(folder) / "pyproject.toml").is_file()
    assert Path(folder).resolve() == ROOT


def test_the_library_faces_import_without_the_cli() -> None:
    """`import conduit_mcp.client / llm / pins` loads neither typer nor rich."""
    code = (
        "import sys\nimport conduit_mcp.client, conduit_mcp.llm, conduit_mcp.pins\n"
        "print(sorted({'typer', 'rich', 'click'} & set(sys.modules)))\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "[]"


@pytest.mark.slow
def test_wheel_contents_import_and_work(wheel: Path, tmp_path: Path) -> None:
    """Import from the unpacked wheel (ahead of the editable install on sys.path)."""
    zipfile.ZipFile(wheel).extractall(tmp_path)
    code = (
        "import sys; sys.path.insert(0, sys.argv[1])\n"
        "import conduit_mcp, conduit_mcp_wire\n"
        "from conduit_mcp.client import Tool\n"
        "assert conduit_mcp.__file__.startswith(sys.argv[1]), conduit_mcp.__file__\n"
        "assert conduit_mcp_wire.__file__.startswith(sys.argv[1]), conduit_mcp_wire.__file__\n"
        "t = Tool.from_wire('s', {'name': 'a', 'inputSchema': {'type': 'object'}})\n"
        "m = conduit_mcp_wire.module_for('2026-07-28')\n"
        "m.Tool.model_validate(t.raw)\n"
        "from conduit_mcp.client import is_conformant\n"
        "assert is_conformant(t.raw, kind='tool', protocol_version='2026-07-28')\n"
    )
    subprocess.run([sys.executable, "-c", code, str(tmp_path)], check=True)


#: The extra that brings each third-party top-level module a README example may import.
EXTRA_OF = {
    "mcp": "mcp",
    "fastmcp": "fastmcp",
    "pydantic_ai": "pydantic-ai",
    "psycopg": "postgresql",
    "typer": "cli",
    "rich": "cli",
}
#: Modules the core install provides (its own packages and dependencies, anyio through mcp).
PROVIDED = {"conduit_mcp", "conduit_mcp_wire", "pydantic", "orjson", "anyio"}


def first_readme_example() -> str:
    """The first ```python block of README.md."""
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    blocks = re.findall(r"```python\n(.*?)```", text, re.S)
    assert blocks, "README.md has no python example"
    return blocks[0]


def extras_for(source: str) -> list[str]:
    """The extras the example's imports need.

    Raises:
        AssertionError: the example imports a third-party module no extra provides.
    """
    tops: set[str] = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            tops |= {alias.name.split(".")[0] for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            tops.add(node.module.split(".")[0])
    third_party = tops - set(sys.stdlib_module_names) - PROVIDED
    unknown = third_party - set(EXTRA_OF)
    assert not unknown, f"no extra provides {sorted(unknown)}: extend EXTRA_OF"
    return sorted({EXTRA_OF[m] for m in third_party})


@pytest.mark.slow
def test_a_fresh_venv_installing_the_wheel_runs_the_readme_first_example(
    wheel: Path, tmp_path: Path
) -> None:
    """The user's path: a new venv, `pip install 'conduit_mcp_client-*.whl[extras]'` (the
    extras the example imports, at the dev venv's versions), then the example as written; and
    the `conduit-mcp` command there, without the cli extra, says what to install."""
    example = first_readme_example()
    extras = extras_for(example)
    env_dir = tmp_path / "venv"
    venv.create(env_dir, with_pip=True)
    python = env_dir / "bin" / "python"
    target = f"{wheel}[{','.join(extras)}]" if extras else str(wheel)
    subprocess.run(
        [
            str(python),
            "-m",
            "pip",
            "install",
            "--quiet",
            "--disable-pip-version-check",
            target,
            "-c",
            str(ROOT / "constraints-dev.txt"),
        ],
        check=True,
    )
    script = tmp_path / "example.py"
    script.write_text(example, encoding="utf-8")
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    done = subprocess.run(
        [str(python), str(script)],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-4000:]
    where = subprocess.run(
        [str(python), "-c", "import conduit_mcp; print(conduit_mcp.__file__)"],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    assert where.stdout.startswith(str(env_dir)), where.stdout  # the wheel, not the checkout
    command = subprocess.run(
        [str(env_dir / "bin" / "conduit-mcp"), "--help"],
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    if "cli" not in extras:
        assert command.returncode == 2 and "Traceback" not in command.stderr
        assert shlex.join([str(python), "-m", "pip", "install", f"{wheel}[cli]"]) in command.stderr


def test_the_dev_venv_installs_every_extra() -> None:
    """`make venv` builds a complete dev venv: the Makefile's EXTRAS name every extra but the
    heavy agent frameworks, which `make test-frameworks` installs (FRAMEWORK_EXTRAS)."""
    makefile = (ROOT / "Makefile").read_text(encoding="utf-8")
    (extras,) = re.findall(r"^EXTRAS := (.+)$", makefile, re.M)
    (frameworks,) = re.findall(r"^FRAMEWORK_EXTRAS := (.+)$", makefile, re.M)
    assert not set(extras.split(",")) & set(frameworks.split(","))
    assert set(extras.split(",")) | set(frameworks.split(",")) == set(
        PYPROJECT["project"]["optional-dependencies"]
    )


def test_the_sdk_matrix_starts_from_the_oldest_releases_the_guard_passes_on() -> None:
    """The lower bounds make test-sdk-matrix installs: mcp 2.0.0 and fastmcp 4.0.0, the first
    releases of the SDK majors the guard is written for (fastmcp 3.x requires mcp<2); tests/guard
    passed on both when the ranges were set."""
    from tests.sdk_matrix import sdk_requirements

    assert sdk_requirements() == {
        "mcp": "2.0.0",
        "mcp-types": "2.0.0",
        "fastmcp": "4.0.0",
        "pydantic-ai-slim": "2.68.0",
    }


def _closure(requirements: list[str], extras: set[str] | None = None) -> set[str]:
    """The distributions installing `requirements` brings (their own requirements followed
    through the installed metadata, markers evaluated for this interpreter), normalized."""
    from importlib import metadata

    from packaging.requirements import Requirement
    from packaging.utils import canonicalize_name

    seen: set[str] = set()
    queue = [(r, "") for r in requirements]
    while queue:
        text, extra = queue.pop()
        req = Requirement(text)
        if req.marker is not None and not req.marker.evaluate({"extra": extra}):
            continue
        name = canonicalize_name(req.name)
        if name == DISTRIBUTION:  # the package's own extras: `conduit-mcp-client[cli,mcp]`
            for own in req.extras:
                queue.extend((r, "") for r in PYPROJECT["project"]["optional-dependencies"][own])
            continue
        for wanted in {"", *req.extras}:
            key = f"{name}[{wanted}]"
            if key in seen:
                continue
            seen.add(key)
            try:
                queue.extend((r, wanted) for r in metadata.requires(req.name) or [])
            except metadata.PackageNotFoundError:
                pass
    return {key.partition("[")[0] for key in seen}


def _top_level_imports(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    found: set[str] = set()
    for node in tree.body:
        if isinstance(node, ast.Import):
            found.update(alias.name.partition(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            found.add(node.module.partition(".")[0])
    return found


@pytest.mark.parametrize(
    ("extra", "paths"),
    [
        (
            "cli",
            sorted(str(p.relative_to(ROOT)) for p in (ROOT / "src/conduit_mcp/cli").glob("*.py")),
        ),
        (
            "proxy",
            sorted(
                str(p.relative_to(ROOT))
                for room in ("proxy", "wrap")
                for p in (ROOT / "src/conduit_mcp" / room).rglob("*.py")
            ),
        ),
    ],
)
def test_what_a_module_imports_its_extra_installs(extra: str, paths: list[str]) -> None:
    """conduit-defined: every third-party module the CLI or the proxy imports at load time
    comes with `pip install conduit-mcp-client[EXTRA]` (the dependencies, the extra, and what
    they require in turn, read from the installed metadata). typer 0.29 stopped requiring
    click: `[cli]` alone gave a command that could not start."""
    from importlib import metadata

    from packaging.utils import canonicalize_name

    project = PYPROJECT["project"]
    installed = _closure([*project["dependencies"], *project["optional-dependencies"][extra]])
    owners = metadata.packages_distributions()
    missing = []
    for path in paths:
        for module in sorted(_top_level_imports(ROOT / path)):
            if module in sys.stdlib_module_names or module in ("conduit_mcp", "conduit_mcp_wire"):
                continue
            dists = {canonicalize_name(d) for d in owners.get(module, [])}
            if not dists & installed:
                missing.append(f"{path}: {module} ({', '.join(sorted(dists)) or '?'})")
    assert missing == []
