"""A PostgreSQL password never leaves the process: repr, str, errors (and their chains), CLI
output and log records, for generated passwords in every libpq form, against a real server
(it trusts local logins, so any password connects) and a closed port."""

from __future__ import annotations

import logging
import os
import traceback
import urllib.parse
from collections.abc import Iterator

import psycopg
import pytest
from hypothesis import HealthCheck, given
from hypothesis import strategies as st
from typer.testing import CliRunner

from conduit_mcp.cli import app
from conduit_mcp.pins import PinStore, redacted_location
from tests.pgserver import postgres_server  # noqa: F401 (fixture)
from tests.property.profiles import bounded

MARKERS = ("S3cr", "Mid7", "End9")
# Characters that broke redaction: `/`, `@`, `%` (a bad escape made libpq echo the text),
# `?`, `&`, `=`, `#`, quotes, backslash, space, `:`.
PIECE = st.text(alphabet=st.sampled_from("ab9/@%?&=#' \\:-_.~"), max_size=6)
FORMS = ("url", "url-escaped", "query", "query-raw", "conninfo")


@pytest.fixture(scope="module")
def server(postgres_server: str) -> Iterator[tuple[str, int, str]]:  # noqa: F811
    """(host, port, schema) of the session's server, with a schema for these tests."""
    parts = urllib.parse.urlsplit(postgres_server)
    with psycopg.connect(postgres_server, autocommit=True) as conn:
        conn.execute("CREATE SCHEMA IF NOT EXISTS conduit_credentials")
    assert parts.hostname is not None and parts.port is not None
    yield parts.hostname, parts.port, "conduit_credentials"


def location(form: str, password: str, host: str, port: int, schema: str) -> str:
    options = urllib.parse.quote(f"-csearch_path={schema}", safe="")
    escaped = urllib.parse.quote(password, safe="")
    base = f"{host}:{port}/postgres"
    if form == "url":
        return f"postgresql://postgres:{password}@{base}?options={options}"
    if form == "url-escaped":
        return f"postgres://postgres:{escaped}@{base}?options={options}"
    if form == "query":
        return f"postgresql://postgres@{base}?password={escaped}&options={options}"
    if form == "query-raw":
        return f"postgresql://postgres@{base}?options={options}&password={password}"
    quoted = password.replace("\\", "\\\\").replace("'", "\\'")
    return (
        f"host={host} port={port} user=postgres dbname=postgres"
        f" password='{quoted}' options='-csearch_path={schema}'"
    )


class Records(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.DEBUG)
        self.texts: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.texts.append(record.getMessage())
        if record.exc_info:
            self.texts.append("".join(traceback.format_exception(*record.exc_info)))


def exception_texts(exc: BaseException) -> list[str]:
    out = [str(exc), repr(exc), "".join(traceback.format_exception(exc))]
    seen = exc
    while seen.__cause__ is not None or seen.__context__ is not None:
        seen = seen.__cause__ or seen.__context__  # type: ignore[assignment]
        out.append(repr(seen))
    out.extend(repr(arg) for arg in exc.args)
    return out


def leaks(texts: list[str]) -> list[str]:
    return [text for text in texts if any(marker in text for marker in MARKERS)]


@bounded(
    int(os.environ.get("CONDUIT_CREDENTIAL_EXAMPLES", "25")),
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(st.sampled_from(FORMS), PIECE, PIECE, st.booleans())
def test_no_output_channel_shows_any_piece_of_the_password(
    server: tuple[str, int, str], form: str, first: str, second: str, closed: bool
) -> None:
    host, port, schema = server
    password = f"{MARKERS[0]}{first}{MARKERS[1]}{second}{MARKERS[2]}"
    where = location(form, password, host, 1 if closed else port, schema)
    texts: list[str] = [redacted_location(where)]
    records = Records()
    root = logging.getLogger()
    level = root.level
    root.addHandler(records)
    root.setLevel(logging.DEBUG)
    try:
        try:
            with PinStore(where, timeout=2) as store:
                texts += [repr(store), str(store)]
                store.pins()
        except Exception as exc:  # the store could not open: the error is a channel too
            texts += exception_texts(exc)
        for command in (["pins", "list", "--store", where], ["pins", "audit", "--store", where]):
            result = CliRunner().invoke(app, command)
            texts += [result.stdout, result.stderr]
            if result.exception is not None and not isinstance(result.exception, SystemExit):
                texts += exception_texts(result.exception)
    finally:
        root.removeHandler(records)
        root.setLevel(level)
    texts += records.texts
    assert leaks(texts) == []


@pytest.mark.parametrize(
    "where",
    [
        "postgresql://u:S3cr%zzEnd9@127.0.0.1:1/db",  # a bad escape: libpq echoed the text
        "postgresql://u:S3cr/End9@127.0.0.1:1/db",  # `/`: libpq reads host u, port S3cr
        "postgresql://u:S3cr@End9@127.0.0.1:1/db",  # `@`: its tail was left visible
        "postgresql://u@127.0.0.1:1/db?password=S3crEnd9",  # `?password=` never redacted
        "host=127.0.0.1 port=1 user=u password=S3crEnd9",  # conninfo
    ],
)
def test_the_five_reported_forms_print_no_password(where: str) -> None:
    texts = [redacted_location(where)]
    try:
        PinStore(where, timeout=1).close()
    except Exception as exc:
        texts += exception_texts(exc)
    result = CliRunner().invoke(app, ["pins", "list", "--store", where])
    assert result.exit_code == 2
    texts += [result.stdout, result.stderr]
    assert [t for t in texts if "S3cr" in t or "End9" in t] == []


def test_a_store_opened_with_a_password_shows_only_the_redacted_form(
    server: tuple[str, int, str],
) -> None:
    host, port, schema = server
    where = location("query", "S3cr/Mid7@End9", host, port, schema)
    with PinStore(where) as store:
        shown = repr(store)
    assert "S3cr" not in shown and "password=***" in shown
    result = CliRunner().invoke(app, ["pins", "list", "--store", where])
    assert result.exit_code == 0 and "S3cr" not in result.stdout
    assert "password=***" in result.stdout


def test_pins_pending_names_the_store_in_its_approve_command_without_the_password(
    server: tuple[str, int, str],
) -> None:
    from conduit_mcp.client import Tool
    from conduit_mcp.guard._checks import pin_page

    host, port, schema = server
    where = location("query", "S3cr/Mid7@End9", host, port, schema)
    with PinStore(where) as store:
        tool = Tool.from_wire("pw", {"name": "t", "inputSchema": {"type": "object"}})
        pin_page(store, "pw", [tool], pin_new=False, pin_changed=False, accept_cosmetic=False)
    for args in ([], ["--json"]):
        result = CliRunner().invoke(app, ["pins", "pending", "--store", where, *args])
        assert result.exit_code == 0
        assert "S3cr" not in result.stdout and "End9" not in result.stdout
        assert "password=***" in result.stdout and "--tool t --fingerprint " in result.stdout
