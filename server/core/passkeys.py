"""Passkeys: an account adds WebAuthn credentials and signs in with one, with no name and no password.

Every signature is checked by the `webauthn` library (attestation at registration, assertion at sign-in: the
challenge, the relying party id's hash, the page's origin, user presence and verification, the signature over the
authenticator data and the client data, and the sign counter). Here is only what the library leaves to its caller:

- **Challenges** are made here, stored in the database with an expiry (`CHALLENGE_TTL_S`), bound to what asked for
  them (a registration to the signed-in session, a sign-in to its attempt's id), to the relying party id and to the
  page's origin; a finish takes its challenge once (a `guards` row, so a second finish on any node of a cluster is
  refused) and deletes it. Every node reads them from the database: a ceremony begun on one node finishes on another.
- **The sign counter** is stored with the passkey; an assertion whose counter is not greater than the stored one
  (when the authenticator counts) is refused as a copy of the passkey, and two sign-ins racing with one counter
  value claim it in `guards`, so one of them is refused.
- **Floods**: the ceremonies a network (IPv4 /24, IPv6 /64) may begin are bounded (`PasskeyLimits`), and its failed
  passkey sign-ins are throttled with growing delays, apart from passwords: failed passwords never lock the owner
  out of a passkey, and failed passkeys never lock the password.

The account a sign-in is for is the passkey's user handle (the player id given at registration): passkeys are
discoverable, so the page asks for no name.

The library (with its certificate and ASN.1 parsers) is imported by the ceremonies that use it, not when the
server starts: most servers never see a passkey.
"""

from __future__ import annotations

import hashlib
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from protocol.errors import BadFieldError, ConflictError, SignInError, SignInThrottledError, TooManyError
from server.core.accounts import Accounts, SignIn, Writer
from server.core.quotas import Buckets
from server.core.sign_in_throttle import SignInThrottle, ThrottleLimits
from server.core.tokens import new_id
from server.storage import Storage, StoredPlayer
from server.storage.accounts import op_credential, read_credentials
from server.storage.passkeys import (
    Challenge,
    Purpose,
    op_challenge,
    op_challenge_drop,
    op_passkey_remove,
    op_passkey_used,
    passkey_id,
    read_challenge,
)
from server.storage.writer import race_claim

RP_NAME = "Kalah Arena"
"""The relying party's name an authenticator shows."""
CHALLENGE_TTL_S = 300.0
"""How long a begun ceremony may wait for its finish."""
CEREMONY_TIMEOUT_MS = 120_000
"""How long the browser lets the player answer its authenticator."""
MAX_PASSKEYS = 20
"""Passkeys one account may hold."""
MAX_CREDENTIAL_ID = 1023
"""The longest credential id (bytes) WebAuthn allows."""
EXPIRED = "this passkey request expired or was already used: try again"
NOT_ACCEPTED = "this passkey was not accepted"
FALLBACK = "sign in with your password or a recovery code"


@dataclass(frozen=True)
class PasskeyLimits:
    """Ceremonies a network may begin (a burst, refilled over a minute), and its failed passkey sign-ins (free ones,
    then delays doubling from `base_s`)."""

    ceremonies_per_minute: int = 30
    failures_free: int = 20
    base_s: float = 1.0


@dataclass(frozen=True)
class Passkey:
    """One passkey of an account, as its owner sees it: its id, when it was added and last signed in."""

    passkey_id: str
    created_at: float
    used_at: float | None


@dataclass(frozen=True)
class Begun:
    """A ceremony begun: the id its finish names, and the options for the browser (JSON text)."""

    challenge_id: str
    options: str


class Passkeys:
    """Passkey ceremonies for accounts: add one (signed in), sign in with one, list and remove them."""

    def __init__(self, storage: Storage, write: Writer, accounts: Accounts, clock: Callable[[], float],
                 limits: PasskeyLimits | None = None) -> None:
        self.storage = storage
        self._write = write
        self.accounts = accounts
        """Opens the session of a passkey's sign-in."""
        self.limits = limits or PasskeyLimits()
        per_minute = self.limits.ceremonies_per_minute
        self.ceremonies = Buckets(per_minute / 60, per_minute, now=clock)
        """Ceremonies begun, per network."""
        self.failures = SignInThrottle(clock, ThrottleLimits(network_free=self.limits.failures_free,
                                                             base_s=self.limits.base_s), scope="passkey")
        """Failed passkey sign-ins, per network only (an account is never locked by them)."""

    # --- adding one --------------------------------------------------------------------------------

    async def begin_adding(self, player: StoredPlayer, session_id: str, rp_id: str, origin: str,
                           network: str) -> Begun:
        """Options to create a passkey for the signed-in `player` (its session `session_id`) at `rp_id`."""
        from webauthn import base64url_to_bytes, generate_registration_options, options_to_json
        from webauthn.helpers.structs import (
            AttestationConveyancePreference,
            AuthenticatorSelectionCriteria,
            PublicKeyCredentialDescriptor,
            ResidentKeyRequirement,
            UserVerificationRequirement,
        )

        self._flood(network)
        held = await read_credentials(self.storage, player.player_id, "passkey")
        if len(held) >= MAX_PASSKEYS:
            raise TooManyError(f"this account holds {MAX_PASSKEYS} passkeys, the most: remove one first")
        options = generate_registration_options(
            rp_id=rp_id, rp_name=RP_NAME, user_name=player.name, user_id=player.player_id.encode(),
            user_display_name=player.name, timeout=CEREMONY_TIMEOUT_MS,
            attestation=AttestationConveyancePreference.NONE,
            authenticator_selection=AuthenticatorSelectionCriteria(
                resident_key=ResidentKeyRequirement.REQUIRED, user_verification=UserVerificationRequirement.REQUIRED),
            exclude_credentials=[PublicKeyCredentialDescriptor(id=base64url_to_bytes(c.credential_id.removeprefix(
                passkey_id(player.player_id, "")))) for c in held])
        return await self._begin(options.challenge, "register", session_id, rp_id, origin, options_to_json(options))

    async def add(self, player: StoredPlayer, session_id: str, challenge_id: str, credential: dict[str, Any],
                  origin: str) -> Passkey:
        """Verify the browser's new credential against its challenge and store it as a passkey of `player`."""
        from webauthn import base64url_to_bytes, verify_registration_response
        from webauthn.helpers import bytes_to_base64url
        from webauthn.helpers.exceptions import WebAuthnException

        challenge = await self._take(challenge_id, "register", session_id, origin)
        try:
            verified = verify_registration_response(
                credential=credential, expected_challenge=base64url_to_bytes(challenge.challenge),
                expected_rp_id=challenge.rp_id, expected_origin=challenge.origin, require_user_verification=True)
        except (WebAuthnException, ValueError, TypeError, KeyError) as exc:
            raise BadFieldError(f"{NOT_ACCEPTED} ({_reason(exc)}): try adding it again") from None
        if len(verified.credential_id) > MAX_CREDENTIAL_ID:
            raise BadFieldError(f"{NOT_ACCEPTED}: its credential id is longer than WebAuthn allows")
        row = passkey_id(player.player_id, bytes_to_base64url(verified.credential_id))
        held = await read_credentials(self.storage, player.player_id, "passkey")
        if any(c.credential_id == row for c in held):
            raise BadFieldError("this passkey is already one of this account's")
        await self._write([op_credential(row, player.player_id, "passkey",
                                                  bytes_to_base64url(verified.credential_public_key),
                                                  str(verified.sign_count))])
        return Passkey(row, time.time(), None)

    # --- signing in with one -----------------------------------------------------------------------

    async def begin_sign_in(self, rp_id: str, origin: str, network: str) -> Begun:
        """Options to sign in at `rp_id` with any passkey the authenticator holds for it."""
        from webauthn import generate_authentication_options, options_to_json
        from webauthn.helpers.structs import UserVerificationRequirement

        self._flood(network)
        options = generate_authentication_options(rp_id=rp_id, timeout=CEREMONY_TIMEOUT_MS,
                                                  user_verification=UserVerificationRequirement.REQUIRED)
        return await self._begin(options.challenge, "sign_in", "", rp_id, origin, options_to_json(options))

    async def sign_in(self, challenge_id: str, credential: dict[str, Any], origin: str, client: str, address: str,
                      network: str) -> SignIn:
        """A new session of the account whose passkey signed the challenge; `SignInError` otherwise (counted
        against the network, never against the account's password)."""
        from webauthn import base64url_to_bytes, verify_authentication_response
        from webauthn.helpers import parse_authentication_credential_json
        from webauthn.helpers.exceptions import WebAuthnException

        self.failures.check("", network)
        challenge = await self._take(challenge_id, "sign_in", "", origin)
        try:
            parsed = parse_authentication_credential_json(credential)
            handle = parsed.response.user_handle
            player_id = handle.decode() if handle else ""
        except (WebAuthnException, ValueError, TypeError, KeyError, UnicodeDecodeError) as exc:
            self.failures.failed("", network)
            raise SignInError(f"{NOT_ACCEPTED} ({_reason(exc)}): {FALLBACK}") from None
        row = passkey_id(player_id, parsed.id)
        stored = next((c for c in await read_credentials(self.storage, player_id, "passkey")
                       if c.credential_id == row), None) if player_id else None
        player = await self.accounts.identities.get(player_id) if stored is not None else None
        if stored is None or player is None:
            self.failures.failed("", network)
            raise SignInError(f"this passkey is no longer one of an account here (removed?): {FALLBACK}, "
                              "then add it again")
        count = int(stored.detail or 0)
        try:
            verified = verify_authentication_response(
                credential=parsed, expected_challenge=base64url_to_bytes(challenge.challenge),
                expected_rp_id=challenge.rp_id, expected_origin=challenge.origin,
                credential_public_key=base64url_to_bytes(stored.secret), credential_current_sign_count=count,
                require_user_verification=True)
        except (WebAuthnException, ValueError, TypeError, KeyError) as exc:
            self.failures.failed("", network)
            if "sign count" in str(exc):
                raise SignInError(f"{NOT_ACCEPTED}: its counter did not go up, as a copy of it would do; "
                                  f"{FALLBACK}, and remove this passkey if you did not copy it") from None
            raise SignInError(f"{NOT_ACCEPTED} ({_reason(exc)}): {FALLBACK}") from None
        also = [op_passkey_used(row, verified.new_sign_count, time.time())]
        if verified.new_sign_count > 0:  # one sign-in per counter value, whichever node takes it first
            also.insert(0, race_claim(f"passkey-count:{hashlib.sha256(row.encode()).hexdigest()}:"
                                      f"{verified.new_sign_count}"))
        try:
            return await self.accounts.open_session(player, client, address, also)
        except ConflictError:
            self.failures.failed("", network)
            raise SignInError(f"{NOT_ACCEPTED}: its counter was just used by another sign-in; {FALLBACK}") from None

    # --- an account's passkeys ---------------------------------------------------------------------

    async def listed(self, player_id: str) -> list[Passkey]:
        """The account's passkeys, oldest first."""
        return [Passkey(c.credential_id, c.created_at, c.used_at)
                for c in await read_credentials(self.storage, player_id, "passkey")]

    async def remove(self, player_id: str, row_id: str) -> None:
        """Remove one of the account's passkeys (`BadFieldError` if it has no such one)."""
        if row_id not in {p.passkey_id for p in await self.listed(player_id)}:
            raise BadFieldError("passkey_id: this account has no such passkey (removed already?)")
        await self._write([op_passkey_remove(row_id, player_id)])

    # --- inside ------------------------------------------------------------------------------------

    def _flood(self, network: str) -> None:
        """Refuse a ceremony from a network past its bound, or while its failures must wait."""
        self.failures.check("", network)
        bucket = self.ceremonies.of(network)
        if not bucket.allow():
            wait = bucket.wait_s()
            raise SignInThrottledError(f"too many passkey requests from your network: try again in "
                                       f"{max(1, round(wait))} s", wait)

    async def _begin(self, challenge: bytes, purpose: Purpose, session_id: str, rp_id: str, origin: str,
                     options: str) -> Begun:
        """Store a new ceremony's challenge (and drop the expired ones)."""
        from webauthn.helpers import bytes_to_base64url

        now = time.time()
        pending = Challenge(new_id("w"), bytes_to_base64url(challenge), purpose, session_id, rp_id, origin,
                            now + CHALLENGE_TTL_S)
        await self._write([op_challenge(pending), op_challenge_drop("", now)])
        return Begun(pending.challenge_id, options)

    async def _take(self, challenge_id: str, purpose: Purpose, session_id: str, origin: str) -> Challenge:
        """The pending challenge `challenge_id`, taken for good: it must be for `purpose`, the session `session_id`
        and the page `origin`, and not expired; a second take (here or on another node) is refused."""
        challenge = await read_challenge(self.storage, challenge_id) if challenge_id else None
        now = time.time()
        if challenge is None or challenge.purpose != purpose or challenge.session_id != session_id \
                or challenge.origin != origin:
            raise SignInError(EXPIRED)
        try:
            await self._write([race_claim(f"passkey-challenge:{challenge_id}"), op_challenge_drop(challenge_id, now)])
        except ConflictError:
            raise SignInError(EXPIRED) from None
        if challenge.expires_at < now:
            raise SignInError(EXPIRED)
        return challenge


def _reason(exc: Exception) -> str:
    """The library's reason, on one short line."""
    return " ".join(str(exc).split())[:200] or type(exc).__name__
