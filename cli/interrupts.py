"""Ctrl-C and SIGTERM for the commands that search or build for minutes: `kalah solve`, `egdb build`, `book build`.

The work runs in a thread while the main thread waits for it, so a signal is noticed at once
even while the C core holds the work thread: the work thread and every thread it starts block
SIGINT and SIGTERM, so the kernel gives them to the main thread. On SIGINT or SIGTERM every search and database
build of the process is told to stop (`interrupt()` of both search cores): the work thread
raises KeyboardInterrupt within milliseconds and unwinds, so what it finished is saved by
its own `finally` blocks (a book is written through a renamed temporary file, a database level
only once complete), then the command ends with status 130. A second signal, or work that
does not wind up within `WIND_UP_S`, ends the process at once: nothing is renamed into place
half-written, and a temporary file left behind is never read.

A SIGINT the command was started with ignored (a background job of a non-interactive shell)
stays ignored, as POSIX asks; SIGTERM always stops the work.
"""

from __future__ import annotations

import contextlib
import os
import signal
import sys
import threading
from collections.abc import Callable
from types import FrameType
from typing import TypeVar

from bots import pysearch
from cli.main import SIGINT_STATUS

Answer = TypeVar("Answer")

WIND_UP_S = 10.0
"""How long interrupted work may take to save what it finished before the process ends anyway."""


STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM)
"""The signals that stop the work (both taken by the main thread, which waits for it)."""


def _stop_signal(signum: int, frame: FrameType | None) -> None:
    """SIGTERM handler: stop like Ctrl-C."""
    raise KeyboardInterrupt


def _interrupt_cores(on: bool) -> None:
    """Tell both search cores to stop (or run again)."""
    import bots._search as core

    core.interrupt(on)
    pysearch.interrupt(on)


def run_stoppable(work: Callable[[], Answer], command: str) -> Answer:
    """`work()` in a thread, stopped within a second by SIGINT or SIGTERM (then KeyboardInterrupt here). Work that
    does not wind up within `WIND_UP_S` ends the process with `COMMAND: interrupted`, the line `kalah` says on every
    other path, so `command` is the command as `kalah` names it there (`kalah egdb`, not `kalah egdb build`)."""
    box: list[Answer | BaseException] = []
    finished = threading.Event()  # not Thread.join: a join interrupted by Ctrl-C may take the thread for ended

    def target() -> None:
        """The work, its answer or its exception kept for the main thread."""
        try:
            box.append(work())
        except BaseException as exc:
            box.append(exc)
        finally:
            finished.set()

    main = threading.current_thread() is threading.main_thread()
    previous = signal.getsignal(signal.SIGTERM) if main else None
    if main:
        signal.signal(signal.SIGTERM, _stop_signal)
    thread = threading.Thread(target=target, name=command, daemon=True)
    try:
        # The work thread, and every thread it starts, blocks the stop signals, so the kernel gives them to this one:
        # a signal given to a thread busy in C code ran no Python handler until this thread's wait ended.
        blocks = main and hasattr(signal, "pthread_sigmask")  # not on Windows, where a signal has no thread to pick
        mask = signal.pthread_sigmask(signal.SIG_BLOCK, STOP_SIGNALS) if blocks else None
        try:
            thread.start()
        finally:
            if mask is not None:
                signal.pthread_sigmask(signal.SIG_SETMASK, mask)
        try:
            finished.wait()
        except KeyboardInterrupt:
            _interrupt_cores(True)
            with contextlib.suppress(KeyboardInterrupt):
                finished.wait(WIND_UP_S)
            if not finished.is_set():
                print(f"{command}: interrupted", file=sys.stderr, flush=True)
                os._exit(SIGINT_STATUS)
            _interrupt_cores(False)  # the work is over: later searches of this process may run
            raise KeyboardInterrupt from None
    finally:
        if main:
            signal.signal(signal.SIGTERM, signal.SIG_DFL if previous is None else previous)
    found = box[0]
    if isinstance(found, BaseException):
        raise found
    return found
