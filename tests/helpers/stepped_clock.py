"""`python -m tests.helpers.stepped_clock STEP kalah-arguments...`: the `kalah` command in a process whose wall clock
(`time.time`, `time.time_ns`) steps by STEP seconds each time it gets SIGUSR1, as an NTP correction steps a
machine's clock; its monotonic clock runs on untouched. For tests of one cluster node's clock stepping."""

from __future__ import annotations

import runpy
import signal
import sys
import time
from types import FrameType

_offset = [0.0]
_time, _time_ns = time.time, time.time_ns


def stepped_time() -> float:
    """The process's wall clock: the machine's, stepped."""
    return _time() + _offset[0]


def stepped_time_ns() -> int:
    """The process's wall clock in nanoseconds: the machine's, stepped."""
    return _time_ns() + int(_offset[0] * 1e9)


def main() -> None:
    """Install the stepped clock and run `kalah` with the rest of the arguments."""
    step = float(sys.argv[1])

    def on_signal(signum: int, frame: FrameType | None) -> None:
        """Step the wall clock."""
        _offset[0] += step

    signal.signal(signal.SIGUSR1, on_signal)
    signal.signal(signal.SIGINT, signal.default_int_handler)
    time.time, time.time_ns = stepped_time, stepped_time_ns
    sys.argv = ["kalah", *sys.argv[2:]]
    runpy.run_module("cli.main", run_name="__main__")


if __name__ == "__main__":
    main()
