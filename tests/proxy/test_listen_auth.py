"""Bearer tokens on `--listen` (`proxy/listen/_auth.py`): checked against a JWKS server the
test starts on loopback, with tokens the test signs with `cryptography` (tests/proxy/jwks.py),
attacked as RFC 8725 describes: another key, expired, another audience or issuer, `alg: none`,
HS256 with the issuer's public key as the secret, a flood of unknown `kid`s. The clock is pinned
(`jwks.NOW`)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from conduit_mcp.proxy.listen._auth import (
    AuthConfigError,
    Authenticator,
    AuthError,
    AuthMiddleware,
    AuthSettings,
)
from tests.proxy.jwks import NOW, Issuer, Key, hs256, serve_issuer

pytestmark = pytest.mark.anyio

KEY = Key("k1")
EC_KEY = Key("k2", "EC")
ROGUE = Key("k1")  # same kid, another key pair: a forger's


class Clock:
    def __init__(self) -> None:
        self.now = float(NOW)

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def issuer() -> Iterator[Issuer]:
    with serve_issuer(KEY, EC_KEY) as served:
        yield served


def _settings(issuer: Issuer, **overrides: Any) -> AuthSettings:
    values: dict[str, Any] = {
        "issuer": issuer.issuer,
        "audience": "mcp-proxy",
        "jwks_url": issuer.jwks_url,
    }
    values.update(overrides)
    return AuthSettings(**values)


async def _started(issuer: Issuer, clock: Clock | None = None, **overrides: Any) -> Authenticator:
    auth = Authenticator(_settings(issuer, **overrides), clock=clock or Clock())
    await auth.start()
    return auth


async def test_a_good_token_gives_the_callers_identity(issuer: Issuer) -> None:
    """Real parts: a JWKS server, RS256 and ES256 tokens signed with `cryptography`."""
    auth = await _started(issuer)
    for key in (KEY, EC_KEY):
        identity = await auth.authenticate("Bearer " + key.sign(issuer.claims()))
        assert identity.subject == "alice"
        assert identity.groups == frozenset({"ops"})
        assert identity.expires_at == NOW + 600
    custom = await _started(issuer, groups_claim="roles")
    token = KEY.sign(issuer.claims(roles="admins", groups=None))
    assert (await custom.authenticate(f"bearer {token}")).groups == frozenset({"admins"})


def _refusals(issuer: Issuer) -> dict[str, tuple[str, str]]:
    """Each attack: the token, and what its refusal says."""
    public_pem = KEY.public_pem()
    return {
        "another key": (ROGUE.sign(issuer.claims()), "signature does not verify"),
        "expired": (KEY.sign(issuer.claims(exp=NOW - 61)), "expired"),
        "another audience": (KEY.sign(issuer.claims(aud="other-service")), "another audience"),
        "another issuer": (KEY.sign(issuer.claims(iss="https://evil.example")), "another issuer"),
        "alg none": (KEY.sign(issuer.claims(), alg="none"), "algorithm 'none' is not allowed"),
        "HS256 with the public key": (
            hs256(public_pem, issuer.claims(), "k1"),
            "algorithm 'HS256' is not allowed",
        ),
        "RS256 named on the EC key": (
            KEY.sign(issuer.claims(), kid="k2"),
            "is not for RS256",
        ),
        "no exp": (KEY.sign(issuer.claims(exp=None)), "no exp claim"),
        "no aud": (KEY.sign(issuer.claims(aud=None)), "no aud claim"),
        "not yet valid": (KEY.sign(issuer.claims(nbf=NOW + 120)), "not valid yet"),
        "issued in the future": (KEY.sign(issuer.claims(iat=NOW + 120)), "in the future"),
        "unknown kid": (KEY.sign(issuer.claims(), kid="nobody"), "kid) is not the issuer's"),
        "crit": (KEY.sign(issuer.claims(), crit=["exp"]), "critical extensions"),
        "two parts": ("abc.def", "three parts"),
        "garbage header": ("!!!.e30.sig", "not base64url JSON"),
        "huge": ("a" * 20000, "larger than"),
    }


@pytest.mark.parametrize(
    "attack",
    [
        "another key",
        "expired",
        "another audience",
        "another issuer",
        "alg none",
        "HS256 with the public key",
        "RS256 named on the EC key",
        "no exp",
        "no aud",
        "not yet valid",
        "issued in the future",
        "unknown kid",
        "crit",
        "two parts",
        "garbage header",
        "huge",
    ],
)
async def test_each_attack_is_refused(issuer: Issuer, attack: str) -> None:
    """Attack (RFC 8725 sections 2.1-2.3, 3.1, 3.8-3.10): each token refused, with why."""
    auth = await _started(issuer)
    token, why = _refusals(issuer)[attack]
    with pytest.raises(AuthError) as refused:
        await auth.authenticate("Bearer " + token)
    assert refused.value.error == "invalid_token"
    assert why in refused.value.description
    assert token not in refused.value.description


async def test_hs256_with_the_public_key_is_refused_even_if_allowed_by_mistake(
    issuer: Issuer,
) -> None:
    """Attack: an operator cannot allow-list an HS algorithm (or none) at all."""
    for algorithm in ("HS256", "none"):
        with pytest.raises(AuthConfigError, match="never none, never an HS algorithm"):
            _settings(issuer, algorithms=(algorithm, "RS256"))


async def test_clock_skew_is_bounded(issuer: Issuer) -> None:
    """conduit-defined: exp is honoured within the leeway (60 s by default), not past it; a
    leeway past 5 minutes is refused."""
    clock = Clock()
    auth = await _started(issuer, clock)
    token = KEY.sign(issuer.claims(exp=NOW - 30))
    assert (await auth.authenticate("Bearer " + token)).subject == "alice"
    clock.now = NOW + 31
    with pytest.raises(AuthError, match="expired"):
        await auth.authenticate("Bearer " + token)
    with pytest.raises(AuthConfigError, match="0 to 300 seconds"):
        _settings(issuer, leeway=3600)


async def test_missing_or_malformed_credentials(issuer: Issuer) -> None:
    """RFC 6750 section 3.1: a request without credentials gets no error code; a header that
    is not `Bearer TOKEN` is `invalid_request`."""
    auth = await _started(issuer)
    with pytest.raises(AuthError) as none:
        await auth.authenticate(None)
    assert none.value.error == ""
    for header in ("Basic YWxpY2U6cHc=", "Bearer", "Bearer  "):
        with pytest.raises(AuthError) as bad:
            await auth.authenticate(header)
        assert bad.value.error == "invalid_request"


async def test_rotation_refreshes_on_an_unknown_kid_at_most_once_per_interval(
    issuer: Issuer,
) -> None:
    """conduit-defined: a new key is fetched when a token names it; a flood of made-up kids
    costs one fetch per `min_refresh` (10 s), counted at the JWKS server."""
    clock = Clock()
    auth = await _started(issuer, clock)
    assert issuer.hits == 1
    rotated = Key("k3")
    issuer.keys.append(rotated)
    clock.now += 11
    assert (await auth.authenticate("Bearer " + rotated.sign(issuer.claims()))).subject == "alice"
    assert issuer.hits == 2
    for n in range(50):
        with pytest.raises(AuthError, match="not the issuer's"):
            await auth.authenticate("Bearer " + KEY.sign(issuer.claims(), kid=f"made-up-{n}"))
    assert issuer.hits == 2  # within 10 s of the last fetch: none
    clock.now += 11
    with pytest.raises(AuthError):
        await auth.authenticate("Bearer " + KEY.sign(issuer.claims(), kid="made-up-again"))
    assert issuer.hits == 3
    clock.now += 601  # older than max_age: fetched again at the next request
    await auth.authenticate("Bearer " + KEY.sign(issuer.claims(exp=clock.now + 60)))
    assert issuer.hits == 4


async def test_oidc_discovery_finds_the_jwks(issuer: Issuer) -> None:
    """Spec-mandated (OpenID Connect Discovery 1.0 section 4): jwks_uri from the issuer's
    configuration, whose issuer must be the one configured."""
    auth = Authenticator(
        AuthSettings(issuer=issuer.issuer, audience="mcp-proxy", oidc_issuer=issuer.issuer),
        clock=Clock(),
    )
    await auth.start()
    assert auth.jwks_url == issuer.jwks_url
    assert (await auth.authenticate("Bearer " + KEY.sign(issuer.claims()))).subject == "alice"
    with pytest.raises(AuthConfigError, match="must be the --oidc-issuer"):
        AuthSettings(issuer="https://other", audience="a", oidc_issuer=issuer.url)
    issuer.issuer = "https://elsewhere.example"  # the document names another issuer
    wrong = Authenticator(
        AuthSettings(issuer=issuer.url, audience="a", oidc_issuer=issuer.url), clock=Clock()
    )
    with pytest.raises(AuthConfigError, match="its issuer is not"):
        await wrong.start()


async def test_the_middleware_answers_401_with_the_metadata_and_forwards_nothing(
    issuer: Issuer,
) -> None:
    """Spec-mandated (RFC 9728 sections 3 and 5.1, RFC 6750 section 3; MCP 2025-11-25
    basic/authorization): 401 with `WWW-Authenticate: Bearer resource_metadata=...`, the
    metadata served at the well-known path (and with the endpoint's path appended); a request
    refused never reaches the application, its body never read."""
    reached: list[Any] = []

    async def app(scope: Any, receive: Any, send: Any) -> None:
        reached.append(scope.get("conduit_mcp.identity"))
        await send({"type": "http.response.start", "status": 200, "headers": []})
        await send({"type": "http.response.body", "body": b"ok"})

    auth = await _started(issuer)
    middleware = AuthMiddleware(app, auth, "https://proxy.example/mcp")
    transport = httpx.ASGITransport(app=middleware)
    async with httpx.AsyncClient(transport=transport, base_url="https://proxy.example") as client:
        for headers in ({}, {"authorization": "Bearer " + ROGUE.sign(issuer.claims())}):
            answer = await client.post("/mcp", json={"jsonrpc": "2.0"}, headers=headers)
            assert answer.status_code == 401
            challenge = answer.headers["www-authenticate"]
            assert challenge.startswith(
                'Bearer resource_metadata="https://proxy.example/.well-known/'
                'oauth-protected-resource/mcp"'
            )
        assert 'error="invalid_token"' in challenge
        assert reached == []
        for path in (
            "/.well-known/oauth-protected-resource",
            "/.well-known/oauth-protected-resource/mcp",
        ):
            metadata = (await client.get(path)).json()
            assert metadata["resource"] == "https://proxy.example/mcp"
            assert metadata["authorization_servers"] == [issuer.issuer]
        good = {"authorization": "Bearer " + KEY.sign(issuer.claims())}
        answer = await client.post("/mcp", content=json.dumps({}), headers=good)
        assert answer.status_code == 200
        assert reached[0].subject == "alice"
        twice = [("authorization", good["authorization"]), ("authorization", good["authorization"])]
        assert (await client.post("/mcp", headers=twice)).status_code == 401


async def test_a_remembered_token_is_still_checked_on_every_request(issuer: Issuer) -> None:
    """conduit-defined: a token verified once is remembered, but its expiry is checked on each
    request, and a key the issuer removed stops verifying it after the next fetch."""
    clock = Clock()
    auth = await _started(issuer, clock)
    token = "Bearer " + EC_KEY.sign(issuer.claims(exp=NOW + 700))
    assert (await auth.authenticate(token)).subject == "alice"
    assert (await auth.authenticate(token)).subject == "alice"  # remembered
    clock.now = NOW + 650
    issuer.keys = [KEY]  # the issuer rotated k2 out
    with pytest.raises(AuthError, match="not the issuer's"):
        await auth.authenticate(token)  # older than max_age: fetched again, k2 gone
    assert auth._verified == {}
    good = "Bearer " + KEY.sign(issuer.claims(exp=NOW + 700))
    assert (await auth.authenticate(good)).subject == "alice"
    clock.now = NOW + 761  # past exp + 60 s of skew
    with pytest.raises(AuthError, match="expired"):
        await auth.authenticate(good)
