"""Rule sets: knobs, their allowed values, and variants as data (docs/rules.md).

A :class:`Knob` is a house rule a game may set; a :class:`Variant` is data: its deck, deal,
meld shapes and the knobs it offers with their default values (each variant's are in its
module of :mod:`service.rules.variants`; the knobs of the common model are here).
:func:`resolve_rules` turns a client's ``rules`` overrides into the complete, validated
knob values a game keeps for its whole life; :class:`Rules` is the typed view of those
values the engine reads.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, fields
from typing import Any

from service.rules.cards import standard_deck
from service.rules.rule_ids import RuleId

# ---------------------------------------------------------------------------------------
# Knobs


MATCH_END_MAX = 100_000
"""The largest target, number of deals or elimination total a ``match_end`` takes."""


@dataclass(frozen=True)
class Knob:
    """A house rule a game may set at creation.

    ``kind`` is ``"enum"`` (one of ``choices``), ``"bool"``, ``"int"`` (``minimum`` ..
    ``maximum``; ``nullable`` admits null = unlimited), ``"int_or_enum"`` (an integer from
    ``minimum`` to ``maximum`` or one of ``choices``), ``"match_end"`` (an object with
    exactly one of ``choices`` as key and an integer within that key's ``limits``), or
    ``"clock"`` (the same as ``match_end``, or null when ``nullable``).
    Every integer a knob takes is bounded: a number beyond what the rule can mean (a
    ``melds_per_turn`` of 2^64) would be kept for the game's whole life.
    """

    name: str
    kind: str
    rule: RuleId
    description: str
    choices: tuple[Any, ...] = ()
    minimum: int | None = None
    maximum: int | None = None
    nullable: bool = False
    limits: Mapping[str, tuple[int, int]] = field(default_factory=dict, hash=False)
    """``match_end``: each key's (minimum, maximum); 1 .. :data:`MATCH_END_MAX` unless
    given."""

    def key_limits(self, key: str) -> tuple[int, int]:
        """A ``match_end`` key's (minimum, maximum)."""
        return self.limits.get(key, (1, MATCH_END_MAX))

    @property
    def keyed(self) -> bool:
        """An object with one of ``choices`` as its key (``match_end``, ``clock``)."""
        return self.kind in ("match_end", "clock")

    def _key_bounds(self) -> list[tuple[str, tuple[int, int]]]:
        return [(key, self.key_limits(key)) for key in self.choices]

    def _allowed(self) -> str:
        """What the knob takes, for messages."""
        if self.keyed:
            return " or ".join([f'{{"{key}": N}} with N from {low} to {high}'
                                for key, (low, high) in self._key_bounds()]
                               + (["null"] if self.nullable else []))
        allowed = f"an integer from {self.minimum} to {self.maximum}"
        if self.choices:
            allowed += " or " + " or ".join(repr(c) for c in self.choices)
        if self.nullable:
            allowed += " or null"
        return allowed

    def check(self, value: Any) -> Any:
        """The normalized value, or raise :class:`RulesError` saying what is allowed."""
        if self.kind == "bool":
            if isinstance(value, bool):
                return value
            raise RulesError(self.name, "must be true or false")
        if self.kind == "enum":
            if isinstance(value, str) and value in self.choices:
                return value
            raise RulesError(self.name, f"must be one of {', '.join(map(str, self.choices))}")
        if self.kind in ("int", "int_or_enum"):
            if value is None and self.nullable:
                return None
            if self.kind == "int_or_enum" and isinstance(value, str) and value in self.choices:
                return value
            if _within(value, (self.minimum, self.maximum)):
                return value
            raise RulesError(self.name, f"must be {self._allowed()}")
        if self.keyed:
            if value is None and self.nullable:
                return None
            if isinstance(value, Mapping) and len(value) == 1:
                (key, n), = value.items()
                if key in self.choices and _within(n, self.key_limits(key)):
                    return {key: n}
            raise RulesError(self.name, f"must be {self._allowed()}")
        raise AssertionError(self.kind)  # pragma: no cover

    def describe(self, default: Any) -> dict[str, Any]:
        """The knob as ``GET /v1/variants`` lists it: for a number, its bounds
        (``minimum``, ``maximum``; a ``match_end``'s by key under ``bounds``)."""
        out: dict[str, Any] = {"name": self.name, "type": self.kind, "rule": self.rule.value,
                               "description": self.description, "default": default}
        if self.choices:
            out["values"] = list(self.choices)
        if self.minimum is not None:
            out["minimum"] = self.minimum
        if self.maximum is not None:
            out["maximum"] = self.maximum
        if self.keyed:
            out["bounds"] = {key: {"minimum": low, "maximum": high}
                             for key, (low, high) in self._key_bounds()}
        if self.nullable:
            out["nullable"] = True
        return out


def _within(value: Any, bounds: tuple[int | None, int | None]) -> bool:
    """``value`` is an integer (not a bool) from ``bounds[0]`` to ``bounds[1]``."""
    low, high = bounds
    return (type(value) is int and (low is None or value >= low)
            and (high is None or value <= high))


class RulesError(ValueError):
    """A bad ``rules`` entry: ``knob`` names it."""

    def __init__(self, knob: str, message: str) -> None:
        super().__init__(f"{knob}: {message}")
        self.knob = knob
        self.message = message


def knob_map(*knobs: Knob) -> dict[str, Knob]:
    """Knobs by name, in the order given."""
    return {k.name: k for k in knobs}


# The knobs of the common model (docs/rules.md, C), which most variants offer as they are.

ACE = Knob("ace", "enum", RuleId.C_RUN,
           "Ace in runs: low (A-2-3 only), high_or_low (also Q-K-A), around (K-A-2 wraps).",
           ("low", "high_or_low", "around"))
STOCK_EXHAUSTED = Knob(
    "stock_exhausted", "enum", RuleId.C_STOCK,
    "When the stock is empty and a player wants it: turn_over the discard pile, shuffle all "
    "but its top card, or end_hand (Block rummy).", ("turn_over", "shuffle", "end_hand"))
MAX_STOCK_REBUILDS = Knob(
    "max_stock_rebuilds", "int", RuleId.C_STOCK,
    "How often the stock may be rebuilt in one hand; once more and the hand ends with nobody "
    "out (null = unlimited).", minimum=0, maximum=1000, nullable=True)
CLOCK_MIN_SECONDS = 5
CLOCK_MAX_SECONDS = 86_400
CLOCK = Knob(
    "clock", "clock", RuleId.C_CLOCK,
    "A turn clock: {\"turn_seconds\": N} gives each turn N seconds from its start, after "
    "which another seat may claim the match (claim_timeout); null = no clock.",
    ("turn_seconds",), nullable=True,
    limits={"turn_seconds": (CLOCK_MIN_SECONDS, CLOCK_MAX_SECONDS)})
"""Every variant offers it, last, with the default null (C-CLOCK)."""


# ---------------------------------------------------------------------------------------
# Variants


@dataclass(frozen=True)
class Variant:
    """A rummy variant as data: deck, deal, meld shapes, knobs and their defaults, and the
    ids of its own versions of the common rules. Each is defined in its module of
    :mod:`service.rules.variants`, beside its rule hooks."""

    id: str
    name: str
    decks: int
    jokers: int
    wild_twos: bool
    min_players: int
    max_players: int
    upcard: bool
    set_max: int | None
    set_distinct_suits: bool
    run_same_suit: bool
    knobs: Mapping[str, Knob]
    """The knobs the variant offers, as it offers them (some narrow a knob's values), in
    the order ``GET /v1/variants`` lists them."""
    defaults: Mapping[str, Any]
    """Each knob's default (None: derived, :func:`default_rules`)."""
    deal_sizes: Mapping[int, int]
    """Cards dealt to each player, by number of players (the -DEAL rule)."""
    set_rule: RuleId
    """Its sets' rule (the -SET rule): what a refused set cites."""
    run_rule: RuleId
    """Its runs' rule (the -RUN rule)."""
    wild_rule: RuleId
    """Its rule of how many wilds a meld holds (the -WILDS rule)."""
    out_rule: RuleId
    """Its going-out rule, cited by knob ``must_discard_to_go_out``'s refusals (-OUT)."""
    end_rule: RuleId
    """Its end-of-match rule (-END), cited by moves made once the match is over."""
    dealer_extra: int = 0
    """Extra cards for the dealer (R51-DEAL: the dealer gets 14)."""
    starter_extra: int = 0
    """Extra cards for the starting player (WROTHAM-DEAL)."""
    dealer_starts: bool = False
    """The dealer plays first (R51-FIRST); else the player on the dealer's left."""

    def starter(self, players: int, dealer: int) -> int:
        return dealer if self.dealer_starts else (dealer + 1) % players

    def hand_size(self, players: int, seat: int, dealer: int) -> int:
        """Cards dealt to ``seat`` (the variant's -DEAL rule)."""
        size = self.deal_sizes[players]
        if seat == dealer:
            size += self.dealer_extra
        if seat == self.starter(players, dealer):
            size += self.starter_extra
        return size

    def deck(self) -> list[str]:
        return standard_deck(self.decks, self.jokers)

    def is_wild(self, code: str) -> bool:
        return code == "JK" or (self.wild_twos and code[0] == "2")

    def knob(self, name: str) -> Knob:
        """The knob as this variant offers it."""
        return self.knobs[name]

    def knob_list(self) -> list[dict[str, Any]]:
        values = default_rules(self)
        return [self.knob(name).describe(values[name]) for name in self.defaults]


def _derived_defaults(variant: Variant, values: dict[str, Any]) -> None:
    """BASIC-END: a ``match_end`` of None is a target of 150 (100 with penalty scoring)."""
    if "match_end" in values and values["match_end"] is None:
        values["match_end"] = {"target": 100 if values.get("scoring") == "penalty" else 150}


def default_rules(variant: Variant) -> dict[str, Any]:
    """The variant's knob values when a game sets none."""
    values = dict(variant.defaults)
    _derived_defaults(variant, values)
    return values


def resolve_rules(variant: Variant, overrides: Mapping[str, Any] | None) -> dict[str, Any]:
    """The variant's defaults with ``overrides`` applied, every value checked.

    Raise :class:`RulesError` (the first problem) for an unknown knob, a knob the variant
    does not have, or a bad value; :func:`rules_errors` lists them all.
    """
    problems = rules_errors(variant, overrides)
    if problems:
        raise problems[0]
    values = dict(variant.defaults)
    for name, value in (overrides or {}).items():
        values[name] = variant.knob(name).check(value)
    _derived_defaults(variant, values)
    return values


def rules_errors(variant: Variant, overrides: Mapping[str, Any] | None) -> list[RulesError]:
    """Every problem with ``overrides`` for ``variant`` (empty when they are fine)."""
    problems: list[RulesError] = []
    for name, value in (overrides or {}).items():
        if name not in _RULES_FIELDS:
            problems.append(RulesError(name, "unknown knob"))
        elif name not in variant.defaults:
            problems.append(RulesError(name, f"not a knob of variant {variant.id!r}"))
        else:
            try:
                variant.knob(name).check(value)
            except RulesError as exc:
                problems.append(exc)
    return problems


@dataclass(frozen=True)
class Rules:
    """Typed view of a game's knob values (every knob of every variant; None = n/a): its
    fields name every knob there is."""

    ace: str = "low"
    melds_per_turn: int | str = "unlimited"
    lay_off_requires_own_meld: bool = False
    must_discard_to_go_out: bool = False
    scoring: str = "winner_collects"
    going_rummy: str = "double"
    stock_exhausted: str = "shuffle"
    max_stock_rebuilds: int | None = 3
    match_end: Mapping[str, int] | None = None
    opening_points: int = 0
    opening_requires_clean_run: bool = False
    opening_counts_lay_offs: bool = False
    max_wilds_per_meld: int | None = None
    joker_swap_from_set: str = "four_only"
    allow_take_from_meld: bool = False
    last_card_call: str = "auto"
    joker_penalty: int = 0
    run_same_suit: bool = True
    playable_discard: str = "allow"
    cut_ins: bool = False
    clock: Mapping[str, int] | None = None
    knock_card: int = 10
    oklahoma: bool = False
    gin_bonus: int = 25
    undercut_bonus: int = 25
    undercut_on_tie: bool = True
    big_gin_bonus: int = 0
    discard_taken_card: bool = False
    game_bonus: int = 100
    box_bonus: int = 25
    shutout_doubles: bool = True

    @property
    def turn_seconds(self) -> int | None:
        """The turn clock's seconds (C-CLOCK), None without a clock."""
        return None if self.clock is None else self.clock["turn_seconds"]

    @staticmethod
    def of(values: Mapping[str, Any]) -> Rules:
        return Rules(**{k: v for k, v in values.items() if k in _RULES_FIELDS})

    @property
    def melds_limit(self) -> int | None:
        return None if self.melds_per_turn == "unlimited" else int(self.melds_per_turn)

    def values(self) -> tuple[Any, ...]:
        """Every knob value, hashable: equal for two ``Rules`` of the same knob values."""
        return tuple(tuple(sorted(v.items())) if isinstance(v, Mapping) else v
                     for v in (getattr(self, name) for name in _RULES_ORDER))


_RULES_ORDER = tuple(f.name for f in fields(Rules))
"""The knob names :class:`Rules` holds, in their order (:meth:`Rules.values`)."""
_RULES_FIELDS = frozenset(_RULES_ORDER)
"""The knob names :class:`Rules` holds (``Rules.of`` runs on every move)."""
