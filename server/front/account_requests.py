"""The requests of accounts over the websocket: register, sign in (password or recovery code), sign out, list and
revoke sessions, change the password; and a hello with a session.

Every write goes through `Arena.accounts` (the one writer of credentials and sessions). A password is never
logged: the log lines name the account and the session only.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from protocol.account_messages import (
    ChangePassword,
    ListSessions,
    Login,
    Logout,
    Recover,
    Register,
    RevokeSessions,
    SessionInfo,
    SessionList,
    SignedIn,
    SignedOut,
)
from protocol.errors import AlreadyAccountError, BadFieldError, BadSessionError, NotSignedInError
from protocol.messages import Hello, Message
from server.core.accounts import Accounts, SignIn
from server.core.arena import Arena
from server.core.networks import prefix_of
from server.edge.session import Session
from server.logs import event as log_event
from server.storage import StoredPlayer

PUBLIC_ACCOUNT_REQUESTS: frozenset[type[Any]] = frozenset({Register, Login, Recover})
"""Account requests served before hello (each makes a session; a register after hello makes the guest an account)."""


def signed_in(sign_in: SignIn, with_secret: bool = True) -> SignedIn:
    """The wire form of a new session (its secret only for a terminal; a browser gets it as a cookie)."""
    return SignedIn(player_id=sign_in.player.player_id, name=sign_in.player.name, session_id=sign_in.session_id,
                    session=sign_in.token if with_secret else None, recovery_codes=sign_in.recovery_codes)


class AccountRequests:
    """The router's handlers of account requests."""

    def __init__(self, arena: Arena) -> None:
        self.arena = arena
        self.accounts: Accounts = arena.accounts

    def handlers(self) -> dict[type[Any], Callable[[Session, Any], Awaitable[list[Message]]]]:
        """The router's handler of each account request."""
        return {Register: self.register, Login: self.login, Recover: self.recover, Logout: self.logout,
                ListSessions: self.sessions, RevokeSessions: self.revoke, ChangePassword: self.change_password}

    async def hello(self, s: Session, msg: Hello) -> StoredPlayer:
        """A hello with a session (a terminal's `session`, or the browser's cookie with `account`): the account,
        and this connection is signed in with the session; `BadSessionError` if it is unknown or ended."""
        token = msg.session if msg.session is not None else s.cookie_session
        if token is None:
            raise BadSessionError("this browser is not signed in (no session cookie): sign in first")
        player, session_id = await self.accounts.resume(token)
        self.signed_in_here(s, session_id)
        return player

    def signed_in_here(self, s: Session, session_id: str) -> None:
        """This connection speaks for the session `session_id` (closed when it ends)."""
        s.account_session = session_id
        self.accounts.attach(session_id, s)

    def disconnect(self, s: Session) -> None:
        """A connection closed: it no longer speaks for its session."""
        if s.account_session is not None:
            self.accounts.detach(s.account_session, s)

    async def register(self, s: Session, msg: Register) -> list[Message]:
        """A new account, or (after hello as a guest) the guest identity made an account; this connection is
        signed in with the new session if it said hello."""
        if s.account_session is not None:
            raise AlreadyAccountError("this connection is signed in to an account already")
        guest = None
        if s.player_id is not None:
            guest = await self.arena.identities.get(s.player_id)
        else:
            self.arena.quotas.take_identity(s.peer.address)
        made = await self.accounts.register(msg.name, msg.password, msg.client, s.remote_host, guest)
        if guest is not None:
            self.signed_in_here(s, made.session_id)
        log_event("account_registered", player=made.player.player_id, session=made.session_id,
                  guest=guest is not None, remote=s.remote)
        return [signed_in(made)]

    async def login(self, s: Session, msg: Login) -> list[Message]:
        """A new session of an account (say hello with it next)."""
        try:
            made = await self.accounts.login(msg.name, msg.password, msg.client, s.remote_host,
                                             prefix_of(s.remote_host))
        except Exception as exc:
            log_event("sign_in_refused", code=getattr(exc, "code", "internal_error"), remote=s.remote)
            raise
        log_event("signed_in", player=made.player.player_id, session=made.session_id, remote=s.remote)
        return [signed_in(made)]

    async def recover(self, s: Session, msg: Recover) -> list[Message]:
        """A new session with a one-time code, and a new password; every other session ends."""
        made = await self.accounts.recover(msg.name, msg.code, msg.new_password, msg.client, s.remote_host,
                                           prefix_of(s.remote_host))
        log_event("recovered", player=made.player.player_id, session=made.session_id, remote=s.remote)
        return [signed_in(made)]

    def _account(self, s: Session) -> tuple[str, str]:
        """The account and session this connection is signed in with; `NotSignedInError` for a guest."""
        if s.player_id is None or s.account_session is None:
            raise NotSignedInError("sign in to an account first (a guest has no sessions or password)")
        return s.player_id, s.account_session

    async def logout(self, s: Session, msg: Logout) -> list[Message]:
        """End this connection's session (the connection is closed after the answer)."""
        player_id, session_id = self._account(s)
        s.send(SignedOut(ended=1, current=True))
        await self.accounts.revoke(player_id, session_id)
        return []

    async def sessions(self, s: Session, msg: ListSessions) -> list[Message]:
        """The account's open sessions."""
        player_id, session_id = self._account(s)
        return [await self.session_list(player_id, session_id)]

    async def session_list(self, player_id: str, current: str) -> SessionList:
        """The wire form of an account's open sessions."""
        return SessionList(sessions=[
            SessionInfo(session_id=x.session_id, client="browser" if x.client == "browser" else "terminal",
                        address=x.address, created_at=x.created_at, seen_at=x.seen_at,
                        current=x.session_id == current)
            for x in await self.accounts.sessions(player_id)])

    async def revoke(self, s: Session, msg: RevokeSessions) -> list[Message]:
        """End one session or all of them (this connection's too: it is then closed)."""
        player_id, session_id = self._account(s)
        if msg.session_id is None and not msg.all:
            raise BadFieldError("revoke: name a session (session_id) or ask for all of them (all: true)")
        target = None if msg.all else msg.session_id
        current = target is None or target == session_id
        if current:
            s.send(SignedOut(ended=len(await self.accounts.sessions(player_id)) if target is None else 1,
                             current=True))
        ended = await self.accounts.revoke(player_id, target)
        log_event("sessions_revoked", player=player_id, ended=len(ended), remote=s.remote)
        return [] if current else [SignedOut(ended=len(ended))]

    async def change_password(self, s: Session, msg: ChangePassword) -> list[Message]:
        """A new password; every other session ends."""
        player_id, session_id = self._account(s)
        ended = await self.accounts.change_password(player_id, session_id, msg.old_password, msg.new_password,
                                                    prefix_of(s.remote_host))
        log_event("password_changed", player=player_id, ended=ended, remote=s.remote)
        return [SignedOut(ended=ended)]
