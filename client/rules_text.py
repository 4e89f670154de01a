"""The rules of a variant in plain words, for the help screen."""

from __future__ import annotations

from protocol import Capture, Leftover, Variant


def rules_text(v: Variant) -> str:
    """Markup text explaining the rules of `v`, option by option."""
    h, s = v.houses, v.seeds
    lines = [
        f"[b]{v.text()}[/b]: Kalah with {h} houses a side and {s} seeds in each at the start.",
        "",
        f"[b]Board.[/b] South's houses are bins 1-{h}, South's store bin {h + 1}; North's houses are "
        f"bins {h + 2}-{2 * h + 1}, North's store bin {2 * h + 2}. Each player owns the row nearest them "
        "and the store to their right. South moves first.",
        "",
        "[b]A move.[/b] Lift all seeds of one of your non-empty houses and sow them one by one "
        + ("clockwise (toward bin 1 first, then the other row, then your store)"
           if v.clockwise else "counter-clockwise")
        + ", into your own store but never the opponent's.",
    ]
    if v.relay:
        lines.append("[b]Relay sowing:[/b] when the last seed lands in a non-empty house, lift that house "
                     "and keep sowing; the turn ends in an empty house. No captures.")
    if v.extra_turn:
        lines.append("[b]Extra turn:[/b] if the last seed lands in your store, you move again.")
    else:
        lines.append("[b]No extra turns[/b] (KalahAlt): turns strictly alternate.")
    if not v.relay:
        if v.capture is Capture.STANDARD:
            lines.append("[b]Capture:[/b] last seed in an empty house of yours, opposite house not empty: "
                         "that seed and the opposite seeds go to your store.")
        elif v.capture is Capture.EMPTY:
            lines.append("[b]Empty capture:[/b] last seed in an empty house of yours captures, even when "
                         "the opposite house is empty.")
        else:
            lines.append("[b]No captures[/b] in this variant.")
    leftover = {
        Leftover.OWNER: "the seeds left in houses go to their owner",
        Leftover.EMPTIER: "the seeds left in houses go to the player whose houses are empty",
        Leftover.DISCARD: "the seeds left in houses are not counted",
    }[v.leftover]
    lines += ["", f"[b]End.[/b] When all houses of one player are empty the game ends; {leftover}."]
    if v.majority_end:
        lines.append("It also ends as soon as one store holds more than half of all seeds.")
    if v.can_repeat:
        lines.append("A position that occurs for the third time ends the game.")
    lines.append("The larger store wins; equal stores are a draw.")
    if v.pie:
        lines += ["", "[b]Pie rule:[/b] on North's first turn North may [b]swap[/b] (key s) instead of "
                  "sowing: the players change sides and the player who opened moves next, as North."]
    if v.opening_transfer:
        lines += ["", "[b]Opening transfer:[/b] before South's first move North may move one seed from any "
                  "house to any other (choose two houses), or none (key n)."]
    if v.time_control is not None:
        lines += ["", f"[b]Clock:[/b] {v.time_control.text()} seconds; running out of time loses."]
    keys = [*(["s: swap"] if v.pie else []), *(["n: no transfer"] if v.opening_transfer else []),
            "r: resign", "?: this help", "Esc: back", "q: quit (an unfinished game is kept: kalah play --resume)"]
    lines += [
        "",
        "[b]Keys.[/b] 1-9, 0, -, = choose your houses left to right; ←/→ and Enter; or click a house. "
        + " · ".join(keys) + ". In a replay: ←/→ step, Home/End jump.",
    ]
    return "\n".join(lines)
