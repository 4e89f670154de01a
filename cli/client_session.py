"""Running the terminal client for a command (`kalah play`, `watch`, `replay`): its parting line and exit status."""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from client.app import Launch


def run_client(launch: Launch) -> int:
    """Run the client until the user quits; print its parting line (standard error when the status is not 0); the
    status: 0, 1 when it gave up (no server, refused name), 130 when interrupted."""
    from client.app import KalahApp

    app = KalahApp(launch)
    app.run()
    if app.farewell:
        print(app.farewell, file=sys.stderr if app.return_code else sys.stdout)
    return app.return_code or 0
