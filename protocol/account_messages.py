"""Wire messages of accounts: the requests `register`, `login`, `recover`, `logout`, `sessions`, `revoke` and
`change_password`, and the replies `signed_in`, `session_list` and `signed_out`.

A password is sent only in a request and never comes back; a session's secret (`session`) is sent only to a
terminal, which keeps it in a file of its own (a browser gets it as an HttpOnly cookie from `POST /account/...`,
never in a message a page script reads).
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field

from protocol.wire_base import MatchId, Message, Name, Token

PASSWORD_MIN_LENGTH = 8
PASSWORD_MAX_LENGTH = 1024
Password = Annotated[str, Field(min_length=PASSWORD_MIN_LENGTH, max_length=PASSWORD_MAX_LENGTH)]
"""A password: 8 to 1,024 characters (any); each field holding one is left out of its model's repr."""
RecoveryCode = Annotated[str, Field(min_length=8, max_length=64, pattern=r"^[A-Za-z0-9-]+$")]
"""A one-time recovery code (`xxxxx-xxxxx-xxxxx-xxxxx`), from registration or from the operator's reset."""
SessionId = Annotated[str, Field(min_length=1, max_length=24, pattern=r"^[A-Za-z0-9_]+$")]
ClientKind = Literal["browser", "terminal"]


class Register(Message):
    """Make an account: a new player named `name`, or (after hello as a guest, `name` being its own) the guest
    identity itself, keeping its games, ratings and events; answered with `signed_in` and recovery codes."""

    type: Literal["register"] = "register"
    name: Name
    password: Password = Field(repr=False)
    client: ClientKind = "terminal"


class Login(Message):
    """Sign in to an account with its password: a new session (`signed_in`)."""

    type: Literal["login"] = "login"
    name: Name
    password: Password = Field(repr=False)
    client: ClientKind = "terminal"


class Recover(Message):
    """Sign in with a one-time recovery code (or the operator's reset code) and set a new password; every other
    session of the account ends."""

    type: Literal["recover"] = "recover"
    name: Name
    code: RecoveryCode = Field(repr=False)
    new_password: Password = Field(repr=False)
    client: ClientKind = "terminal"


class Logout(Message):
    """End the session this connection signed in with (said hello with)."""

    type: Literal["logout"] = "logout"


class ListSessions(Message):
    """Ask for the sessions of the signed-in account."""

    type: Literal["sessions"] = "sessions"


class RevokeSessions(Message):
    """End one session of the account (`session_id`) or all of them (`all`, this one too): their connections are
    closed on every node."""

    type: Literal["revoke"] = "revoke"
    session_id: SessionId | None = None
    all: bool = False


class ChangePassword(Message):
    """Change the account's password (the current one is asked again); every other session ends."""

    type: Literal["change_password"] = "change_password"
    old_password: Password = Field(repr=False)
    new_password: Password


class SignedIn(Message):
    """A new session: the account, the session's id, its secret for a terminal (None for a browser, which holds
    it as a cookie), and the recovery codes made with a registration (shown once)."""

    type: Literal["signed_in"] = "signed_in"
    player_id: MatchId
    name: Name
    session_id: SessionId
    session: Token | None = Field(default=None, repr=False)
    recovery_codes: list[RecoveryCode] = Field(default_factory=list, repr=False)


class SessionInfo(Message):
    """One session of an account: which client, from where, since when, last seen (UNIX seconds), and whether it
    is the asking connection's."""

    type: Literal["session"] = "session"
    session_id: SessionId
    client: ClientKind
    address: Annotated[str, Field(max_length=64)]
    created_at: float
    seen_at: float
    current: bool = False


class SessionList(Message):
    """The account's open sessions, newest first."""

    type: Literal["session_list"] = "session_list"
    sessions: list[SessionInfo] = Field(default_factory=list)


class SignedOut(Message):
    """Sessions ended (this connection's too when `current`: it is closed after this message)."""

    type: Literal["signed_out"] = "signed_out"
    ended: int
    current: bool = False
