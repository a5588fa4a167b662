"""The review console's accounts: who may log in, as approver or viewer, and their API tokens.

Not a public module. Every statement on `conduit_mcp_accounts` and `conduit_mcp_tokens` is
here. Passwords are kept as scrypt hashes (the standard library's `hashlib.scrypt`: memory-hard,
32 MiB and about 0.1 s a check), tokens as their SHA-256 (a token is 256
random bits: a fast hash loses nothing). Adding and removing an account, and issuing a token,
are audited (`action="account"`, `server_id` `""`).
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import re
import secrets
import time
from dataclasses import dataclass
from typing import Any, Final, Literal

from . import _audit, _feed
from ._audit import audit_row
from ._database import Room
from ._rows import Row, check_unicode, store_text, stored_approver

Role = Literal["approver", "viewer"]
"""A console account's role: an approver decides; a viewer only reads."""

ROLES: Final = ("approver", "viewer")

#: scrypt's cost: N = 2**15, r = 8, p = 1: 32 MiB of memory per check (128 * N * r bytes).
SCRYPT_N: Final = 2**15
SCRYPT_R: Final = 8
SCRYPT_P: Final = 1
_MAXMEM: Final = 64 * 1024 * 1024
#: A token's prefix: recognisable in a leaked file or a log (secret scanners match on it).
TOKEN_PREFIX: Final = "cmcp_"
_NAME: Final = re.compile(r"[^\x00-\x1f\x7f]{1,200}\Z")
#: Passwords: at least this many characters.
MIN_PASSWORD: Final = 10
_MAX_PASSWORD: Final = 1024


@dataclass(frozen=True, slots=True)
class Account:
    """One console account. Immutable.

    Attributes:
        name: the login name, recorded as the approver of every decision made under it.
        role: `"approver"` (may decide) or `"viewer"` (reads only).
        created_at: seconds since the Unix epoch (UTC).
        has_password: whether a password login is possible (an account for a trusted
            reverse proxy's header, or for tokens only, has none).
    """

    name: str
    role: Role
    created_at: float
    has_password: bool


_UPSERT: Final = """
INSERT INTO conduit_mcp_accounts (name, role, password_hash, created_at) VALUES (?, ?, ?, ?)
ON CONFLICT (name) DO UPDATE SET role = excluded.role, password_hash = excluded.password_hash
"""
_REMOVE: Final = "DELETE FROM conduit_mcp_accounts WHERE name = ?"
_REMOVE_TOKENS: Final = "DELETE FROM conduit_mcp_tokens WHERE name = ?"
_ADD_TOKEN: Final = "INSERT INTO conduit_mcp_tokens (token_hash, name, created_at) VALUES (?, ?, ?)"
_READ: Final = "SELECT name, role, password_hash, created_at FROM conduit_mcp_accounts"
_ONE: Final = _READ + " WHERE name = ?"
_BY_TOKEN: Final = (
    "SELECT a.name, a.role, a.password_hash, a.created_at FROM conduit_mcp_tokens AS t"
    " JOIN conduit_mcp_accounts AS a ON a.name = t.name WHERE t.token_hash = ?"
)


def hash_password(password: str) -> str:
    """`password` as stored: `scrypt$N$r$p$salt$hash` (salt and hash in base64)."""
    salt = secrets.token_bytes(16)
    digest = hashlib.scrypt(
        password.encode("utf-8"), salt=salt, n=SCRYPT_N, r=SCRYPT_R, p=SCRYPT_P, maxmem=_MAXMEM
    )
    return "$".join(
        [
            "scrypt",
            str(SCRYPT_N),
            str(SCRYPT_R),
            str(SCRYPT_P),
            base64.b64encode(salt).decode(),
            base64.b64encode(digest).decode(),
        ]
    )


def password_matches(password: str, stored: str | None) -> bool:
    """Whether `password` is the one `stored` (`hash_password`'s form) was made from; the
    same work is done when there is no stored hash, so a missing account is not faster."""
    parts = (stored or "").split("$")
    if len(parts) != 6 or parts[0] != "scrypt":
        parts = ["scrypt", str(SCRYPT_N), str(SCRYPT_R), str(SCRYPT_P), "", ""]
        stored = None
    try:
        n, r, p = int(parts[1]), int(parts[2]), int(parts[3])
        salt = base64.b64decode(parts[4])
        expected = base64.b64decode(parts[5])
        if not (2 <= n <= 2**20 and 1 <= r <= 32 and 1 <= p <= 16):
            raise ValueError("scrypt parameters out of range")
    except ValueError:
        return False
    digest = hashlib.scrypt(
        password.encode("utf-8", "surrogatepass"),
        salt=salt or b"\0" * 16,
        n=n,
        r=r,
        p=p,
        maxmem=max(_MAXMEM, 129 * n * r * p),
    )
    return stored is not None and hmac.compare_digest(digest, expected)


def token_hash(token: str) -> str:
    """A token as stored: the hex SHA-256 of its text."""
    return hashlib.sha256(token.encode("utf-8", "surrogatepass")).hexdigest()


def check_account_name(name: object) -> str:
    """A login name: 1 to 200 characters, no control characters.

    Raises:
        TypeError: not a `str`. ValueError: empty, too long, a control or lone surrogate.
    """
    if not isinstance(name, str):
        raise TypeError(f"an account name must be a str, got {type(name).__name__}")
    if _NAME.match(name) is None or name != name.strip():
        raise ValueError(
            "an account name is 1 to 200 characters, no control characters, no spaces around"
        )
    check_unicode(name, "account name")
    return name


class Accounts(Room):
    """`PinStore`'s console accounts."""

    def add_account(
        self, name: str, *, role: Role, password: str | None = None, by: str | None = None
    ) -> Account:
        """Create the console account `name`, or replace its role and password.

        Args:
            name: the login name (1 to 200 characters, no control characters).
            role: `"approver"` or `"viewer"`.
            password: at least 10 characters, or `None` for an account that logs in only
                through a trusted reverse proxy's header or an API token.
            by: who made the change (recorded in the audit log).

        Returns:
            The account as stored.

        Raises:
            TypeError, ValueError: a bad name, role or password; the store is closed.
            sqlite3.Error, psycopg.Error: the database cannot be written.
        """
        check_account_name(name)
        if role not in ROLES:
            raise ValueError("role must be 'approver' or 'viewer'")
        stored_hash = None
        if password is not None:
            if not isinstance(password, str):
                raise TypeError("password must be a str")
            if not MIN_PASSWORD <= len(password) <= _MAX_PASSWORD:
                raise ValueError(f"a password holds {MIN_PASSWORD} to {_MAX_PASSWORD} characters")
            stored_hash = hash_password(password)
        who = stored_approver(by)
        db = self._open()
        at = time.time()
        key = store_text(name)
        with db.writing(None):
            db.run(_UPSERT, (key, role, stored_hash, at))
            row = audit_row(at, "", key, "account", outcome="added", approver=who, reason=role)
            _audit.append(db, [row])
            _feed.notify(db)
        account = self.account(name)
        assert account is not None
        return account

    def remove_account(self, name: str, *, by: str | None = None) -> bool:
        """Remove the console account `name` and its API tokens (its sessions end at their
        next request). Returns whether it existed.

        Raises:
            TypeError, ValueError: a bad name; the store is closed.
            sqlite3.Error, psycopg.Error: the database cannot be written.
        """
        check_account_name(name)
        who = stored_approver(by)
        db = self._open()
        at = time.time()
        key = store_text(name)
        with db.writing(None):
            removed = db.run(_REMOVE, (key,)).rowcount
            db.run(_REMOVE_TOKENS, (key,))
            if removed:
                row = audit_row(at, "", key, "account", outcome="removed", approver=who)
                _audit.append(db, [row])
                _feed.notify(db)
        return bool(removed)

    def add_token(self, name: str, *, by: str | None = None) -> str:
        """Issue an API token for the account `name` (sent as `Authorization: Bearer TOKEN`);
        only its hash is kept, so this is the one time it is shown.

        Raises:
            KeyError: no such account.
            TypeError, ValueError: a bad name; the store is closed.
            sqlite3.Error, psycopg.Error: the database cannot be written.
        """
        check_account_name(name)
        who = stored_approver(by)
        token = TOKEN_PREFIX + secrets.token_urlsafe(32)
        db = self._open()
        at = time.time()
        key = store_text(name)
        with db.writing(None):
            if db.run(_ONE, (key,)).fetchone() is None:
                raise KeyError(name)
            db.run(_ADD_TOKEN, (token_hash(token), key, at))
            row = audit_row(at, "", key, "account", outcome="token", approver=who)
            _audit.append(db, [row])
        return token

    def account(self, name: str) -> Account | None:
        """The account `name`, or `None`.

        Raises:
            TypeError: a name that is not a `str`. ValueError: the store is closed.
            sqlite3.Error, psycopg.Error: the database cannot be read.
        """
        if not isinstance(name, str):
            raise TypeError("an account name must be a str")
        if not _storable(name):  # no account has it (`add_account` refuses it)
            return None
        rows = self._open().fetch(_ONE, (store_text(name),))
        return _account(rows[0]) if rows else None

    def accounts(self) -> tuple[Account, ...]:
        """Every console account, by name.

        Raises:
            ValueError: the store is closed. sqlite3.Error, psycopg.Error: as `account`.
        """
        rows = self._open().fetch(_READ + " ORDER BY name", ())
        return tuple(_account(row) for row in rows)

    def login(self, name: str, password: str) -> Account | None:
        """The account when `password` is its password, else `None` (also for an unknown
        name or an account without a password, after the same scrypt work).

        Raises:
            ValueError: the store is closed. sqlite3.Error, psycopg.Error: as `account`.
        """
        if not isinstance(name, str) or not isinstance(password, str):
            return None
        if len(password) > _MAX_PASSWORD:
            return None
        rows = self._open().fetch(_ONE, (store_text(name),)) if _storable(name) else []
        stored = rows[0][2] if rows and isinstance(rows[0][2], str) else None
        if not password_matches(password, stored):
            return None
        return _account(rows[0])

    def token_account(self, token: str) -> Account | None:
        """The account an API token was issued to, or `None`.

        Raises:
            ValueError: the store is closed. sqlite3.Error, psycopg.Error: as `account`.
        """
        if not isinstance(token, str) or not token.startswith(TOKEN_PREFIX) or len(token) > 200:
            return None
        rows = self._open().fetch(_BY_TOKEN, (token_hash(token),))
        return _account(rows[0]) if rows else None


def _storable(name: str) -> bool:
    """Whether `name` can be looked up (no lone surrogate: the database's text is UTF-8)."""
    try:
        check_unicode(name, "name")
    except ValueError:
        return False
    return True


def _account(row: tuple[Any, ...]) -> Account:
    r = Row("conduit_mcp_accounts", row)
    role = r.text(1, "role")
    if role not in ROLES:
        raise r.fail("role", role, "'approver' or 'viewer'")
    return Account(r.name(0, "name"), role, r.number(3, "created_at"), row[2] is not None)
