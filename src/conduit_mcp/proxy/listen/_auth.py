"""Bearer tokens checked on every `--listen` request: JWTs against an issuer's JWKS.

Not a public module. `Authenticator.authenticate(authorization)` checks an `Authorization:
Bearer` header and returns the caller's `Identity` (subject, groups, claims) or raises
`AuthError`; `AuthMiddleware` puts it in front of any ASGI application: every request but the
protected-resource metadata (RFC 9728) and `/healthz` is checked before its body is read, and
a missing or bad token is answered 401 with `WWW-Authenticate: Bearer resource_metadata=...`
(RFC 6750 section 3, RFC 9728 section 5.1), so an MCP client starts its OAuth flow (MCP
2025-11-25 basic/authorization "Authorization Server Discovery").

What is checked, per request: the token's size; its header's `alg` is in the allow-list (never
`none`, never an HS algorithm: the allow-list refuses them at start, so a public key can never
be used as an HMAC secret); the key named by `kid` (a JWKS key of the right type for that
algorithm); the signature (PyJWT, the `auth` extra); `iss` and `aud` (required, exact); `exp`
(required), `nbf` and `iat` against a clock with a bounded skew (at most 5 minutes).

Keys are fetched from `--jwks-url` (or the `jwks_uri` of `--oidc-issuer`'s OpenID discovery
document) at start, kept, refreshed when older than `max_age` at the next request that needs
them, and when a token names a `kid` not among them, at most once per `min_refresh` seconds
whatever the tokens say (a flood of made-up `kid`s costs one fetch per interval).
"""

from __future__ import annotations

import base64
import hashlib
import json
import logging
import math
import secrets
import time
import urllib.error
import urllib.request
from collections import OrderedDict
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, Final

import anyio

from ..._program import install_command

logger = logging.getLogger("conduit_mcp.proxy")

#: Algorithms a token may be signed with (asymmetric only: RFC 8725 section 3.1).
ASYMMETRIC: Final = frozenset(
    {
        "RS256",
        "RS384",
        "RS512",
        "PS256",
        "PS384",
        "PS512",
        "ES256",
        "ES384",
        "ES512",
        "EdDSA",
    }
)
#: The key type (JWK `kty`) each algorithm family needs.
_KTY: Final = {"RS": "RSA", "PS": "RSA", "ES": "EC", "Ed": "OKP"}
#: The largest token checked, in bytes (a JWT with a few claims is well under 2 kB).
MAX_TOKEN_BYTES: Final = 16 * 1024
#: The largest JWKS or discovery document read, in bytes.
MAX_DOCUMENT_BYTES: Final = 1024 * 1024
#: Verified tokens remembered (their claims; see `Authenticator.verify`).
MAX_VERIFIED: Final = 4096
#: The largest clock skew allowed, in seconds.
MAX_LEEWAY: Final = 300.0
#: The path of the protected-resource metadata (RFC 9728 section 3).
METADATA_PATH: Final = "/.well-known/oauth-protected-resource"


class AuthError(Exception):
    """A request refused: `error` is RFC 6750's code (`"invalid_request"`,
    `"invalid_token"`), `description` one line for the client and the log (never the token)."""

    def __init__(self, error: str, description: str) -> None:
        super().__init__(description)
        self.error = error
        self.description = description


class AuthConfigError(ValueError):
    """The `--auth` options cannot work (an algorithm refused, an issuer not reachable)."""


@dataclass(frozen=True, slots=True)
class Identity:
    """Who a verified token says the caller is. Immutable.

    Attributes:
        subject: `sub`, or `None`.
        groups: the strings of the groups claim (`groups_claim`), or empty.
        claims: every claim of the token (JSON values).
        expires_at: `exp`, seconds since the Unix epoch.
    """

    subject: str | None
    groups: frozenset[str]
    claims: Mapping[str, Any] = field(hash=False, compare=False)
    expires_at: float = 0.0


@dataclass(frozen=True, slots=True)
class AuthSettings:
    """What `--auth jwt` was given.

    Attributes:
        issuer: the `iss` every token must carry (exactly).
        audience: the `aud` every token must carry (one of, when it is a list).
        jwks_url: where the keys are; `None` with `oidc_issuer`.
        oidc_issuer: discover `jwks_uri` from `{oidc_issuer}/.well-known/openid-configuration`.
        algorithms: the allow-list (a subset of `ASYMMETRIC`).
        groups_claim: the claim holding the caller's groups (a list of strings, or one).
        leeway: seconds of clock skew allowed on `exp`, `nbf`, `iat` (0 to `MAX_LEEWAY`).
        min_refresh: the fewest seconds between two fetches of the keys for unknown `kid`s.
        max_age: seconds after which the keys are fetched again.
    """

    issuer: str
    audience: str
    jwks_url: str | None = None
    oidc_issuer: str | None = None
    algorithms: tuple[str, ...] = tuple(sorted(ASYMMETRIC))
    groups_claim: str = "groups"
    leeway: float = 60.0
    min_refresh: float = 10.0
    max_age: float = 600.0

    def __post_init__(self) -> None:
        if (self.jwks_url is None) == (self.oidc_issuer is None):
            raise AuthConfigError("--auth jwt needs --jwks-url or --oidc-issuer (one of them)")
        refused = [a for a in self.algorithms if a not in ASYMMETRIC]
        if refused:
            raise AuthConfigError(
                f"algorithm {refused[0]!r} is not allowed (only asymmetric signatures:"
                f" {', '.join(sorted(ASYMMETRIC))}); never none, never an HS algorithm"
            )
        if not self.algorithms:
            raise AuthConfigError("no algorithm allowed")
        if not self.issuer or not self.audience:
            raise AuthConfigError("--issuer and --audience must not be empty")
        if self.oidc_issuer is not None and self.oidc_issuer != self.issuer:
            raise AuthConfigError("--issuer must be the --oidc-issuer (or be left out)")
        if not (0 <= self.leeway <= MAX_LEEWAY) or not math.isfinite(self.leeway):
            raise AuthConfigError(f"the clock skew must be 0 to {MAX_LEEWAY:g} seconds")


def _b64json(part: str) -> Any:
    padded = part + "=" * (-len(part) % 4)
    return json.loads(base64.urlsafe_b64decode(padded.encode("ascii")))


def _fetch_json(url: str, timeout: float) -> Any:
    """GET `url` as JSON (at most `MAX_DOCUMENT_BYTES`). Raises OSError or ValueError."""
    request = urllib.request.Request(url, headers={"Accept": "application/json"})
    with urllib.request.urlopen(request, timeout=timeout) as response:
        data = response.read(MAX_DOCUMENT_BYTES + 1)
    if len(data) > MAX_DOCUMENT_BYTES:
        raise ValueError(f"{url}: larger than {MAX_DOCUMENT_BYTES} bytes")
    return json.loads(data)


def discover_jwks_url(issuer: str, timeout: float = 5.0) -> str:
    """The `jwks_uri` of `issuer`'s OpenID Provider metadata (OpenID Connect Discovery 1.0
    section 4: `{issuer}/.well-known/openid-configuration`, whose `issuer` must be `issuer`).

    Raises:
        AuthConfigError: not reachable, not JSON, another issuer, no `jwks_uri`.
    """
    url = issuer.rstrip("/") + "/.well-known/openid-configuration"
    try:
        document = _fetch_json(url, timeout)
    except (OSError, ValueError) as exc:
        raise AuthConfigError(f"{url}: cannot read the OpenID configuration: {exc}") from None
    if not isinstance(document, dict) or document.get("issuer") != issuer:
        raise AuthConfigError(f"{url}: its issuer is not {issuer!r} (OIDC Discovery 4.3)")
    jwks = document.get("jwks_uri")
    if not isinstance(jwks, str) or not jwks.startswith(("https://", "http://")):
        raise AuthConfigError(f"{url}: no jwks_uri")
    return jwks


class Authenticator:
    """Checks bearer tokens (see the module docstring).

    Args:
        settings: the `--auth jwt` options.
        clock: seconds since the Unix epoch (tests pin it); default `time.time`.
        fetch: `fetch(url) -> JSON` for the keys and the discovery document (default: an
            HTTP GET of at most 1 MiB, 5 s timeout), run in a worker thread.

    Raises:
        ImportError: PyJWT (the `auth` extra) is not installed.
        AuthConfigError: discovery failed.
    """

    def __init__(
        self,
        settings: AuthSettings,
        *,
        clock: Callable[[], float] = time.time,
        fetch: Callable[[str], Any] | None = None,
    ) -> None:
        try:
            import jwt  # noqa: F401
        except ImportError as exc:  # pragma: no cover - the extra is installed in tests
            raise ImportError(f"--auth jwt needs PyJWT: {install_command('auth')}") from exc
        self.settings = settings
        self._clock = clock
        self._fetch = fetch or (lambda url: _fetch_json(url, 5.0))
        self._jwks_url = settings.jwks_url
        self._keys: dict[str, dict[str, Any]] = {}
        self._parsed: dict[tuple[int, str], Any] = {}
        self._verified: OrderedDict[bytes, dict[str, Any]] = OrderedDict()
        self._salt = secrets.token_bytes(32)
        self._fetched_at = -math.inf
        self._tried_at = -math.inf
        self._refreshing: anyio.Event | None = None
        self.fetches = 0

    @property
    def jwks_url(self) -> str | None:
        """Where the keys come from (after discovery, for `--oidc-issuer`)."""
        return self._jwks_url

    async def start(self) -> None:
        """Discover the JWKS URL (for `--oidc-issuer`) and fetch the keys once.

        Raises:
            AuthConfigError: discovery or the first fetch failed (the proxy does not start
                with no keys to check tokens against).
        """
        if self._jwks_url is None:
            issuer = self.settings.oidc_issuer or ""
            self._jwks_url = await anyio.to_thread.run_sync(discover_jwks_url, issuer)
        if not await self._refresh(force=True):
            raise AuthConfigError(f"{self._jwks_url}: cannot read the JWKS")

    async def _refresh(self, *, force: bool = False) -> bool:
        """Fetch the keys (one fetch at a time; at most once per `min_refresh` unless forced).
        Whether a fetch succeeded."""
        if self._refreshing is not None:
            await self._refreshing.wait()
            return True
        now = self._clock()
        if not force and now - self._tried_at < self.settings.min_refresh:
            return False
        self._tried_at = now
        done = self._refreshing = anyio.Event()
        try:
            url = self._jwks_url or ""
            self.fetches += 1
            document = await anyio.to_thread.run_sync(self._fetch, url)
            keys = _keys_of(document)
        except Exception as exc:  # OSError, ValueError: keep the keys we have
            logger.warning("auth: cannot read the JWKS at %s: %s", self._jwks_url, exc)
            return False
        finally:
            self._refreshing = None
            done.set()
        self._keys = keys
        self._parsed = {}
        self._verified.clear()
        self._fetched_at = self._clock()
        return True

    async def authenticate(self, authorization: str | None) -> Identity:
        """The caller of a request whose `Authorization` header is `authorization`.

        Raises:
            AuthError: no bearer token (`invalid_request`... RFC 6750 3.1 says a request
                without credentials gets no error code: `error` is `""` then), or a token
                refused (`invalid_token`, with why).
        """
        token = _bearer(authorization)
        kid = _kid(token, self.settings.algorithms)
        if self._clock() - self._fetched_at >= self.settings.max_age:
            await self._refresh()
        if kid not in self._keys:
            await self._refresh()
            if kid not in self._keys:
                raise AuthError("invalid_token", "the token's key (kid) is not the issuer's")
        return self.verify(token)

    def verify(self, token: str) -> Identity:
        """Check `token` with the keys held now (no fetch).

        A token whose signature, issuer and audience were verified with the keys held now is
        remembered (by a keyed BLAKE2b hash, the key random per process; at most
        `MAX_VERIFIED`, forgotten when the keys change): its next use re-checks only the
        times (`exp`, `nbf`, `iat`) against the clock.

        Raises:
            AuthError: refused, with why.
        """
        digest = hashlib.blake2b(token.encode("utf-8", "surrogatepass"), key=self._salt).digest()
        claims = self._verified.get(digest)
        if claims is not None:
            return self._identity(claims)
        claims = self._check(token)
        identity = self._identity(claims)
        if len(self._verified) >= MAX_VERIFIED:
            self._verified.popitem(last=False)
        self._verified[digest] = claims
        return identity

    def _check(self, token: str) -> dict[str, Any]:
        """The claims of `token`, its signature, issuer and audience verified."""
        import jwt

        header = _header(token, self.settings.algorithms)
        alg = header["alg"]
        jwk = self._keys.get(header.get("kid") or _only_kid(self._keys))
        if jwk is None:
            raise AuthError("invalid_token", "the token's key (kid) is not the issuer's")
        if jwk.get("kty") != _KTY.get(alg[:2]) or jwk.get("alg", alg) != alg:
            raise AuthError(
                "invalid_token", f"the issuer's key {jwk.get('kid')!r} is not for {alg}"
            )
        try:
            parsed = self._parsed.get((id(jwk), alg))
            if parsed is None:  # parsed once per key and algorithm, until the keys change
                parsed = self._parsed[(id(jwk), alg)] = jwt.PyJWK(jwk, algorithm=alg).key
            claims = jwt.decode(
                token,
                key=parsed,
                algorithms=[alg],
                audience=self.settings.audience,
                issuer=self.settings.issuer,
                options={
                    "require": ["exp", "iss", "aud"],
                    "verify_exp": False,  # checked below against our clock
                    "verify_nbf": False,
                    "verify_iat": False,
                },
            )
        except jwt.InvalidAudienceError:
            raise AuthError("invalid_token", "the token is for another audience") from None
        except jwt.InvalidIssuerError:
            raise AuthError("invalid_token", "the token is from another issuer") from None
        except jwt.MissingRequiredClaimError as exc:
            raise AuthError("invalid_token", f"the token has no {exc.claim} claim") from None
        except jwt.InvalidSignatureError:
            raise AuthError("invalid_token", "the token's signature does not verify") from None
        except (jwt.PyJWTError, ValueError, TypeError) as exc:
            raise AuthError(
                "invalid_token", f"the token is not valid: {type(exc).__name__}"
            ) from None
        return dict(claims)

    def _identity(self, claims: dict[str, Any]) -> Identity:
        now = self._clock()
        skew = self.settings.leeway
        exp = claims.get("exp")
        if not _number(exp):
            raise AuthError("invalid_token", "the token's exp is not a number")
        assert isinstance(exp, (int, float))
        if now >= exp + skew:
            raise AuthError("invalid_token", "the token has expired")
        nbf = claims.get("nbf")
        if nbf is not None and (not _number(nbf) or now < nbf - skew):
            raise AuthError("invalid_token", "the token is not valid yet (nbf)")
        iat = claims.get("iat")
        if iat is not None and (not _number(iat) or iat > now + skew):
            raise AuthError("invalid_token", "the token was issued in the future (iat)")
        subject = claims.get("sub")
        raw_groups = claims.get(self.settings.groups_claim)
        groups = _strings(raw_groups)
        return Identity(
            subject if isinstance(subject, str) else None,
            frozenset(groups),
            claims,
            float(exp),
        )


def _number(value: Any) -> bool:
    return type(value) in (int, float) and math.isfinite(value)


def _strings(value: Any) -> Iterable[str]:
    if isinstance(value, str):
        return (value,)
    if isinstance(value, list):
        return [v for v in value if isinstance(v, str)]
    return ()


def _bearer(authorization: str | None) -> str:
    if not authorization:
        raise AuthError("", "no bearer token")
    scheme, _, token = authorization.strip().partition(" ")
    if scheme.lower() != "bearer" or not token.strip():
        raise AuthError("invalid_request", "the Authorization header is not Bearer TOKEN")
    token = token.strip()
    if len(token) > MAX_TOKEN_BYTES:
        raise AuthError("invalid_token", f"the token is larger than {MAX_TOKEN_BYTES} bytes")
    return token


def _header(token: str, algorithms: tuple[str, ...]) -> dict[str, Any]:
    parts = token.split(".")
    if len(parts) != 3:
        raise AuthError("invalid_token", "the token is not a signed JWT (three parts)")
    try:
        header = _b64json(parts[0])
    except (ValueError, UnicodeError):
        raise AuthError("invalid_token", "the token's header is not base64url JSON") from None
    if not isinstance(header, dict):
        raise AuthError("invalid_token", "the token's header is not a JSON object")
    alg = header.get("alg")
    if not isinstance(alg, str) or alg not in algorithms:
        raise AuthError("invalid_token", f"the token's algorithm {alg!r} is not allowed")
    if "crit" in header:
        raise AuthError("invalid_token", "the token names critical extensions (crit)")
    kid = header.get("kid")
    if kid is not None and not isinstance(kid, str):
        raise AuthError("invalid_token", "the token's kid is not a string")
    return header


def _kid(token: str, algorithms: tuple[str, ...]) -> str:
    return _header(token, algorithms).get("kid") or ""


def _only_kid(keys: Mapping[str, Any]) -> str:
    """The one key's id when a token names no `kid` and the issuer has exactly one key."""
    return next(iter(keys)) if len(keys) == 1 else "\x00none"


def _keys_of(document: Any) -> dict[str, dict[str, Any]]:
    """The signing keys of a JWKS (RFC 7517 section 5) by `kid` (`""` for a key without one).

    Raises:
        ValueError: not a JWKS.
    """
    if not isinstance(document, dict) or not isinstance(document.get("keys"), list):
        raise ValueError("not a JWK Set (no keys array)")
    keys: dict[str, dict[str, Any]] = {}
    for jwk in document["keys"]:
        if not isinstance(jwk, dict) or jwk.get("kty") not in ("RSA", "EC", "OKP"):
            continue  # symmetric ("oct") and unknown key types never verify a token here
        if jwk.get("use", "sig") != "sig":
            continue
        kid = jwk.get("kid", "")
        if isinstance(kid, str) and kid not in keys:
            keys[kid] = jwk
    if "" in keys and len(keys) > 1:
        del keys[""]  # a key without an id is used only when it is the only one
    return keys


def challenge(metadata_url: str, error: AuthError | None = None) -> str:
    """The `WWW-Authenticate` value of a 401 (RFC 6750 section 3; RFC 9728 section 5.1)."""
    parts = [f'Bearer resource_metadata="{metadata_url}"']
    if error is not None and error.error:
        description = error.description.replace("\\", "").replace('"', "'")
        parts.append(f'error="{error.error}"')
        parts.append(f'error_description="{description}"')
    return ", ".join(parts)


def resource_metadata(resource: str, issuer: str) -> dict[str, Any]:
    """The protected-resource metadata (RFC 9728 section 2) of the MCP endpoint `resource`,
    whose tokens `issuer` issues."""
    return {
        "resource": resource,
        "authorization_servers": [issuer],
        "bearer_methods_supported": ["header"],
    }


class AuthMiddleware:
    """An ASGI application in front of `app`: every HTTP request checked before its body is
    read, but the metadata (`METADATA_PATH`, and that path followed by the endpoint's path,
    RFC 9728 section 3.1) and `/healthz`. A checked request reaches `app` with its `Identity`
    in `scope["conduit_mcp.identity"]` and without its `Authorization` header (the token is the
    proxy's: never passed on to an upstream).

    Args:
        app: the ASGI application (the listener).
        authenticator: a started `Authenticator`.
        public_url: the MCP endpoint's URL as clients reach it (`https://host/mcp`): the
            `resource` of the metadata and the base of its URL.
        on_refused: called with each `AuthError` (metrics, logs).
    """

    def __init__(
        self,
        app: Any,
        authenticator: Authenticator,
        public_url: str,
        *,
        on_refused: Callable[[AuthError], object] | None = None,
    ) -> None:
        self.app = app
        self.authenticator = authenticator
        scheme, _, rest = public_url.partition("://")
        origin, slash, path = rest.partition("/")
        endpoint = "/" + path if slash else ""
        self.metadata_url = f"{scheme}://{origin}{METADATA_PATH}{endpoint}"
        self._metadata_paths = {METADATA_PATH, METADATA_PATH + endpoint}
        self._metadata = json.dumps(
            resource_metadata(public_url, authenticator.settings.issuer)
        ).encode()
        self._on_refused = on_refused

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        path = scope.get("path", "")
        if path in self._metadata_paths:
            await _send(send, 200, self._metadata, [(b"content-type", b"application/json")])
            return
        if path == "/healthz":
            await self.app(scope, receive, send)
            return
        authorization = None
        for name, value in scope.get("headers", ()):
            if name.lower() == b"authorization":
                if authorization is not None:  # two: which one counts is ambiguous
                    authorization = ""
                    break
                authorization = value.decode("latin-1")
        try:
            identity = await self.authenticator.authenticate(authorization)
        except AuthError as refused:
            if self._on_refused is not None:
                self._on_refused(refused)
            logger.warning("auth: request refused: %s", refused.description)
            body = json.dumps(
                {
                    "error": refused.error or "invalid_request",
                    "error_description": refused.description,
                }
            ).encode()
            headers = [
                (b"content-type", b"application/json"),
                (b"www-authenticate", challenge(self.metadata_url, refused).encode("latin-1")),
            ]
            await _send(send, 401, body, headers)
            return
        # The token is for this proxy (its audience): never passed on to an upstream (MCP
        # 2025-11-25 security best practices, "Token Passthrough"), nor kept past this point.
        headers = [line for line in scope.get("headers", ()) if line[0].lower() != b"authorization"]
        scope = {**scope, "headers": headers, "conduit_mcp.identity": identity}
        await self.app(scope, receive, send)


async def _send(send: Any, status: int, body: bytes, headers: list[tuple[bytes, bytes]]) -> None:
    await send(
        {
            "type": "http.response.start",
            "status": status,
            "headers": [*headers, (b"content-length", str(len(body)).encode())],
        }
    )
    await send({"type": "http.response.body", "body": body})
