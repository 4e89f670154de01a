"""Bots and the search behind them.

- `bots.names`: `canonical_bot(text)`, the one id per bot (`random`, `greedy`, `alphabeta:N`,
  `perfect`); anything else raises `BotNameError` (wire code `unknown_bot`).
- `bots.core`: the boundaries. `Player` (a synchronous `decide(position, budget_s) -> Action`,
  run by a server in a worker thread), `SearchCore` (what the C core and the Python twin both
  are), and the flips between a `Position` and the core's mover-relative view
  (`relative_board`, `pit_to_bin`, `south_value`).
- `bots.players`: `make_player(bot_id, engines)`; searching players borrow an engine per decision.
- `bots.engines`: `Engines`, the engines lent to bots, shared databases, bounded in bytes.
- `bots.solver`: `Engine(variant, impl="c"|"py", tt_log2, egdb_seeds, egdb_dir, build_egdb)` with
  `solve(position, per_move, time_limit, depth) -> Solution` and `best_by_deepening`.
- `bots._search` (C, built by `pip install -e .`) and `bots.pysearch` (its pure-Python twin):
  `Rules(tables)`, `Searcher(rules, tt_log2, egdb).search(board, depth, alpha, beta,
  time_limit)`, `play`, `legal`, `rank`, `level_size`, `build_level`.
- `bots.egdb`: endgame databases, cached in `$KALAH_EGDB_DIR` or the user cache directory;
  built by `kalah egdb build` (or `kalah solve`), only loaded by hosted bots.

Exact values need an acyclic variant (counter-clockwise sowing, no relay); clockwise and
relay variants are played by depth-limited search. Relay sowing runs on the Python twin.
"""
