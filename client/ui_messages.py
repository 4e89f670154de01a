"""Textual messages that carry network traffic between workers, screens and the app."""

from __future__ import annotations

from typing import Protocol

from textual.message import Message

from protocol.messages import Message as WireMessage
from protocol.messages import ServerMessage


class ServerMessageReceived(Message):
    """The network worker received a message from the server."""

    def __init__(self, msg: ServerMessage) -> None:
        super().__init__()
        self.msg = msg


class ConnectionChanged(Message):
    """The connection came up, went down, or is being retried."""

    def __init__(self, connected: bool, detail: str) -> None:
        super().__init__()
        self.connected = connected
        self.detail = detail


class Outgoing(Message):
    """A screen asks the app to send a message to the server."""

    def __init__(self, msg: WireMessage) -> None:
        super().__init__()
        self.msg = msg


class ServerAware(Protocol):
    """A screen the app hands server traffic down to."""

    def server_message(self, msg: ServerMessage) -> None:
        """Handle one server message (the screen ignores what is not for it)."""

    def connection_changed(self, connected: bool, detail: str) -> None:
        """Show or hide the connection notice."""
