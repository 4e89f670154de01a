"""`kalah event create|list|show|results --server URL`: events (tournaments) on a running server.

`list`, `show` and `results` are public reads. `create` says hello first, as `--name` with the
token this machine keeps for that name on that server (the terminal client's identity file),
so the event's creator is the same player who plays in the TUI. `--json` prints what the
server answered; `results --records` prints every finished game of the event (all of them, read
in pages) as `kalah export` does, and nothing else, so `kalah record` reads it from a pipe.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from typing import Any

from websockets.exceptions import WebSocketException
from websockets.sync.client import connect
from websockets.sync.connection import Connection

from cli.client_args import default_name, player_name
from cli.number_args import whole
from cli.server_args import CommandError, add_server_arg, chosen_server
from cli.stored_games import SourceError, event_games, failure, game_text
from protocol.errors import BadEventError
from protocol.event_messages import CancelEvent, CreateEvent, EventList, EventState, FetchEvent, ListEvents
from protocol.event_settings import (
    MAX_ARENA_SECONDS,
    MAX_ENTRANTS,
    MAX_ROUNDS,
    MAX_SANITY_GAMES,
    MIN_ARENA_SECONDS,
    EventSettings,
)
from protocol.messages import ErrorMessage, Hello, Message, MessageError, Welcome, decode_server, encode
from protocol.variant import TimeControl, Variant
from server.tournaments.standings import crosstable_text

STORE_HEADER = "Kalah-Store"
DEFAULT_CLOCK = "60+1"
"""An event's clock when neither --variant nor --clock names one."""


def configure(parser: argparse.ArgumentParser) -> None:
    """Register `kalah event` and its actions."""
    sub = parser.add_subparsers(dest="event_command", metavar="ACTION", required=True)
    create = sub.add_parser("create", help="open an event (you are its creator; hosted bots may be entered)")
    create.add_argument("title", help="the event's name (letters, digits, spaces and _.:'()-)")
    create.add_argument("--kind", choices=["arena", "swiss", "round_robin"], required=True,
                        help="arena (a duration), swiss (rounds) or round_robin (every pairing)")
    create.add_argument("--rounds", type=whole(1, MAX_ROUNDS), default=None, help="a Swiss's rounds")
    create.add_argument("--duration", type=whole(MIN_ARENA_SECONDS, MAX_ARENA_SECONDS), default=None, metavar="SECONDS",
                        help="an arena's length")
    create.add_argument("--cycles", type=int, choices=[1, 2], default=2, help="a round-robin's cycles")
    create.add_argument("--variant", default="kalah(6,4)",
                        help="the variant, its clock included if you like (kalah(4,3,clock=10+0))")
    create.add_argument("--clock", default=None,
                        help="time control: BASE+INCREMENT or SECONDS/move "
                             f"(default: the variant's, else {DEFAULT_CLOCK})")
    create.add_argument("--rated", action="store_true", help="the games change ratings")
    create.add_argument("--start-in", type=whole(0), default=None, metavar="SECONDS",
                        help="start at this delay (default: as soon as --min-entrants have joined)")
    create.add_argument("--min-entrants", type=whole(2, MAX_ENTRANTS), default=2,
                        help="start when this many have joined")
    create.add_argument("--max-entrants", type=whole(2, MAX_ENTRANTS), default=None,
                        help="default: 32 (16 for a round-robin)")
    create.add_argument("--entry", choices=["anyone", "people", "engines", "listed"], default="anyone",
                        help="who may enter (engines: hosted bots and outside engines)")
    create.add_argument("--names", default="", help="who may enter with --entry listed (comma-separated)")
    create.add_argument("--bot", action="append", default=[], metavar="BOT",
                        help="enter a hosted bot (repeat for several)")
    create.add_argument("--no-streak", action="store_true", help="an arena without the streak bonus")
    create.add_argument("--sanity-games", type=whole(0, MAX_SANITY_GAMES), default=0, metavar="N",
                        help="wins against the hosted bot random an outside engine needs before it may enter")
    create.add_argument("--name", type=player_name, default=None, help="your player name (default: your login name)")
    listing = sub.add_parser("list", help="the events, newest first")
    listing.add_argument("--status", choices=["open", "running", "finished", "cancelled"], default=None,
                         help="only events of this status")
    cancel = sub.add_parser("cancel", help="cancel an event you created, before it starts")
    cancel.add_argument("event", help="the event id")
    cancel.add_argument("--name", type=player_name, default=None, help="your player name (default: your login name)")
    for action in (create, listing, cancel):
        action.add_argument("--json", action="store_true", help="print the server's answer as JSON")
        add_server_arg(action, "none: a server must be named")
    for name, text in (("show", "an event's standings and games under way"),
                       ("results", "an event's crosstable and every game as a record line")):
        action = sub.add_parser(name, help=text)
        action.add_argument("event", help="the event id")
        action.add_argument("--json", action="store_true", help="print the server's answer as JSON")
        if name == "results":
            action.add_argument("--records", action="store_true",
                                help="print only the finished games, all of them, as kalah export does "
                                     "(kalah record reads them)")
        add_server_arg(action, "none: a server must be named")


def run(args: argparse.Namespace) -> int:
    """Run the chosen action."""
    url = chosen_server(args)
    if url is None:
        raise CommandError("which server? give --server ws://host:port (or set $KALAH_SERVER)")
    if args.event_command == "create":
        answer = ask(url, _create_request(args), identity=args.name or default_name())
    elif args.event_command == "list":
        answer = ask(url, ListEvents(status=args.status, limit=100))
    elif args.event_command == "cancel":
        answer = ask(url, CancelEvent(event_id=args.event), identity=args.name or default_name())
    elif args.event_command == "results" and args.records and not args.json:
        _print_records(url, args.event)
        return 0
    else:
        answer = ask(url, FetchEvent(event_id=args.event))
    if args.json:
        print(json.dumps(answer.model_dump(mode="json"), indent=1))
        return 0
    if isinstance(answer, EventList):
        print(events_table(answer))
    elif args.event_command == "results":
        print(results_text(answer))
    else:
        print(state_text(answer))
    return 0


def _create_request(args: argparse.Namespace) -> CreateEvent:
    """The `event_create` message of the command's flags (refused here, in one line, if they do not fit)."""
    variant = _event_variant(args.variant, args.clock)
    fields: dict[str, Any] = {"name": args.title, "kind": args.kind, "variant": variant, "rated": args.rated,
                              "min_entrants": args.min_entrants, "entry": args.entry, "streak": not args.no_streak}
    optional = {"rounds": args.rounds, "duration_s": args.duration, "max_entrants": args.max_entrants,
                "sanity_games": args.sanity_games or None,
                "start_at": None if args.start_in is None else time.time() + args.start_in}
    fields.update({k: v for k, v in optional.items() if v is not None})
    if args.kind == "round_robin":
        fields["cycles"] = args.cycles
    if args.names:
        fields["names"] = tuple(n.strip() for n in args.names.split(",") if n.strip())
    try:
        settings = EventSettings.checked(**fields)
    except BadEventError as exc:
        raise CommandError(str(exc)) from None
    return CreateEvent(settings=settings, bots=list(args.bot))


def _event_variant(text: str, clock: str | None) -> str:
    """The event's variant with its clock: the variant's own unless `--clock` is given (default 60+1 when neither
    names one); a variant's clock and a different `--clock` are refused in one line."""
    try:
        variant = Variant.parse(text)
        given = None if clock is None else TimeControl.parse(clock)
        own = variant.time_control
        if given is not None and own is not None and given != own:
            raise CommandError(f"--variant says clock={own.text()} and --clock says {given.text()}: give one of them")
        chosen = given or own or TimeControl.parse(DEFAULT_CLOCK)
        return variant.with_options(time_control=chosen).text()
    except ValueError as exc:
        raise CommandError(str(exc)) from None


def ask(url: str, request: Message, identity: str | None = None, timeout: float = 30.0,
        command: str = "kalah event") -> Any:
    """Send one request (after a hello as `identity`, with its saved token, when given) and return the answer
    (waiting at most `timeout` seconds for it); a refusal or a failed connection is a `CommandError`."""
    try:
        with connect(url, open_timeout=10, close_timeout=2, max_size=2**21) as ws:
            if identity is not None:
                hello(ws, url, identity, command)
            ws.send(encode(request))
            answer = decode_server(ws.recv(timeout=timeout))
    except (OSError, TimeoutError, WebSocketException, MessageError) as exc:
        raise CommandError(f"cannot reach {url}: {failure(exc)}") from None
    if isinstance(answer, ErrorMessage):
        raise CommandError(f"{answer.code}: {answer.message}")
    return answer


def hello(ws: Connection, url: str, name: str, command: str = "kalah event") -> None:
    """Say hello as `name` with the token this machine keeps for it on this server; keep a new one."""
    from client.identities import default_identity_file, load_token, replaced_text, save_token, server_keys

    store = ws.response.headers.get(STORE_HEADER) if ws.response is not None else None
    keys = server_keys(url, store)
    path = default_identity_file()
    token = load_token(path, keys, name)
    ws.send(encode(Hello(name=name, token=token)))
    answer = decode_server(ws.recv(timeout=30))
    if isinstance(answer, ErrorMessage):
        raise CommandError(f"hello as {name}: {answer.code}: {answer.message}")
    assert isinstance(answer, Welcome)
    if answer.token is not None and answer.token != token and save_token(path, keys, answer.name, answer.token):
        print(f"{command}: {replaced_text(answer.name, path)}", file=sys.stderr)


def events_table(listing: EventList) -> str:
    """The event list as aligned text."""
    if not listing.events:
        return "no events"
    lines = [f"{'ID':<13} {'KIND':<11} {'STATUS':<9} {'ROUND':>5} {'ENTRANTS':>8}  NAME"]
    for e in listing.events:
        rnd = f"{e.round}/{e.rounds}" if e.rounds else str(e.round)
        lines.append(f"{e.event_id:<13} {e.kind.value:<11} {e.status:<9} {rnd:>5} "
                     f"{f'{e.entrants}/{e.max_entrants}':>8}  {e.name}")
    return "\n".join(lines)


def _head(state: EventState) -> str:
    """The event's first line: name, kind, status, round, variant."""
    s = state.settings
    rnd = f", round {state.round}/{state.rounds}" if state.rounds else f", {state.pairings_total} games"
    return f"{s.name} ({state.event_id}): {s.kind.value}, {state.status}{rnd}, {s.variant}, by {state.creator}"


def state_text(state: EventState) -> str:
    """Standings and the games under way."""
    arena = state.settings.kind.value == "arena"
    lines = [_head(state), ""]
    lines.append(f"{'#':>3} {'NAME':<24} {'POINTS' if arena else 'SCORE':>6} {'BUCHH':>6} {'S-B':>6}  W-D-L")
    for r in state.standings:
        score = f"{r.points}{'*' if r.on_fire else ''}" if arena else f"{r.score:g}"
        lines.append(f"{r.rank:>3} {r.name:<24} {score:>6} {r.buchholz:>6g} {r.sonneborn_berger:>6g}  "
                     f"{r.wins}-{r.draws}-{r.losses}{'' if r.active else ' (left)'}")
    live = [p.line() for p in state.pairings if p.result == "*"]
    if live:
        lines += ["", "under way:", *live]
    return "\n".join(lines)


def results_text(state: EventState) -> str:
    """The crosstable (or an arena's standings), then every game's record line."""
    lines = [_head(state), ""]
    if state.crosstable:
        lines.append(crosstable_text(state.crosstable))
    else:
        lines += state_text(state).splitlines()[2:]
    lines += ["", *(p.line() for p in state.pairings)]
    if state.pairings_total > len(state.pairings):
        lines.append(f"({state.pairings_total - len(state.pairings)} earlier games not shown)")
    return "\n".join(lines)


def _print_records(url: str, event_id: str) -> None:
    """Every finished game of the event as `kalah export` prints it, and nothing else (`kalah record` reads them)."""
    try:
        games = event_games(url, event_id)
    except SourceError as exc:
        raise CommandError(str(exc)) from None
    for game in games:
        print(game_text(game))
