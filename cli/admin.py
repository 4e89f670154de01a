"""`kalah admin`: the operator's moderation of a running server (bans, aborts, renames, events, who is online)."""

from __future__ import annotations

import argparse
import os
from datetime import UTC, datetime
from typing import Any

from pydantic import ValidationError
from websockets.exceptions import WebSocketException
from websockets.sync.client import connect

from cli.client_args import default_name
from cli.games import table
from cli.number_args import whole
from cli.operator_token import add_operator_token_args, operator_token
from cli.server_args import CommandError, server_url
from cli.stored_games import failure
from protocol.messages import ErrorMessage, MessageError, Moderate, Moderated, decode_server, encode

ACTS = {
    "ban": "ban a player (by id or name) or, with --address, a network address; live connections are closed",
    "unban": "lift a ban",
    "abort": "end a live match as aborted: no winner, unrated",
    "rename": "give an identity a new name (--name)",
    "close": "close an identity for good: its token no longer says hello, an account's sessions end",
    "reset": "give an account a one-time code to hand over: it signs in once and sets a new password",
    "online": "list who is connected (in a cluster: to every live node), with their addresses",
    "bans": "list the bans",
    "audit": "list the latest moderation acts: who, when, what, why",
    "cancel_event": "cancel an open or running event (its games under way end as ordinary matches)",
    "hide_event": "cancel an event if it is still open or running and leave it out of every list",
    "show_event": "list a hidden event again",
}


def configure(parser: argparse.ArgumentParser) -> None:
    """Register the flags of `kalah admin`."""
    parser.add_argument("act", choices=list(ACTS), metavar="ACT",
                        help="; ".join(f"{name}: {text}" for name, text in ACTS.items()))
    parser.add_argument("target", nargs="?", default="",
                        help="a player's id or name, an address (--address), a match id (abort), or an event id "
                             "(cancel_event, hide_event, show_event)")
    parser.add_argument("--server", metavar="URL", type=server_url, default=os.environ.get("KALAH_SERVER"),
                        help="the server ws://host:port (default: $KALAH_SERVER)")
    add_operator_token_args(parser, "the server's operator token")
    parser.add_argument("--address", action="store_true", help="ban or unban a network address, not a player")
    parser.add_argument("--name", default=None, help="the new name (rename)")
    parser.add_argument("--reason", default="", help="why (required for acts that change something; audited)")
    parser.add_argument("--as", dest="actor", default=default_name(), help="who acts, for the audit")
    parser.add_argument("--limit", type=whole(1), default=100,
                        help="at most this many rows (online, bans, audit; the server sends 500 at most)")


def request(args: argparse.Namespace) -> Moderate:
    """The moderation request the flags ask for; a mistake in them is a `CommandError`."""
    if not args.server:
        raise CommandError("name the server: --server ws://host:port (or $KALAH_SERVER)")
    token = operator_token(args, "admin")
    if not token:
        raise CommandError("moderation needs the operator token: --operator-token-file FILE (or "
                           "$KALAH_OPERATOR_TOKEN)")
    if args.act in ("ban", "unban", "abort", "rename", "close", "reset") and not args.target:
        raise CommandError(f"{args.act} needs a target: a player's id or name, an address or a match id")
    if args.act in ("cancel_event", "hide_event", "show_event") and not args.target:
        raise CommandError(f"{args.act} needs a target: an event's id (kalah event list shows them)")
    fields: dict[str, Any] = {"operator_token": token, "act": args.act, "target": args.target,
                              "kind": "address" if args.address else "player", "name": args.name,
                              "reason": args.reason, "actor": args.actor[:64], "limit": min(args.limit, 500)}
    try:
        return Moderate(**fields)
    except ValidationError as exc:
        first = exc.errors()[0]
        raise CommandError(f"{'.'.join(map(str, first['loc']))}: {first['msg']}") from None


def ask(url: str, msg: Moderate) -> Moderated:
    """Send one moderation request and return the answer; a refusal or a failed connection is a `CommandError`."""
    try:
        with connect(url, open_timeout=10, close_timeout=2) as ws:
            ws.send(encode(msg))
            answer = decode_server(ws.recv(timeout=30))
    except (OSError, TimeoutError, WebSocketException, MessageError) as exc:
        raise CommandError(f"cannot reach {url}: {failure(exc)}", status=1) from None
    if isinstance(answer, ErrorMessage):
        raise CommandError(f"{answer.code}: {answer.message}", status=1)
    if not isinstance(answer, Moderated):
        raise CommandError(f"unexpected answer from {url}: {answer.type}", status=1)
    return answer


def when(at: float | None) -> str:
    """A stored time as `YYYY-MM-DD HH:MM:SS` UTC."""
    return "" if at is None else datetime.fromtimestamp(at, UTC).strftime("%Y-%m-%d %H:%M:%S")


def run(args: argparse.Namespace) -> int:
    """Carry out the act and print what was done (and the rows of a listing)."""
    answer = ask(str(args.server), request(args))
    print(answer.done)
    if args.act == "online" and answer.rows:
        head = ["player", "name", "addresses"] + (["node"] if any(r.node for r in answer.rows) else [])
        print(table([head, *[[r.target, r.name or "", r.address or "", *([r.node or ""] if len(head) > 3 else [])]
                             for r in answer.rows]]))
    elif args.act == "bans" and answer.rows:
        head = ["kind", "target", "name", "when (UTC)", "by", "why"]
        print(table([head, *[[r.kind, r.target, r.name or "-", when(r.at), r.actor or "", r.reason or ""]
                             for r in answer.rows]]))
    elif answer.rows:
        head = ["kind", "target", "when (UTC)", "by", "why"]
        print(table([head, *[[r.kind, r.target, when(r.at), r.actor or "", r.reason or ""] for r in answer.rows]]))
    return 0
