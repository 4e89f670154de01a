"""Import contracts between the layers (ARCHITECTURE.md principle 11)."""

from __future__ import annotations

import ast
import re

from tests.helpers.paths import ROOT_DIR

ROOT = ROOT_DIR


def imports_of(package: str) -> dict[str, set[str]]:
    """Top-level modules imported by each file of a package."""
    found: dict[str, set[str]] = {}
    for path in (ROOT / package).rglob("*.py"):
        names: set[str] = set()
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Import):
                names.update(a.name for a in node.names)
            elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                names.add(node.module)
        found[str(path.relative_to(ROOT))] = names
    return found


def offenders(package: str, forbidden: tuple[str, ...], allow: tuple[str, ...] = ()) -> list[str]:
    """Files of `package` importing a forbidden module (allowed files excepted)."""
    bad = []
    for file, names in imports_of(package).items():
        if file in allow:
            continue
        bad += [f"{file}: {n}" for n in names if n.split(".")[0] in forbidden or n in forbidden]
    return bad


def test_protocol_is_pure() -> None:
    """protocol/ imports no network, storage, UI, or other project layer."""
    forbidden = ("websockets", "aiosqlite", "sqlite3", "textual", "asyncio", "socket",
                 "server", "bots", "client", "cli")
    assert offenders("protocol", forbidden) == []


def test_bots_do_not_import_server_or_client() -> None:
    """bots/ depends on protocol only, never on the server, the client or the network."""
    assert offenders("bots", ("server", "client", "websockets", "aiosqlite", "textual")) == []


def test_client_does_not_import_server_or_bots() -> None:
    """client/ talks to the server over the wire; only the embedded launcher may start one."""
    assert offenders("client", ("server", "bots"), allow=("client/embedded.py",)) == []


def test_server_does_not_import_client() -> None:
    """server/ never imports the terminal client or Textual."""
    assert offenders("server", ("client", "textual")) == []


SQL = re.compile(r"\b(SELECT\s[^\"']*\sFROM|INSERT\s+(OR\s+\w+\s+)?INTO|UPDATE\s+\w+\s+SET|DELETE\s+FROM"
                 r"|CREATE\s+(UNIQUE\s+)?(TABLE|INDEX))\b")
"""What a statement of SQL starts with."""


def test_sql_lives_in_storage() -> None:
    """No module outside server/storage/ holds SQL or imports a database driver: storage is the one SQL layer."""
    bad = []
    for package in ("protocol", "server", "bots", "client", "cli"):
        for path in (ROOT / package).rglob("*.py"):
            rel = path.relative_to(ROOT).as_posix()
            if not rel.startswith("server/storage/") and SQL.search(path.read_text()):
                bad.append(f"{rel}: SQL")
        drivers = offenders(package, ("sqlite3", "aiosqlite", "asyncpg"))
        bad += [o for o in drivers if not o.startswith("server/storage/")]
    assert bad == []


def test_the_arena_never_asks_which_deployment_runs() -> None:
    """No server module tests `cluster is None`, and the arena mixes in nothing: its deployment's collaborators
    (replication, presence, bot turns, identities) are chosen at start-up."""
    from server.core.arena import Arena

    tests = [path.relative_to(ROOT).as_posix() for path in (ROOT / "server").rglob("*.py")
             if re.search(r"cluster is (not )?None", path.read_text())]
    assert tests == []
    assert Arena.__bases__ == (object,)


ARENA_STATE = frozenset({"rooms", "seeks", "ratings", "seated", "creating"})
"""The arena's indexes: written by the arena alone (a change through `apply`/`apply_seek`, a load through
`load_room`), never by a handler or a deployment."""
ARENA_WRITERS = frozenset({"add_room", "drop_room", "index_seats"})
"""The arena's own index writers (a handler or a deployment calls `load_room` or a change path instead)."""
MUTATORS = frozenset({"pop", "popitem", "update", "clear", "setdefault", "add", "discard", "remove", "append"})


def is_arena(node: ast.expr) -> bool:
    """Whether an expression names the arena (`arena`, `a`, `self.arena`, `x.arena`)."""
    return (isinstance(node, ast.Name) and node.id in ("arena", "a")) or \
        (isinstance(node, ast.Attribute) and node.attr == "arena")


def is_state(node: ast.expr) -> bool:
    """Whether an expression is one of the arena's indexes (`arena.seeks`) or an entry of one (`a.rooms[mid]`)."""
    if isinstance(node, ast.Subscript):
        node = node.value
    return isinstance(node, ast.Attribute) and node.attr in ARENA_STATE and is_arena(node.value)


def arena_writes(source: str) -> list[int]:
    """The lines of `source` that write the arena's indexes themselves."""
    lines = []
    for node in ast.walk(ast.parse(source)):
        targets: list[ast.expr] = []
        if isinstance(node, ast.Assign):
            targets = node.targets
        elif isinstance(node, ast.AugAssign | ast.AnnAssign | ast.Delete):
            targets = node.targets if isinstance(node, ast.Delete) else [node.target]
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
            f = node.func
            if (f.attr in MUTATORS and is_state(f.value)) or (f.attr in ARENA_WRITERS and is_arena(f.value)):
                lines.append(node.lineno)
        lines += [t.lineno for t in targets if is_state(t)]
    return sorted(lines)


def test_arena_writes_find_each_kind_of_write() -> None:
    """The layer check below sees assignments, deletions, mutating calls and the arena's own index writers."""
    source = ("a.seeks[v] = s\ndel self.arena.seeks[v]\narena.ratings.update(x)\nself.arena.add_room(r)\n"
              "x = a.seeks.get(v)\nself.seeks[v] = s\narena.load_room(r)\n")
    assert arena_writes(source) == [1, 2, 3, 4]


def test_only_the_arena_writes_its_indexes() -> None:
    """Every write to the arena's rooms, seeks, ratings and seat index is the arena's own (a change through its
    change paths, a copy read from the database through `load_room`): no handler, deployment or engine writes
    them (`server/core/resume.py` loads the ratings of record at start-up)."""
    bad = []
    for path in (ROOT / "server").rglob("*.py"):
        rel = path.relative_to(ROOT).as_posix()
        if rel in ("server/core/arena.py", "server/core/resume.py"):
            continue
        bad += [f"{rel}:{line}" for line in arena_writes(path.read_text())]
    assert bad == []


EVENT_WRITERS = frozenset({"server/core/tournament_driver.py", "server/front/tournament_requests.py",
                           "server/cluster/tournaments.py",
                           "server/storage/tournaments.py"})
"""The modules that build an event's statements: the change path, the requests it runs, the cluster's guards."""
TOURNAMENT_RUNNERS = frozenset({"server/core/tournament_driver.py", "server/core/tournament_followers.py",
                                "server/core/tournament_owners.py", "server/front/tournament_requests.py"})
"""The modules that run tournaments on the arena (beside their rules in server/tournaments/)."""


def writes_outside(source: str, function: str) -> list[int]:
    """The lines of `source` that call a `write` outside the function named `function`."""
    inside: set[int] = set()
    calls: list[int] = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.AsyncFunctionDef | ast.FunctionDef) and node.name == function:
            inside |= {n.lineno for n in ast.walk(node) if hasattr(n, "lineno")}
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "write":
            calls.append(node.lineno)
    return [line for line in calls if line not in inside]


def test_events_are_written_only_through_the_change_path() -> None:
    """Every change to an event is stored by `TournamentDriver.apply` (with its guards, its version and the notice to
    the other servers): no other module imports the statements of events, and no other code of the tournaments'
    writes to the database."""
    import server.storage.tournaments as stored

    statements = {name for name in dir(stored) if name.startswith("op_")}
    bad = []
    for path in (ROOT / "server").rglob("*.py"):
        rel = path.relative_to(ROOT).as_posix()
        source = path.read_text()
        used = {a.name for node in ast.walk(ast.parse(source)) if isinstance(node, ast.ImportFrom)
                and node.module == "server.storage.tournaments" for a in node.names}
        if rel not in EVENT_WRITERS and used & statements:
            bad.append(f"{rel}: {sorted(used & statements)}")
        if rel.startswith("server/tournaments/") or rel in TOURNAMENT_RUNNERS:
            bad += [f"{rel}:{line}" for line in writes_outside(source, "apply" if rel.endswith("driver.py") else "")]
    assert bad == []


def test_the_core_knows_no_transport() -> None:
    """server/core/ imports neither websockets nor the transport edge, the front, the cluster or the assembly: it
    reaches a follower through `server.core.follower.Follower`."""
    forbidden = ("websockets", "server.edge", "server.front", "server.cluster", "server.assembly", "prometheus_client")
    bad = [f"{file}: {name}" for file, names in imports_of("server/core").items() for name in names
           if any(name == f or name.startswith(f + ".") for f in forbidden)]
    assert bad == []


def test_tournament_rules_do_no_io() -> None:
    """server/tournaments/ (pairings, standings, records, the state machine) imports no I/O and no other floor of
    the server."""
    forbidden = ("websockets", "aiosqlite", "asyncio", "socket", "server.core", "server.edge", "server.front",
                 "server.storage", "server.cluster", "server.assembly")
    bad = [f"{file}: {name}" for file, names in imports_of("server/tournaments").items() for name in names
           if any(name == f or name.startswith(f + ".") for f in forbidden)]
    assert bad == []


def module_imports(package: str) -> dict[str, set[str]]:
    """Each module of a package (dotted) and the modules it imports anywhere in it (in functions and
    `TYPE_CHECKING` blocks too), `from pkg import sub` counted as an import of `pkg.sub` when `sub` is a module."""
    modules = {".".join(path.relative_to(ROOT).with_suffix("").parts).removesuffix(".__init__"): path
               for path in (ROOT / package).rglob("*.py")}
    found: dict[str, set[str]] = {}
    for module, path in modules.items():
        names: set[str] = set()
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Import):
                names.update(a.name for a in node.names)
            elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                subs = {f"{node.module}.{a.name}" for a in node.names}
                names |= (subs & modules.keys()) | ({node.module} if subs - modules.keys() else set())
        found[module] = names & modules.keys()
    return found


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The import cycles of a graph: each strongly connected set of more than one module (or one importing itself)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found: list[list[str]] = []

    def visit(node: str) -> None:
        """Tarjan's step: number `node`, visit what it imports, and close its component if it is the root."""
        index[node] = low[node] = len(index)
        stack.append(node)
        for other in sorted(graph.get(node, ())):
            if other not in index:
                visit(other)
                low[node] = min(low[node], low[other])
            elif other in stack:
                low[node] = min(low[node], index[other])
        if low[node] == index[node]:
            part: list[str] = []
            while not part or part[-1] != node:
                part.append(stack.pop())
            if len(part) > 1 or node in graph.get(node, ()):
                found.append(sorted(part))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return found


def test_cycles_finds_each_loop() -> None:
    """The cycle check sees a loop of two, a loop of three and a module importing itself, and nothing else."""
    graph = {"a": {"b"}, "b": {"a"}, "c": {"d"}, "d": {"e"}, "e": {"c", "f"}, "f": set(), "g": {"g"}}
    assert sorted(cycles(graph)) == [["a", "b"], ["c", "d", "e"], ["g"]]


def test_storage_imports_have_no_cycle() -> None:
    """server/storage/ is built bottom-up: its statements, interface and errors below the backends, the opener
    above them, and no module of it imports one that imports it back (not even inside a function)."""
    assert cycles(module_imports("server/storage")) == []


def test_outside_engines_imports_have_no_cycle() -> None:
    """The KGP gateway's modules import one way: the gateway uses its tournament entry, which reaches the gateway
    only through the small protocol it declares."""
    assert cycles(module_imports("server/front/outside_engines")) == []


def test_storage_imports_no_floor_above_it() -> None:
    """server/storage/ imports neither the core, the transport edge, the front, the cluster nor the assembly (a name's
    canonical form comes from `protocol.names`)."""
    forbidden = ("server.core", "server.edge", "server.front", "server.cluster", "server.assembly")
    bad = [f"{module}: {name}" for module, names in module_imports("server").items()
           if module.startswith("server.storage") for name in names
           if any(name == f or name.startswith(f + ".") for f in forbidden)]
    assert bad == []


def test_server_imports_have_no_cycle() -> None:
    """No module of server/ imports one that imports it back, however far round (not even inside a function)."""
    assert cycles(module_imports("server")) == []


FLOORS = {"server.logs": 0, "server.log_writer": 0, "server.tournaments": 1, "server.storage": 2, "server.core": 3,
          "server.cluster": 4, "server.edge": 4, "server.front": 5, "server.assembly": 6}
"""server/'s floors, lowest first: a module imports only from its own floor or those below (the cluster and the
transport edge stand side by side and import neither the other)."""


def floor_of(module: str) -> tuple[str, int]:
    """The floor a module of server/ stands on, and its name."""
    for name, floor in FLOORS.items():
        if module == name or module.startswith(name + "."):
            return name, floor
    return "server", 0  # server/__init__.py


def test_server_floors_import_only_downward() -> None:
    """The folders of server/ are floors: no import runs up from a lower floor to a higher one, nor across from the
    cluster to the transport edge or back."""
    bad = []
    for module, names in module_imports("server").items():
        here, floor = floor_of(module)
        for name in names:
            there, other = floor_of(name)
            if other > floor or {here, there} == {"server.cluster", "server.edge"}:
                bad.append(f"{module} -> {name}")
    assert bad == []
