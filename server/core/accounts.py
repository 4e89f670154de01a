"""The account service: the one writer of credentials and sign-in sessions, beside `Identities`.

An account is a player with a password (and its passkeys: `server.core.passkeys`): registered new, or made of the guest
identity a connection said hello as (its games, ratings and events stay; its guest token stops
saying hello). Each sign-in is a session whose secret is given once (to a terminal, or as a browser's
cookie) and stored only as its SHA-256; a hello with it is the account's. Sessions end by sign-out,
by revocation (one or all), by a new password (the others) or by a recovery (the others); an ended
session's connections are closed here and, through `announce`, on every other node.

A sign-in by a name that is no account and one with a wrong password get the same refusal after the
same work (one password check: a dummy hash for an unknown name), and both count in the throttle and
in the server's budget of failed password sign-ins (`server.core.sign_in_pace`), past which password
tries wait their turn; recovery codes and passkeys never do.
"""

from __future__ import annotations

import asyncio
import hmac
import secrets
import time
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass, replace

from protocol.errors import AlreadyAccountError, BadFieldError, BadSessionError, ConflictError, SignInError
from protocol.messages import ErrorMessage
from protocol.names import name_key
from server.core.follower import Follower
from server.core.identities import Identities
from server.core.passwords import Passwords
from server.core.sign_in_pace import PasswordPace
from server.core.sign_in_throttle import SignInThrottle
from server.core.tokens import ID_LENGTH, hash_token, new_id, token_matches
from server.storage import Op, Storage, StoredPlayer
from server.storage.accounts import (
    AccountSession,
    op_credential,
    op_credential_used,
    op_session,
    op_session_end,
    op_session_seen,
    op_sessions_end,
    password_id,
    read_credentials,
    read_open_sessions,
    read_session,
)
from server.storage.moderation import player_id_named
from server.storage.writer import race_claim

Writer = Callable[[list[Op]], Awaitable[None]]
RECOVERY_CODES = 8
"""One-time recovery codes made with each registration."""
SEEN_EVERY_S = 60.0
"""A session's `seen_at` is stored again at a hello only when older than this."""
WRONG = "wrong name or password"
CODE_ALPHABET = "abcdefghjkmnpqrstuvwxyz23456789"


def new_code() -> str:
    """A one-time code: four groups of five characters (about 99 bits), easy to read aloud and type."""
    return "-".join("".join(secrets.choice(CODE_ALPHABET) for _ in range(5)) for _ in range(4))


def code_hash(code: str) -> str:
    """The stored form of a one-time code (random, so SHA-256 without salt): case and spaces do not count."""
    return hash_token(code.strip().lower())


@dataclass(frozen=True)
class SignIn:
    """A new session: the account, the session's id and secret, and the recovery codes of a registration."""

    player: StoredPlayer
    session_id: str
    token: str
    recovery_codes: list[str]


class Accounts:
    """Credentials and sessions of every account, and the connections signed in with each session here."""

    def __init__(self, storage: Storage, write: Writer, identities: Identities, passwords: Passwords,
                 throttle: SignInThrottle, codes_throttle: SignInThrottle,
                 announce: Callable[[list[str]], None] = lambda ids: None, pace: PasswordPace | None = None,
                 sleep: Callable[[float], Awaitable[None]] = asyncio.sleep) -> None:
        self.storage = storage
        self._write = write
        self.identities = identities
        self.passwords = passwords
        self.throttle = throttle
        """Failed password sign-ins, by account and by network."""
        self.codes_throttle = codes_throttle
        """Failed recovery codes, by network only: no one can lock an owner out of its codes."""
        self.announce = announce
        """Tell the other nodes that sessions ended (their connections there are closed)."""
        self.pace = pace or PasswordPace(throttle.clock)
        """Failed password sign-ins of the whole server: past its budget, password tries wait their turn."""
        self._sleep = sleep
        self.connections: dict[str, set[Follower]] = {}
        """Session id -> the connections of this node signed in with it."""

    # --- signing in ------------------------------------------------------------------------------

    async def register(self, name: str, password: str, client: str, address: str,
                       guest: StoredPlayer | None = None) -> SignIn:
        """A new account named `name`, or the guest identity `guest` made an account (its name must be `name`);
        `NameTakenError` if another holds the name."""
        secret = await self.passwords.hash(password)
        codes = [new_code() for _ in range(RECOVERY_CODES)]
        if guest is not None:
            if name_key(guest.name) != name_key(name):
                raise BadFieldError(f"register.name: this connection is {guest.name!r}; register that name, or "
                                    "register a new name from a connection that has not said hello")
            if await self.is_account(guest.player_id):
                raise AlreadyAccountError("this identity is an account already: sign in with its password")
        pid = guest.player_id if guest is not None else new_id("p")
        session, token = self._new_session(pid, client, address)
        ops = [op_credential(password_id(pid), pid, "password", secret),
               *[op_credential(new_id("c"), pid, "recovery", code_hash(code)) for code in codes], op_session(session)]
        if guest is not None:
            await self.identities.close(guest, ops)  # its guest token no longer says hello
            player = replace(guest, token_hash=None)
        else:
            player = await self.identities.create(pid, name, None, ops)
        return SignIn(player, session.session_id, token, codes)

    async def login(self, name: str, password: str, client: str, address: str, network: str) -> SignIn:
        """A new session of the account `name` if `password` is its own; `SignInError` otherwise (an unknown
        name alike), `SignInThrottledError` while the account or the network must wait, or the server's line of
        password tries is full; while many fail on the server, the try waits its turn first."""
        key = name_key(name)
        await self.throttle.admit(key, network)
        wait = self.pace.admit(network)
        if wait > 0:
            await self._sleep(wait)
            await self.throttle.admit(key, network)
        pid = await player_id_named(self.storage, name)
        stored = await self._password_of(pid) if pid is not None else None
        if not await self.passwords.verify(stored, password) or pid is None or stored is None:
            await self.throttle.count_failure(key, network)
            raise SignInError(WRONG)
        player = await self.identities.get(pid)
        if player is None:
            raise SignInError(WRONG)
        await self.throttle.count_success(key)
        self.pace.succeeded()
        also = []
        if self.passwords.needs_rehash(stored):  # the parameters changed since it was stored: today's
            also.append(op_credential(password_id(pid), pid, "password", await self.passwords.hash(password)))
        return await self._open(player, client, address, also)

    async def recover(self, name: str, code: str, new_password: str, client: str, address: str,
                      network: str) -> SignIn:
        """A new session of the account `name` with one of its unused one-time codes, and `new_password` its
        password; every other session ends. `SignInError` for a wrong, used or unknown code or name."""
        await self.codes_throttle.admit("", network)
        pid = await player_id_named(self.storage, name)
        found = None
        if pid is not None:
            wanted = code_hash(code).encode()
            for kind in ("recovery", "reset"):
                for credential in await read_credentials(self.storage, pid, kind):
                    if credential.used_at is None and hmac.compare_digest(credential.secret.encode(), wanted):
                        found = credential
        player = None if pid is None else await self.identities.get(pid)
        if found is None or player is None:
            await self.codes_throttle.count_failure("", network)
            raise SignInError("wrong name or recovery code, or a code already used")
        others = [s.session_id for s in await read_open_sessions(self.storage, player.player_id)]
        secret = await self.passwords.hash(new_password)
        session, token = self._new_session(player.player_id, client, address)
        try:
            await self._write([race_claim(f"code:{found.credential_id}"), op_credential_used(found.credential_id),
                               op_credential(password_id(player.player_id), player.player_id, "password", secret),
                               op_session(session), op_sessions_end(player.player_id, session.session_id)])
        except ConflictError:  # used at the same moment by another sign-in
            raise SignInError("wrong name or recovery code, or a code already used") from None
        self.ended(others)
        return SignIn(player, session.session_id, token, [])

    async def open_session(self, player: StoredPlayer, client: str, address: str, also: list[Op]) -> SignIn:
        """A new session of `player`, who proved itself another way (a passkey), stored with `also`."""
        return await self._open(player, client, address, also)

    async def resume(self, token: str) -> tuple[StoredPlayer, str]:
        """The account and session id of a session's secret (a hello with it); `BadSessionError` for one that is
        unknown or ended."""
        session = await read_session(self.storage, token[:ID_LENGTH])
        if session is None or session.ended_at is not None or not token_matches(token, session.token_hash):
            raise BadSessionError("this session has ended or is unknown: sign in again")
        player = await self.identities.get(session.player_id)
        if player is None:
            raise BadSessionError("this session's account is gone: sign in again")
        now = time.time()
        if now - session.seen_at > SEEN_EVERY_S:
            await self._write([op_session_seen(session.session_id, now)])
        return player, session.session_id

    # --- an account's sessions and password ------------------------------------------------------

    async def sessions(self, player_id: str) -> list[AccountSession]:
        """The account's open sessions, newest first."""
        return await read_open_sessions(self.storage, player_id)

    async def revoke(self, player_id: str, session_id: str | None) -> list[str]:
        """End one session of the account (`session_id`) or every one (None); the ids ended (their connections are
        closed on every node)."""
        open_ids = [s.session_id for s in await self.sessions(player_id)]
        ended = open_ids if session_id is None else [sid for sid in open_ids if sid == session_id]
        if session_id is not None and not ended:
            raise BadFieldError(f"revoke.session_id: {session_id!r} is no open session of this account")
        await self._write([op_sessions_end(player_id)] if session_id is None else [op_session_end(session_id)])
        self.ended(ended)
        return ended

    async def change_password(self, player_id: str, session_id: str, old: str, new: str, network: str) -> int:
        """A new password (the current one checked first, throttled as a sign-in); every other session ends. How
        many ended."""
        player = await self.identities.get(player_id)
        key = name_key(player.name) if player is not None else player_id
        await self.throttle.admit(key, network)
        stored = await self._password_of(player_id)
        if not await self.passwords.verify(stored, old):
            await self.throttle.count_failure(key, network)
            raise SignInError("the current password is wrong")
        secret = await self.passwords.hash(new)
        others = [s.session_id for s in await self.sessions(player_id) if s.session_id != session_id]
        await self._write([op_credential(password_id(player_id), player_id, "password", secret),
                           op_sessions_end(player_id, session_id)])
        self.ended(others)
        return len(others)

    async def reset_code(self, player_id: str, also: list[Op]) -> str:
        """The operator's reset: a new one-time code for the account, to hand over (it signs in once and sets a
        new password), stored with `also` (the audit row)."""
        if not await self.is_account(player_id):
            raise BadFieldError("moderate.target: this identity is a guest, not an account: it has no password")
        code = new_code()
        await self._write([op_credential(new_id("c"), player_id, "reset", code_hash(code)), *also])
        return code

    async def is_account(self, player_id: str) -> bool:
        """Whether the player has a password (is an account, not a guest)."""
        return await self._password_of(player_id) is not None

    # --- connections signed in here --------------------------------------------------------------

    def attach(self, session_id: str, follower: Follower) -> None:
        """A connection said hello with this session."""
        self.connections.setdefault(session_id, set()).add(follower)

    def detach(self, session_id: str, follower: Follower) -> None:
        """A connection signed in with this session closed."""
        held = self.connections.get(session_id)
        if held is not None:
            held.discard(follower)
            if not held:
                del self.connections[session_id]

    def ended(self, session_ids: list[str]) -> None:
        """Sessions ended here: close their connections here, and tell the other nodes."""
        if session_ids:
            self.end_here(session_ids)
            self.announce(session_ids)

    def end_here(self, session_ids: Iterable[str]) -> None:
        """Sessions ended (here or on another node): close this node's connections signed in with them."""
        error = BadSessionError("this session was ended (signed out, revoked, or the password changed): sign in again")
        for sid in session_ids:
            for follower in list(self.connections.pop(sid, ())):
                follower.dismiss(ErrorMessage(code=error.code, message=str(error), request=None, match_id=None),
                                 "signed out")

    async def recheck(self) -> None:
        """Read again every session signed in here and close the connections of those that ended (after a gap in
        the notices between nodes)."""
        for sid in list(self.connections):
            session = await read_session(self.storage, sid)
            if session is None or session.ended_at is not None:
                self.end_here([sid])

    # --- inside ----------------------------------------------------------------------------------

    async def _password_of(self, player_id: str) -> str | None:
        """The stored hash of the account's password (None: a guest)."""
        stored = await read_credentials(self.storage, player_id, "password")
        return stored[0].secret if stored else None

    @staticmethod
    def _new_session(player_id: str, client: str, address: str) -> tuple[AccountSession, str]:
        """A new session's row and its secret (the session id followed by 43 random characters)."""
        session_id = new_id("s")
        token = session_id + secrets.token_urlsafe(32)
        now = time.time()
        return AccountSession(session_id, player_id, hash_token(token), client, address[:64], now, now, None), token

    async def _open(self, player: StoredPlayer, client: str, address: str, also: list[Op]) -> SignIn:
        """Store a new session of `player` (with `also`)."""
        session, token = self._new_session(player.player_id, client, address)
        await self._write([*also, op_session(session)])
        return SignIn(player, session.session_id, token, [])

