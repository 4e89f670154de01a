"""Log lines written by a thread of their own, so a standard error that blocks never holds the event loop.

A write to standard error blocks while its reader does not read (a terminal over a slow link, a
full pipe, a stopped log collector), and the server logs from its event loop: under a flood it logs
hundreds of lines a second (refused handshakes, hello timeouts), so a blocked standard error would
hold every connection for as long as its reader sleeps. `QueuedLogs` puts each record on a bounded
queue (`MAX_QUEUED` records) that one thread formats and writes; past the bound a record is dropped
and counted, and the writer says how many before the next line it writes (`log_lines_dropped`).
"""

from __future__ import annotations

import logging
import queue
import threading
import time

MAX_QUEUED = 10_000
"""Records waiting to be written, at most (some megabytes); past it new ones are dropped and counted."""
SERVER_LOGGER = "kalah.server"
"""The logger `log_lines_dropped` is told by (the server's own, as `server.logs` names it)."""
CLOSE_WAIT_S = 5.0
"""How long closing waits for the waiting records to be written (a blocked reader may never take them)."""


class QueuedLogs(logging.Handler):
    """Hands each record to `target` in a writer thread, through a queue of at most `max_queued` records."""

    def __init__(self, target: logging.Handler, max_queued: int = MAX_QUEUED) -> None:
        super().__init__()
        self.target = target
        self.records: queue.Queue[logging.LogRecord | None] = queue.Queue(max_queued)
        self.dropped = 0
        """Records dropped since the writer last said so."""
        self.dropped_in_all = 0
        self._count = threading.Lock()
        self._writer = threading.Thread(target=self._write, name="log-writer", daemon=True)
        self._writer.start()

    def emit(self, record: logging.LogRecord) -> None:
        """Queue the record, or count it dropped if the queue is full (never waits)."""
        try:
            self.records.put_nowait(record)
        except queue.Full:
            with self._count:
                self.dropped += 1
                self.dropped_in_all += 1

    def _write(self) -> None:
        """Write the queued records in turn, each after a line saying how many were dropped before it if any were,
        until closed."""
        while True:
            record = self.records.get()
            with self._count:
                dropped, self.dropped = self.dropped, 0
            if dropped:
                self.target.handle(dropped_record(dropped))
            if record is None:
                return
            self.target.handle(record)

    def close(self) -> None:
        """Write what waits (for at most `CLOSE_WAIT_S`: a reader that does not read may never take it), then stop the
        writer."""
        deadline = time.monotonic() + CLOSE_WAIT_S
        while self._writer.is_alive() and time.monotonic() < deadline:
            try:
                self.records.put(None, timeout=0.05)
                break
            except queue.Full:
                continue
        self._writer.join(max(0.0, deadline - time.monotonic()))
        super().close()


def dropped_record(count: int) -> logging.LogRecord:
    """The `log_lines_dropped` warning: `count` lines were not written, the queue being full."""
    record = logging.LogRecord(SERVER_LOGGER, logging.WARNING, __file__, 0, "log_lines_dropped", None, None)
    record.fields = {"lines": count}
    return record
