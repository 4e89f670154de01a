"""The identity service: the one writer of players, for every entry point.

A websocket `hello`, the KGP gateway's engine accounts, local engines and hosted bots' rows
all become players here: a name is checked (reserved prefixes, length), put in its canonical
form (`name_key`), held in memory while its row is written, and stored under a UNIQUE index on
that form, so two nodes of a cluster that race for one name store one player and the other
gets `NameTakenError`. The players known here are a cache of the database, bounded in count
(`max_cached`, the least recently used leave first): one made by another node, or one left out,
is read back when first asked for, so identities made by the thousand (each is free) cannot
fill the memory.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from dataclasses import replace

from protocol.errors import BadFieldError, BadTokenError, ConflictError, NameTakenError, ReservedNameError
from protocol.names import BOT_PREFIX, ENGINE_PREFIX, is_reserved, name_key
from protocol.wire_base import NAME_MAX_LENGTH
from server.core.match import Seat
from server.core.tokens import hash_token, new_id, new_token, player_of_token, token_matches
from server.storage import Op, Storage, StoredPlayer
from server.storage.moderation import op_close_player, op_rename
from server.storage.writer import op_player

Writer = Callable[[list[Op]], Awaitable[None]]
"""The arena's durable write (refused while the server closes)."""
MAX_CACHED = 50_000
"""Players kept in memory (about 400 bytes each); the rest are read from the database when asked for."""


def bot_player_op(seat: Seat) -> Op:
    """The row of a hosted bot's player, stored with the first join of the bot (kept if it exists)."""
    return op_player(seat.player_id, seat.name, None, seat.bot)


def taken(name: str) -> NameTakenError:
    """The refusal of a name another identity holds."""
    return NameTakenError(f"the name {name!r} is taken: choose another name, or, if it is yours, play with its key "
                          "(the token it was given): kalah play --token KEY, or “Use a key” on the web page")


class Identities:
    """Every player this server knows, and the one way new ones are stored."""

    def __init__(self, storage: Storage, write: Writer, max_cached: int = MAX_CACHED) -> None:
        self.storage = storage
        self._write = write
        self.max_cached = max_cached
        self.players: dict[str, StoredPlayer] = {}
        """Players in memory, the least recently used first (at most `max_cached` once one is added)."""
        self.names: dict[str, str] = {}
        """The canonical form of each name -> its player id (held from before its row is written), for the players
        in memory and the names being stored."""

    async def load(self) -> None:
        """Read the `max_cached` players made last, not every stored one (the others are read when they come
        back); of a name stored twice before names were unique, the older holder read keeps it."""
        stored = await self.storage.players(self.max_cached) if self.max_cached > 0 else []
        self.players = {p.player_id: p for p in stored}
        for p in stored:
            if p.bot is None:
                self.names.setdefault(name_key(p.name), p.player_id)

    async def get(self, player_id: str) -> StoredPlayer | None:
        """A known player, or one read from the database (another node may have made it, or it left the memory);
        None: no such player."""
        player = self.players.pop(player_id, None)
        if player is None:
            player = await self.storage.player(player_id)
            if player is None:
                return None
            player = self.players.pop(player_id, player)  # one put here meanwhile is the newer
        self.remember(player)
        return player

    def remember(self, player: StoredPlayer) -> None:
        """Keep `player` in memory as the most recently used; past `max_cached`, forget the least recently used."""
        self.players.pop(player.player_id, None)
        self.players[player.player_id] = player
        if player.bot is None:
            self.names[name_key(player.name)] = player.player_id
        while len(self.players) > self.max_cached:
            oldest = next(iter(self.players.values()))
            del self.players[oldest.player_id]
            key = name_key(oldest.name)
            if self.names.get(key) == oldest.player_id:
                del self.names[key]

    def owner(self, name: str) -> str | None:
        """The id of the player this server knows to hold `name` (in canonical form), if any."""
        return self.names.get(name_key(name))

    def note_bot(self, seat: Seat) -> None:
        """Remember a hosted bot's player once its row is stored (with its first join)."""
        if seat.player_id not in self.players:
            self.remember(StoredPlayer(seat.player_id, seat.name, None, seat.bot))

    async def restore(self, token: str) -> StoredPlayer:
        """The player a token belongs to; `BadTokenError` for a token that matches none."""
        player = await self.get(player_of_token(token))
        if player is None or not token_matches(token, player.token_hash):
            raise BadTokenError("unknown token: say hello with a name only for a new identity")
        return player

    async def new_human(self, name: str, engine: bool = False) -> tuple[StoredPlayer, str]:
        """A new identity said hello with `name` (an outside engine's gets the `engine:` prefix): stored, with
        its new secret token; `ReservedNameError`, `BadFieldError` or `NameTakenError` refuse it."""
        if is_reserved(name):
            raise ReservedNameError(f"names starting with {BOT_PREFIX!r} or {ENGINE_PREFIX!r} belong to the "
                                    "server's bots and outside engines")
        name = f"{ENGINE_PREFIX}{name}" if engine else name
        if len(name) > NAME_MAX_LENGTH:
            raise BadFieldError(f"hello.name: an engine's name is {ENGINE_PREFIX!r} and at most "
                                f"{NAME_MAX_LENGTH - len(ENGINE_PREFIX)} more characters")
        pid = new_id("p")
        token = new_token(pid)
        return await self.create(pid, name, hash_token(token)), token

    async def account(self, player_id: str, name: str, token_hash: str | None) -> StoredPlayer:
        """The player `player_id` (an outside or local engine's account, its id derived from its token or
        name): the stored one, or a new one stored under `name`; `NameTakenError` if another holds the name."""
        player = await self.get(player_id)
        return player if player is not None else await self.create(player_id, name, token_hash)

    async def create(self, player_id: str, name: str, token_hash: str | None, also: Sequence[Op] = ()) -> StoredPlayer:
        """Store a new player (with `also` in the same write: an account's credentials); its name is held while the
        row is written, so a concurrent claim here is refused at once and one on another node by the database
        (either way `NameTakenError`)."""
        key = name_key(name)
        if self.names.get(key, player_id) != player_id:
            raise taken(name)
        self.names[key] = player_id
        try:
            await self._write([op_player(player_id, name, token_hash), *also])
        except ConflictError:
            del self.names[key]
            raise taken(name) from None
        except BaseException:
            del self.names[key]
            raise
        player = StoredPlayer(player_id, name, token_hash, None)
        self.remember(player)
        return player

    async def rename(self, player: StoredPlayer, name: str, also: list[Op]) -> StoredPlayer:
        """Give `player` a new name, stored with `also` in one write (the operator's audit row); `NameTakenError` if
        another holds it. The renamed player."""
        key, old = name_key(name), name_key(player.name)
        if self.names.get(key, player.player_id) != player.player_id:
            raise NameTakenError(f"the name {name!r} is taken")
        try:
            await self._write([op_rename(player.player_id, name), *also])
        except ConflictError:
            raise NameTakenError(f"the name {name!r} is taken") from None
        renamed = replace(player, name=name)
        self.players[player.player_id] = renamed
        if self.names.get(old) == player.player_id:
            del self.names[old]
        self.names[key] = player.player_id
        return renamed

    async def close(self, player: StoredPlayer, also: list[Op]) -> None:
        """Close `player`'s identity (its token no longer says hello), stored with `also` in one write (the
        operator's ban and audit rows)."""
        await self._write([op_close_player(player.player_id), *also])
        self.players[player.player_id] = replace(player, token_hash=None)

    def forget(self, player_id: str) -> None:
        """Drop what is held here of a player (changed on another node): it is read back from the database when
        asked for."""
        self.players.pop(player_id, None)
        for key in [key for key, pid in self.names.items() if pid == player_id]:
            del self.names[key]
