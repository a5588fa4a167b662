"""Where a pin store lives, parsed once: the redacted form to show, the secrets to keep in.

Not a public module. A PostgreSQL location may carry a password in any libpq form (a URL's
`user:password@`, a `?password=` parameter, a `password=` keyword of a conninfo string, each
percent-encoded or not, a `/` or `@` inside it). Everything that leaves the process (repr,
errors, CLI output, logs) goes through `StoreLocation.display` or `StoreLocation.scrub`.
"""

from __future__ import annotations

import re
import urllib.parse
from typing import Any, Final

_SCHEMES: Final = ("postgresql://", "postgres://")
# A libpq conninfo string starts with a keyword and `=` (a sqlite path rarely does: such a
# path is read as conninfo and fails to connect, never printed with its password).
_CONNINFO: Final = re.compile(
    r"\s*(host|hostaddr|dbname|user|password|port|service|passfile|sslmode|options"
    r"|application_name|connect_timeout|target_session_attrs)\s*="
)
_CONNINFO_PASSWORD: Final = re.compile(r"(\bpassword\s*=\s*)('(?:[^'\\]|\\.)*'?|\S*)")
_QUERY_PASSWORD: Final = re.compile(r"([?&]password=)(.*?)(?=&[A-Za-z_]+=|$)", re.DOTALL)
_QUOTED: Final = re.compile(r"\"[^\"]*\"|'[^']*'")
# Pieces of a password that a misparse can show on their own (libpq reads `u:pa/ss@h` as host
# `u`, port `pa`, database `ss@h`).
_SEPARATORS: Final = re.compile(r"[/@:?&=%#\s'\\]+")
_MIN_FRAGMENT: Final = 3


class StoreLocation:
    """A pin store location: `kind` ("sqlite" or "postgresql"), `display` (safe to print),
    and, kept private, what connecting needs. Its repr is the display form."""

    __slots__ = ("_params", "_secrets", "_target", "display", "error", "kind")

    def __init__(self, text: str) -> None:
        self._target = text
        self._params: dict[str, Any] | None = None
        #: a parse failure, worded without the location (`None` when it parsed).
        self.error: str | None = None
        if not (text.startswith(_SCHEMES) or _CONNINFO.match(text)):
            self.kind = "sqlite"
            self.display = text
            self._secrets: tuple[str, ...] = ()
            return
        self.kind = "postgresql"
        shown, raw = _textual_redaction(text)
        secrets = set(raw)
        conninfo: Any = None
        try:
            from psycopg import conninfo
        except ImportError:  # PostgresDatabase raises the ImportError naming the extra
            pass
        if conninfo is not None:
            try:
                self._params = dict(conninfo.conninfo_to_dict(text))
            except Exception as exc:
                message = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
                self.error = message
            if self._params and self._params.get("password"):
                secrets.add(str(self._params["password"]))
        self._secrets = _expand(secrets)
        if any(secret in shown for secret in self._secrets):
            shown = text[: text.index("://") + 3] + "***" if "://" in text else "password=***"
        self.display = shown
        if self.error is not None:
            self.error = self.scrub(self.error)

    def scrub(self, text: str) -> str:
        """`text` with every piece of the password, and every double-quoted token (libpq
        quotes the values it complains about), replaced."""
        if self.kind == "sqlite":
            return text
        text = text.replace(self._target, self.display)
        for secret in self._secrets:
            text = text.replace(secret, "***")
        return _QUOTED.sub('"…"', text)

    def connect_params(self) -> dict[str, Any]:
        """The parsed libpq parameters (a copy; holds the password)."""
        return dict(self._params or {})

    @property
    def target(self) -> str:
        """The location as given (a sqlite path; for PostgreSQL it holds the password)."""
        return self._target

    def __repr__(self) -> str:
        return f"StoreLocation({self.display!r})"

    __str__ = __repr__

    def __reduce__(self) -> Any:
        raise TypeError("a StoreLocation is not pickled (it holds a password)")


def _textual_redaction(text: str) -> tuple[str, list[str]]:
    """(`text` with each password written `***`, the raw passwords found)."""
    found: list[str] = []
    if text.startswith(_SCHEMES):
        scheme, rest = text.split("://", 1)
        # The last `@` ends the user info however the password is spelled (libpq's own
        # parse may differ on a raw `/` or `@`: then everything between is hidden).
        at = rest.rfind("@")
        if at >= 0 and ":" in rest[:at]:
            user, password = rest[:at].split(":", 1)
            found.append(password)
            rest = f"{user}:***{rest[at:]}"
        for match in _QUERY_PASSWORD.finditer(rest):
            found.append(match.group(2))
        shown = scheme + "://" + _QUERY_PASSWORD.sub(r"\1***", rest)
        return shown, found
    for match in _CONNINFO_PASSWORD.finditer(text):
        found.append(match.group(2))
    return _CONNINFO_PASSWORD.sub(r"\1***", text), found


def _expand(secrets: set[str]) -> tuple[str, ...]:
    """Each secret, unquoted and percent-decoded, and its pieces between separators of
    `_MIN_FRAGMENT` characters or more; longest first, so a piece never leaves part of a
    longer match behind."""
    out: set[str] = set()
    for secret in secrets:
        forms = {secret, secret.strip("'"), urllib.parse.unquote(secret)}
        forms |= {urllib.parse.quote(form, safe="") for form in list(forms)}
        for form in forms:
            if form:
                out.add(form)
                out.update(p for p in _SEPARATORS.split(form) if len(p) >= _MIN_FRAGMENT)
    return tuple(sorted(out, key=len, reverse=True))
