"""`kalah ladder --engine NAME=COMMAND`: the flags of local engines, their checks, and their runner.

Engines play only on the ladder's own local server (no `--server`): their games are driven in
that process through `server.front.outside_engines.local`, one fresh process per engine per game.
"""

from __future__ import annotations

import argparse
import dataclasses
import math
from typing import TYPE_CHECKING

from cli.ladder_runner import LadderConfig
from cli.ladder_schedule import OPENING_PLIES
from cli.ladder_stats import Sprt
from protocol.variant import Variant
from server.front.outside_engines.agent import AgentLimits
from server.front.outside_engines.driver import DriverSettings
from server.front.outside_engines.process import DEFAULT_CPU_S, DEFAULT_MEMORY_MIB, EngineSpec, ProcessLimits

if TYPE_CHECKING:
    from server.core.arena import Arena
    from server.front.outside_engines.local import LocalEngines

UNTIMED_MOVE_S = 5.0
"""How long an engine may think about a move in an untimed ladder (the gateway's `kgp_move_s`)."""

MANKALAH_VARIANT = Variant(houses=7, seeds=7, pie=True)
"""The board ManKalah agents are written for: 7 holes, 7 seeds, the pie rule (Kalah's other rules)."""


def add_engine_args(parser: argparse.ArgumentParser) -> None:
    """Register the engine-tester flags of `kalah ladder`."""
    parser.add_argument("--engine", action="append", default=None, metavar="NAME=COMMAND",
                        help="a local program speaking KGP on stdin/stdout (NAME=mankalah:COMMAND: the ManKalah "
                             "protocol); repeatable, beside --bots")
    parser.add_argument("--opening-plies", type=int, default=OPENING_PLIES, metavar="N",
                        help=f"random sowings of each opening (default {OPENING_PLIES}; 0: the initial position)")
    parser.add_argument("--sprt", metavar="ELO0,ELO1,ALPHA,BETA",
                        help="stop a pairing once the SPRT decides it, e.g. 0,10,0.05,0.05 (--games is the most)")
    parser.add_argument("--engine-cpu", type=int, default=DEFAULT_CPU_S, metavar="SECONDS",
                        help=f"CPU seconds an engine process may use in one game (default {DEFAULT_CPU_S}; 0: "
                             "no limit)")
    parser.add_argument("--engine-memory", type=int, default=DEFAULT_MEMORY_MIB, metavar="MIB",
                        help=f"address space of an engine process (default {DEFAULT_MEMORY_MIB} MiB; 0: no "
                             "limit)")
    parser.add_argument("--engine-start", type=float, default=20.0, metavar="SECONDS",
                        help="time a KGP engine has to ask for freeplay after it starts (default 20)")


def engine_config(args: argparse.Namespace, config: LadderConfig, server: str | None) -> LadderConfig:
    """The ladder's settings with its engines, openings and SPRT; raises ValueError on bad input."""
    specs = tuple(EngineSpec.parse(text) for text in args.engine or ())
    if specs and server:
        raise ValueError("--engine plays on the ladder's own local server: leave out --server")
    if args.opening_plies < 0:
        raise ValueError("--opening-plies takes 0 or more")
    if args.engine_cpu < 0 or args.engine_memory < 0 or args.engine_start <= 0:
        raise ValueError("--engine-cpu and --engine-memory take 0 or more, --engine-start more than 0")
    variant = config.variant
    if any(spec.protocol == "mankalah" for spec in specs):
        board = dataclasses.replace(variant, time_control=None)
        if board == Variant():  # the default board (a clock may be given): ManKalah's own
            variant = dataclasses.replace(MANKALAH_VARIANT, time_control=variant.time_control)
        elif board != MANKALAH_VARIANT:
            raise ValueError("ManKalah engines play Kalah(7,7) with the pie rule: --houses 7 --seeds 7 --pie "
                             "(or no board flags)")
    sprt = Sprt.parse(args.sprt) if args.sprt else None
    return dataclasses.replace(config, engines=specs, variant=variant, opening_plies=args.opening_plies, sprt=sprt)


def local_engines(args: argparse.Namespace, arena: Arena, config: LadderConfig) -> LocalEngines | None:
    """The runner of the ladder's engines on its local server (None without engines)."""
    if not config.engines:
        return None
    from server.front.outside_engines.local import LocalEngines, LocalSettings

    control = config.variant.time_control
    move_s = UNTIMED_MOVE_S if control is None else math.inf  # a timed game: the clock alone bounds a move
    settings = LocalSettings(limits=ProcessLimits(args.engine_cpu, args.engine_memory),
                             agent=AgentLimits(mode_s=args.engine_start),
                             driver=DriverSettings(move_s=move_s, no_move_forfeits=True))
    return LocalEngines(arena, list(config.engines), settings)
