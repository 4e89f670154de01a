"""A passkey authenticator in software for tests: an ES256 key pair that answers WebAuthn's create and get as a
browser would hand them to the page (the JSON the account page posts), with its own sign counter.

It only signs (with `cryptography`); every check is the server's, through the `webauthn` library. `copy()` is a
clone of the same key (the attack a sign counter catches), `counting=False` an authenticator without a counter.
"""

from __future__ import annotations

import base64
import hashlib
import json
import os
from dataclasses import dataclass, field
from typing import Any

import cbor2
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.asymmetric import ec

UP, UV, AT = 0x01, 0x04, 0x40


def b64url(data: bytes) -> str:
    """Base64url without padding, as WebAuthn's JSON writes binary fields."""
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def unb64url(text: str) -> bytes:
    """The bytes of a base64url text (padding optional)."""
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


@dataclass
class SoftAuthenticator:
    """One discoverable ES256 credential, created by `create` and used by `get`."""

    counting: bool = True
    key: ec.EllipticCurvePrivateKey = field(default_factory=lambda: ec.generate_private_key(ec.SECP256R1()))
    credential_id: bytes = field(default_factory=lambda: os.urandom(16))
    user_handle: bytes = b""
    count: int = 0

    def copy(self) -> SoftAuthenticator:
        """A clone: the same key, credential and counter, counting on its own from now on."""
        return SoftAuthenticator(self.counting, self.key, self.credential_id, self.user_handle, self.count)

    def _client_data(self, kind: str, challenge: str, origin: str) -> bytes:
        """The client data a browser signs over."""
        return json.dumps({"type": kind, "challenge": challenge, "origin": origin, "crossOrigin": False}).encode()

    def create(self, options: dict[str, Any], origin: str) -> dict[str, Any]:
        """The browser's answer to `navigator.credentials.create` with these options (attestation `none`)."""
        self.user_handle = unb64url(options["user"]["id"])
        numbers = self.key.public_key().public_numbers()
        cose = cbor2.dumps({1: 2, 3: -7, -1: 1, -2: numbers.x.to_bytes(32, "big"), -3: numbers.y.to_bytes(32, "big")})
        auth_data = (hashlib.sha256(options["rp"]["id"].encode()).digest() + bytes([UP | UV | AT])
                     + self.count.to_bytes(4, "big") + bytes(16) + len(self.credential_id).to_bytes(2, "big")
                     + self.credential_id + cose)
        attestation = cbor2.dumps({"fmt": "none", "attStmt": {}, "authData": auth_data})
        client_data = self._client_data("webauthn.create", options["challenge"], origin)
        return {"id": b64url(self.credential_id), "rawId": b64url(self.credential_id), "type": "public-key",
                "response": {"clientDataJSON": b64url(client_data), "attestationObject": b64url(attestation)},
                "clientExtensionResults": {}}

    def get(self, options: dict[str, Any], origin: str) -> dict[str, Any]:
        """The browser's answer to `navigator.credentials.get` with these options (the counter goes up first)."""
        if self.counting:
            self.count += 1
        auth_data = (hashlib.sha256(options["rpId"].encode()).digest() + bytes([UP | UV])
                     + self.count.to_bytes(4, "big"))
        client_data = self._client_data("webauthn.get", options["challenge"], origin)
        signature = self.key.sign(auth_data + hashlib.sha256(client_data).digest(), ec.ECDSA(hashes.SHA256()))
        return {"id": b64url(self.credential_id), "rawId": b64url(self.credential_id), "type": "public-key",
                "response": {"clientDataJSON": b64url(client_data), "authenticatorData": b64url(auth_data),
                             "signature": b64url(signature), "userHandle": b64url(self.user_handle)},
                "clientExtensionResults": {}}
