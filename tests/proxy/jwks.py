"""An issuer for the tests: keys made here, a JWKS (and an OpenID discovery document) served on
loopback, and tokens signed here with `cryptography` directly (RFC 7515 compact JWS: base64url
header and payload, RSASSA-PKCS1-v1_5 / ECDSA P-256 / HMAC over `header.payload`), so what the
proxy verifies with PyJWT was not made by PyJWT.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec, padding, rsa
from cryptography.hazmat.primitives.asymmetric.utils import decode_dss_signature

#: The clock the tests pin (2030-03-17): tokens are issued around it.
NOW = 1_900_000_000


def b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


def _uint(value: int, size: int | None = None) -> str:
    length = size or (value.bit_length() + 7) // 8
    return b64url(value.to_bytes(length, "big"))


class Key:
    """A signing key and its public JWK (RFC 7518 section 6)."""

    def __init__(self, kid: str, kind: str = "RSA") -> None:
        self.kid = kid
        self.kind = kind
        if kind == "RSA":
            self.private: Any = rsa.generate_private_key(public_exponent=65537, key_size=2048)
            numbers = self.private.public_key().public_numbers()
            self.jwk = {
                "kty": "RSA",
                "kid": kid,
                "use": "sig",
                "n": _uint(numbers.n),
                "e": _uint(numbers.e),
            }
            self.alg = "RS256"
        else:
            self.private = ec.generate_private_key(ec.SECP256R1())
            numbers = self.private.public_key().public_numbers()
            self.jwk = {
                "kty": "EC",
                "kid": kid,
                "use": "sig",
                "crv": "P-256",
                "x": _uint(numbers.x, 32),
                "y": _uint(numbers.y, 32),
            }
            self.alg = "ES256"

    def public_pem(self) -> bytes:
        return bytes(
            self.private.public_key().public_bytes(
                serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
            )
        )

    def sign(self, claims: dict[str, Any], **header: Any) -> str:
        """A compact JWS of `claims`, header `{"alg": ..., "kid": ..., **header}`."""
        head = {"alg": self.alg, "typ": "JWT", "kid": self.kid, **header}
        signing_input = f"{b64url(json.dumps(head).encode())}.{b64url(json.dumps(claims).encode())}"
        data = signing_input.encode("ascii")
        if head["alg"] == "none":
            return signing_input + "."
        if self.kind == "RSA":
            signature = self.private.sign(data, padding.PKCS1v15(), hashes.SHA256())
        else:
            r, s = decode_dss_signature(self.private.sign(data, ec.ECDSA(hashes.SHA256())))
            signature = r.to_bytes(32, "big") + s.to_bytes(32, "big")
        return f"{signing_input}.{b64url(signature)}"


def hs256(secret: bytes, claims: dict[str, Any], kid: str) -> str:
    """A token "signed" with HMAC-SHA256 keyed by `secret` (the attack of RFC 8725 2.1 uses
    the issuer's public key as the secret)."""
    head = {"alg": "HS256", "typ": "JWT", "kid": kid}
    signing_input = f"{b64url(json.dumps(head).encode())}.{b64url(json.dumps(claims).encode())}"
    mac = hmac.new(secret, signing_input.encode(), hashlib.sha256).digest()
    return f"{signing_input}.{b64url(mac)}"


class Issuer:
    """The JWKS (and discovery) server; `keys` is what it serves now, `hits` counts fetches."""

    def __init__(self, *keys: Key) -> None:
        self.keys = list(keys)
        self.hits = 0
        self.url = ""
        self.issuer = ""

    @property
    def jwks_url(self) -> str:
        return self.url + "/jwks.json"

    def claims(self, **overrides: Any) -> dict[str, Any]:
        """Claims of a good token for audience `mcp-proxy`, issued at `NOW`."""
        base = {
            "iss": self.issuer,
            "aud": "mcp-proxy",
            "sub": "alice",
            "groups": ["ops"],
            "iat": NOW - 10,
            "exp": NOW + 600,
        }
        base.update(overrides)
        return {k: v for k, v in base.items() if v is not None}


@contextmanager
def serve_issuer(*keys: Key) -> Iterator[Issuer]:
    """An `Issuer` on a free loopback port for the block."""
    issuer = Issuer(*keys)

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            if self.path == "/jwks.json":
                issuer.hits += 1
                body = json.dumps({"keys": [k.jwk for k in issuer.keys]}).encode()
            elif self.path == "/.well-known/openid-configuration":
                body = json.dumps({"issuer": issuer.issuer, "jwks_uri": issuer.jwks_url}).encode()
            else:
                self.send_error(404)
                return
            self.send_response(200)
            self.send_header("content-type", "application/json")
            self.send_header("content-length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    issuer.url = f"http://127.0.0.1:{server.server_address[1]}"
    issuer.issuer = issuer.url
    thread = threading.Thread(target=server.serve_forever, args=(0.02,), daemon=True)
    thread.start()
    try:
        yield issuer
    finally:
        server.shutdown()
        server.server_close()
        thread.join()
