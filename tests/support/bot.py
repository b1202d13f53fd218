"""The tests' random player: :mod:`service.rules.randomplay` (shared with the benchmark)."""

from service.rules.randomplay import (
    choose_move,
    find_meld,
    find_opening,
    legal_discard,
    maybe_cut_in,
    play,
)

__all__ = ["choose_move", "find_meld", "find_opening", "legal_discard", "maybe_cut_in",
           "play"]
