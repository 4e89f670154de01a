"""Bots and the search behind them.

- `bots.players`: `make_player(name)` for `random`, `greedy`, `alphabeta:N`, `perfect`,
  `perfect:SEEDS`; each has `async choose(position, budget_s) -> Action`.
- `bots.solver`: `Engine(variant, impl="c"|"py", tt_log2, egdb_seeds, egdb_dir)` with
  `solve(position, per_move, time_limit, depth) -> Solution` and `best_by_deepening`.
- `bots._search` (C, built by `pip install -e .`) and `bots.pysearch` (its pure-Python twin):
  `Rules(tables)`, `Searcher(rules, tt_log2, egdb).search(board, depth, alpha, beta,
  time_limit)`, `play`, `legal`, `rank`, `level_size`, `build_level`.
- `bots.egdb`: endgame databases, cached in `$KALAH_EGDB_DIR` or the user cache directory.

Exact values need an acyclic variant (counter-clockwise sowing, no relay); clockwise and
relay variants are played by depth-limited search. Relay sowing runs on the Python twin.
"""
