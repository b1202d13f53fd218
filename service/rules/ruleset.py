"""Rule sets: the knobs of every variant, their allowed values and defaults (RULES.md).

A variant is data: its deck, deal, meld shapes and the knobs it offers with their default
values. :func:`resolve_rules` turns a client's ``rules`` overrides into the complete,
validated knob values a game keeps for its whole life; :class:`Rules` is the typed view of
those values the engine reads.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, fields
from typing import Any

# ---------------------------------------------------------------------------------------
# Knobs


MATCH_END_MAX = 100_000
"""The largest target, number of deals or elimination total a ``match_end`` takes."""


@dataclass(frozen=True)
class Knob:
    """A house rule a game may set at creation.

    ``kind`` is ``"enum"`` (one of ``choices``), ``"bool"``, ``"int"`` (``minimum`` ..
    ``maximum``; ``nullable`` admits null = unlimited), ``"int_or_enum"`` (an integer from
    ``minimum`` to ``maximum`` or one of ``choices``), or ``"match_end"`` (an object with
    exactly one of ``choices`` as key and an integer within that key's ``limits``).
    Every integer a knob takes is bounded: a number beyond what the rule can mean (a
    ``melds_per_turn`` of 2^64) would be kept for the game's whole life.
    """

    name: str
    kind: str
    rule: str
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

    def _key_bounds(self) -> list[tuple[str, tuple[int, int]]]:
        return [(key, self.key_limits(key)) for key in self.choices]

    def _allowed(self) -> str:
        """What the knob takes, for messages."""
        if self.kind == "match_end":
            return " or ".join(f'{{"{key}": N}} with N from {low} to {high}'
                               for key, (low, high) in self._key_bounds())
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
        if self.kind == "match_end":
            if isinstance(value, Mapping) and len(value) == 1:
                (key, n), = value.items()
                if key in self.choices and _within(n, self.key_limits(key)):
                    return {key: n}
            raise RulesError(self.name, f"must be {self._allowed()}")
        raise AssertionError(self.kind)  # pragma: no cover

    def describe(self, default: Any) -> dict[str, Any]:
        """The knob as ``GET /v1/variants`` lists it: for a number, its bounds
        (``minimum``, ``maximum``; a ``match_end``'s by key under ``bounds``)."""
        out: dict[str, Any] = {"name": self.name, "type": self.kind, "rule": self.rule,
                               "description": self.description, "default": default}
        if self.choices:
            out["values"] = list(self.choices)
        if self.minimum is not None:
            out["minimum"] = self.minimum
        if self.maximum is not None:
            out["maximum"] = self.maximum
        if self.kind == "match_end":
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


KNOBS: dict[str, Knob] = {k.name: k for k in (
    Knob("ace", "enum", "C-RUN",
         "Ace in runs: low (A-2-3 only), high_or_low (also Q-K-A), around (K-A-2 wraps).",
         ("low", "high_or_low", "around")),
    Knob("melds_per_turn", "int_or_enum", "BASIC-MELDS-PER-TURN",
         "How many new melds a player may make in one turn (lay-offs are never limited).",
         ("unlimited",), minimum=1, maximum=20),  # 20: more than any hand could make
    Knob("lay_off_requires_own_meld", "bool", "BASIC-LAYOFF",
         "A player may lay off only after having melded in this hand."),
    Knob("must_discard_to_go_out", "bool", "BASIC-OUT",
         "A meld or lay-off that would leave no card to discard is refused."),
    Knob("scoring", "enum", "BASIC-SCORE",
         "winner_collects: the winner is credited the others' counts; penalty: each loser "
         "scores their own count.", ("winner_collects", "penalty")),
    Knob("going_rummy", "enum", "BASIC-RUMMY",
         "Going rummy (whole hand down in one turn): double the hand's points, a 10-point "
         "bonus to the winner, or nothing.", ("double", "bonus10", "off")),
    Knob("stock_exhausted", "enum", "C-STOCK",
         "When the stock is empty and a player wants it: turn_over the discard pile, "
         "shuffle all but its top card, or end_hand (Block rummy).",
         ("turn_over", "shuffle", "end_hand")),
    Knob("max_stock_rebuilds", "int", "C-STOCK",
         "How often the stock may be rebuilt in one hand; once more and the hand ends with "
         "nobody out (null = unlimited).", minimum=0, maximum=1000, nullable=True),
    Knob("match_end", "match_end", "BASIC-END",
         "When the match ends: after the hand in which someone reaches a target total, or "
         "after a number of deals.", ("target", "deals")),
    Knob("opening_points", "int", "R51-OPEN",
         "Points a player's first meld action must lay down.", minimum=0, maximum=500),
    Knob("opening_requires_clean_run", "bool", "R51-OPEN",
         "The opening must include a run of 3+ cards without a joker."),
    Knob("opening_counts_lay_offs", "bool", "R51-OPEN",
         "Lay-offs made in the opening action, after its melds, count toward the opening."),
    Knob("max_wilds_per_meld", "int", "R51-WILDS",
         "Most jokers in one meld, sets included (null = no limit).", minimum=1, maximum=8,
         nullable=True),
    Knob("joker_swap_from_set", "enum", "R51-SWAP",
         "Which sets a joker may be swapped out of: four_only (4-card sets), never, any.",
         ("four_only", "never", "any")),
    Knob("allow_take_from_meld", "bool", "R51-TAKE",
         "An opened player may take an end card of a run of 4+ or a card of a 4-card set to "
         "meld it anew in the same turn."),
    Knob("last_card_call", "enum", "R51-LAST",
         "required: a discard leaving one card must carry announce: true, else 2 penalty "
         "cards; auto: the referee announces.", ("required", "auto")),
    Knob("joker_penalty", "int", "R51-SCORE",
         "What a joker left in hand counts.", minimum=0, maximum=500),
    Knob("run_same_suit", "bool", "DUMMY-RUN",
         "Runs must be of one suit (false: a run may mix suits)."),
    Knob("playable_discard", "enum", "DUMMY-DISCARD",
         "forbid: a discard that would fit a meld on the table as a lay-off is refused, "
         "unless it is the last card or every card in hand would fit; allow.",
         ("forbid", "allow")),
    Knob("cut_ins", "bool", "DUMMY-CUTIN",
         "A player out of turn may claim the top discard (with the top 3 stock cards) before "
         "the next player draws from the stock; the next player has priority."),
)}


# ---------------------------------------------------------------------------------------
# Variants


@dataclass(frozen=True)
class Variant:
    """A rummy variant as data: deck, deal, meld shapes, knobs and their defaults."""

    id: str
    name: str
    rule_prefix: str
    decks: int
    jokers: int
    wild_twos: bool
    min_players: int
    max_players: int
    upcard: bool
    set_max: int | None
    set_distinct_suits: bool
    run_same_suit: bool
    defaults: Mapping[str, Any]
    deal_sizes: Mapping[int, int]
    """Cards dealt to each player, by number of players (the -DEAL rule)."""
    dealer_extra: int = 0
    """Extra cards for the dealer (R51-DEAL: the dealer gets 14)."""
    starter_extra: int = 0
    """Extra cards for the starting player (WROTHAM-DEAL)."""
    dealer_starts: bool = False
    """The dealer plays first (R51-FIRST); else the player on the dealer's left."""
    knob_overrides: Mapping[str, Knob] = field(default_factory=dict)

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
        from service.rules.cards import standard_deck

        return standard_deck(self.decks, self.jokers)

    def is_wild(self, code: str) -> bool:
        return code == "JK" or (self.wild_twos and code[0] == "2")

    def knob(self, name: str) -> Knob:
        """The knob as this variant offers it (some variants narrow its values)."""
        return self.knob_overrides.get(name) or KNOBS[name]

    def knob_list(self) -> list[dict[str, Any]]:
        values = default_rules(self)
        return [self.knob(name).describe(values[name]) for name in self.defaults]


BASIC = Variant(
    id="basic", name="Basic rummy", rule_prefix="BASIC", decks=1, jokers=0, wild_twos=False,
    min_players=2, max_players=6, upcard=True, set_max=4, set_distinct_suits=True,
    run_same_suit=True, deal_sizes={2: 10, 3: 7, 4: 7, 5: 6, 6: 6},
    defaults={
        "ace": "low",
        "melds_per_turn": "unlimited",
        "lay_off_requires_own_meld": False,
        "must_discard_to_go_out": False,
        "scoring": "winner_collects",
        "going_rummy": "double",
        "stock_exhausted": "shuffle",
        "max_stock_rebuilds": 3,
        "match_end": None,  # derived: {"target": 150} or {"target": 100} by scoring
    },
)

_R51_DEFAULTS: dict[str, Any] = {
    "ace": "high_or_low",
    "opening_points": 51,
    "opening_requires_clean_run": True,
    "opening_counts_lay_offs": True,
    "max_wilds_per_meld": 1,
    "joker_swap_from_set": "four_only",
    "allow_take_from_meld": False,
    "last_card_call": "required",
    "must_discard_to_go_out": True,
    "joker_penalty": 20,
    "stock_exhausted": "shuffle",
    "max_stock_rebuilds": 3,
    "match_end": {"target": 1000},
}
_R51_KNOBS = {
    "ace": Knob("ace", "enum", "R51-RUN",
                "Ace in runs: low (A-2-3 only) or high_or_low (also Q-K-A; never K-A-2).",
                ("low", "high_or_low")),
    "match_end": Knob("match_end", "match_end", "R51-END",
                      "After the hand in which someone reaches a target total (lowest total "
                      "wins), after a number of deals, or by elimination at a total.",
                      ("target", "deals", "eliminate_at")),
    "must_discard_to_go_out": Knob("must_discard_to_go_out", "bool", "R51-OUT",
                                   "Going out only by discarding the last card."),
    "stock_exhausted": KNOBS["stock_exhausted"],
}

RUMMY51 = Variant(
    id="rummy51", name="Rami / Rummy 51", rule_prefix="R51", decks=2, jokers=4,
    wild_twos=False, min_players=2, max_players=5, upcard=False, set_max=4,
    set_distinct_suits=True, run_same_suit=True, deal_sizes=dict.fromkeys(range(2, 6), 13),
    dealer_extra=1, dealer_starts=True, defaults=_R51_DEFAULTS, knob_overrides=_R51_KNOBS,
)

LEBANESE14 = Variant(
    id="lebanese14", name='Lebanese "14"', rule_prefix="L14", decks=2, jokers=4,
    wild_twos=False, min_players=2, max_players=5, upcard=False, set_max=4,
    set_distinct_suits=True, run_same_suit=True, deal_sizes=dict.fromkeys(range(2, 6), 14),
    dealer_extra=1, dealer_starts=True, defaults=_R51_DEFAULTS, knob_overrides=_R51_KNOBS,
)

DUMMY = Variant(
    id="dummy", name="Dummy rummy", rule_prefix="DUMMY", decks=2, jokers=4, wild_twos=True,
    min_players=2, max_players=4, upcard=True, set_max=None, set_distinct_suits=False,
    run_same_suit=False, deal_sizes=dict.fromkeys(range(2, 5), 13),
    defaults={
        "run_same_suit": False,
        "playable_discard": "forbid",
        "cut_ins": False,
        "stock_exhausted": "shuffle",
        "max_stock_rebuilds": 3,
        "match_end": {"contracts": 12},
    },
    knob_overrides={
        "match_end": Knob(
            "match_end", "match_end", "DUMMY-END",
            'After the hand in which someone completes contract N ({"contracts": 12}: the '
            "lowest total among those who completed them all wins), or after a number of "
            "deals (lowest total wins).", ("contracts", "deals"),
            limits={"contracts": (1, 12)}),  # the twelve contracts
    },
)
"""Dummy rummy (RULES.md DUMMY): its twelve contracts are in :mod:`service.rules.dummy`."""

WROTHAM = Variant(
    id="wrotham", name="Wrotham rummy", rule_prefix="WROTHAM", decks=1, jokers=3,
    wild_twos=False, min_players=2, max_players=6, upcard=False, set_max=4,
    set_distinct_suits=True, run_same_suit=True, deal_sizes=dict.fromkeys(range(2, 7), 7),
    starter_extra=1,
    # WROTHAM-SCORE: as BASIC-SCORE and BASIC-RUMMY, so basic rummy's knobs, plus these
    defaults={**{k: v for k, v in BASIC.defaults.items() if k != "match_end"},
              "joker_penalty": 15, "match_end": {"deals": 6}},
    knob_overrides={
        "joker_penalty": Knob("joker_penalty", "int", "WROTHAM-SCORE",
                              "What a joker left in hand counts.", minimum=0, maximum=500),
        "match_end": Knob("match_end", "match_end", "WROTHAM-LATE",
                          "The number of deals (six); the last three are late deals, "
                          "in which a player goes down all at once.", ("deals",)),
    },
)
"""Wrotham rummy (RULES.md WROTHAM): the starting player gets 8 cards, no upcard."""

VARIANTS: dict[str, Variant] = {v.id: v for v in (BASIC, RUMMY51, LEBANESE14, DUMMY, WROTHAM)}


def find_variant(variant_id: str) -> Variant:
    """The variant with that id; raise ``KeyError`` naming the known ones."""
    try:
        return VARIANTS[variant_id]
    except KeyError:
        raise KeyError(f"unknown variant {variant_id!r}; known: {', '.join(VARIANTS)}") from None


def _derived_defaults(variant: Variant, values: dict[str, Any]) -> None:
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
        if name not in KNOBS:
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
    """Typed view of a game's knob values (every knob of every variant; None = n/a)."""

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
