"""The state of one game: everything the engine needs, as plain data.

``GameState.to_dict()`` / ``GameState.from_dict()`` round-trip through JSON-compatible
values. The store keeps :meth:`GameState.to_compact`, the same dict with every card list
written as one string of two-character codes (``["AS", "TH"]`` -> ``"ASTH"``; also in the
hidden deal record ``var["fair"]``) and table melds as arrays: fewer bytes, cheaper to
encode and parse. ``from_dict`` reads both forms. A variant's own facts (Dummy's contracts
and cut-ins) are typed, in ``GameState.variant_state`` (:class:`VariantState`); the stored
document keeps them in ``var`` under the variant's keys. The state holds hidden information
(hands, the stock, arranged deals still to come): only :mod:`service.rules.views` may show
it, and only to the seat allowed to see it.

Piles: ``stock[-1]`` is the top of the stock, ``discard[-1]`` the top of the discard pile
(``discard[0]`` its bottom).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, fields
from typing import Any

COMPILED = not __file__.endswith(".py")
"""Whether this module runs compiled by mypyc (``setup.py``), not from its source."""

_ATOMS = (str, int, float, bool, type(None))


def copy_plain(value: Any) -> Any:
    """A deep copy of a JSON-like value (dicts, lists, tuples as lists, atoms): what
    ``copy.deepcopy`` gives for such values, several times faster."""
    kind = type(value)
    if kind is dict:
        return {k: v if type(v) in _ATOMS else copy_plain(v) for k, v in value.items()}
    if kind is list or kind is tuple:
        return [v if type(v) in _ATOMS else copy_plain(v) for v in value]
    return value


def _pack(cards: list[str]) -> str | list[str]:
    """A card list as one string of two-character codes (kept as a list if any is not)."""
    text = "".join(cards)
    return text if len(text) == 2 * len(cards) else list(cards)


def _unpack(value: str | list[str]) -> list[str]:
    if type(value) is str:
        pairs = iter(value)
        return list(map("".join, zip(pairs, pairs, strict=True)))
    return list(value)


_DEAL_PILES = ("stock", "discard")
_DEAL_LISTS = ("hands", "rebuilds")
"""Card lists (and lists of card lists) of a deal record kept in ``var`` (the hidden deal of
the hand being played, :mod:`service.rules.fairness`): packed like the state's own."""
DEAL_RECORD = "fair"
"""The key of the hidden deal record in ``GameState.var`` (:mod:`service.rules.fairness`
names it ``SECRET``)."""


def pack_deal(record: Any) -> Any:
    """A deal record with its card lists packed (:func:`_pack`); a packed one as it is (the
    same object). The engine keeps the record packed: it is stored on every move and read
    at a hand's end only."""
    if type(record) is not dict:
        return record
    changes: dict[str, Any] = {}
    for key in _DEAL_PILES:
        if type(record.get(key)) is list:
            changes[key] = _pack(record[key])
    for key in _DEAL_LISTS:
        value = record.get(key)
        if type(value) is list and any(type(v) is list for v in value):
            changes[key] = [_pack(v) if type(v) is list else v for v in value]
    return {**record, **changes} if changes else record


def unpack_deal(record: Any) -> Any:
    """A deal record with its card lists as lists (the inverse of :func:`pack_deal`)."""
    if type(record) is not dict:
        return record
    out = dict(record)
    for key in _DEAL_PILES:
        if type(out.get(key)) is str:
            out[key] = _unpack(out[key])
    for key in _DEAL_LISTS:
        value = out.get(key)
        if type(value) is list and any(type(v) is str for v in value):
            out[key] = [_unpack(v) if type(v) is str else v for v in value]
    return out


def _copy_var(var: dict[str, Any]) -> dict[str, Any]:
    """A copy of ``GameState.var`` for a new state: deep, except for the hidden deal record
    (``"fair"``, :mod:`service.rules.fairness`), which is never changed in place (a new deal
    or a stock rebuild replaces it) and is shared: it is large, and copied on every move and
    every legal-move check."""
    out: dict[str, Any] = {}
    for key, value in var.items():
        if type(value) in _ATOMS or (key == DEAL_RECORD and type(value) is dict):
            out[key] = value
        else:
            out[key] = copy_plain(value)
    return out


class VariantState:
    """A variant's own facts of a game, typed (Dummy's contracts and cut-ins), kept in
    ``GameState.variant_state``. The stored document holds them in ``var`` under the
    variant's keys (:meth:`to_wire`); :func:`register_variant_state` tells
    :meth:`GameState.from_dict` how a variant reads them back."""

    def to_wire(self) -> dict[str, Any]:
        """The facts by their keys in the stored ``var``, as new JSON-compatible values."""
        raise NotImplementedError

    def copy(self) -> VariantState:
        """A copy that shares nothing that changes."""
        raise NotImplementedError


StateReader = Callable[[dict[str, Any]], VariantState | None]
"""Reads a variant's facts out of a stored ``var`` dict: takes its keys out of the dict it
is given (a copy) and returns them typed, or None when the dict holds none."""

_STATE_READERS: dict[str, StateReader] = {}


def register_variant_state(variant_id: str, read: StateReader) -> None:
    """How :meth:`GameState.from_dict` reads the facts of ``variant_id``'s games
    (:mod:`service.rules.variants` registers every variant that has some)."""
    _STATE_READERS[variant_id] = read


@dataclass
class TableMeld:
    """A meld on the table: its cards in order and what each stands for (``idents``)."""

    id: str
    owner: int
    kind: str
    cards: list[str]
    idents: list[str]
    start: int
    points: int = 0
    """Melding points (C-VALUE / R51-VALUE) of the cards as they stand."""
    _public: dict[str, Any] | None = field(default=None, repr=False, compare=False)
    _compact: list[Any] | None = field(default=None, repr=False, compare=False)
    """:meth:`public` and :meth:`to_compact`, made once: a meld is shared by the states
    copied from the one it was put on, and changed only as a copy (:meth:`GameState.
    own_meld`), so every move's view and stored state read the melds it left as they are.
    Neither is to be changed by whoever reads it, nor given to the constructor (they are
    arguments of it all the same: mypyc leaves a field out of ``__init__`` unset)."""

    def public(self) -> dict[str, Any]:
        """The meld as views show it."""
        view = self._public
        if view is None:
            view = self._public = {"meld_id": self.id, "owner": self.owner, "kind": self.kind,
                                   "cards": list(self.cards), "wilds": self.wilds()}
        return view

    def wilds(self) -> list[dict[str, Any]]:
        if self.cards == self.idents:  # most melds: every card stands for itself
            return []
        return [{"index": i, "card": c, "as": ident}
                for i, (c, ident) in enumerate(zip(self.cards, self.idents, strict=True))
                if c != ident]

    def copy(self) -> TableMeld:
        """A copy to change (its card lists its own)."""
        return TableMeld(self.id, self.owner, self.kind, list(self.cards), list(self.idents),
                         self.start, self.points)

    def to_dict(self) -> dict[str, Any]:
        return {"id": self.id, "owner": self.owner, "kind": self.kind, "cards": list(self.cards),
                "idents": list(self.idents), "start": self.start, "points": self.points}

    def to_compact(self) -> list[Any]:
        """``[id, owner, kind, cards, idents, start, points]``, card lists packed."""
        stored = self._compact
        if stored is None:
            cards = _pack(self.cards)
            idents = cards if self.idents == self.cards else _pack(self.idents)
            stored = self._compact = [self.id, self.owner, self.kind, cards, idents,
                                      self.start, self.points]
        return stored

    @staticmethod
    def from_stored(data: Any) -> TableMeld:
        """A meld from its :meth:`to_dict` or :meth:`to_compact` form."""
        if type(data) is list:
            mid, owner, kind, cards, idents, start, points = data
            return TableMeld(mid, owner, kind, _unpack(cards), _unpack(idents), start, points)
        return TableMeld(**data)


@dataclass
class GameState:
    variant: str
    rules: dict[str, Any]
    players: list[str]
    dealer: int
    hand_number: int = 1
    status: str = "playing"
    turn: int = 0
    phase: str = "draw"
    hands: list[list[str]] = field(default_factory=list)
    stock: list[str] = field(default_factory=list)
    discard: list[str] = field(default_factory=list)
    melds: list[TableMeld] = field(default_factory=list)
    meld_seq: int = 0
    totals: list[int | float] = field(default_factory=list)
    history: list[dict[str, Any]] = field(default_factory=list)
    winners: list[int] = field(default_factory=list)
    arranged: bool = False
    deals: list[dict[str, Any]] = field(default_factory=list)
    """Arranged deals for hands not dealt yet (hidden)."""
    rebuilds: int = 0
    """Stock rebuilds in this hand (C-STOCK)."""
    tabled: list[bool] = field(default_factory=list)
    """Per seat: put a card on the table in an earlier turn of this hand (BASIC-RUMMY)."""
    melded: list[bool] = field(default_factory=list)
    """Per seat: has melded (opened, R51-OPEN) in this hand."""
    out_of_match: list[bool] = field(default_factory=list)
    """Per seat: eliminated from the match (R51-END ``eliminate_at``)."""
    var: dict[str, Any] = field(default_factory=dict)
    """Plain facts beside the fields: the hand's hidden deal record
    (:mod:`service.rules.fairness`)."""
    variant_state: VariantState | None = None
    """The variant's own facts, typed (Dummy: :class:`~service.rules.variants.dummy.
    DummyState`); None in variants that keep none."""
    taken: str | None = None
    """The card taken from the discard pile this turn (C-DISCARD-BACK, R51-DRAW)."""
    taken_before: int = 0
    """How many copies of ``taken`` the hand held before taking it (two-deck games)."""
    turn_melds: int = 0
    """New melds made this turn (BASIC-MELDS-PER-TURN)."""
    turn_tabled: bool = False
    """A card was put on the table this turn."""
    turn_laid_off: bool = False
    """A card was laid off this turn."""
    turn_points: int = 0
    """Melding points put down this turn (L14-DRAW)."""
    turn_jokers: int = 0
    """Jokers put on the table this turn (L14-DRY)."""
    joker_floor: int | None = None
    """After a joker swap: the hand must get back to this many jokers (R51-SWAP)."""
    discard_only: bool = False
    """This turn's only action is a discard (R51-FIRST)."""
    started: bool = True
    """A move has been made in the game (C-ABORT: an abort comes before); a new game sets
    it False (a stored game without the field has been played)."""
    deadline: int | None = None
    """With knob ``clock``: when the current turn's time runs out (Unix time, ms; C-CLOCK),
    set from the store's clock when the turn starts."""
    clock_start: int | None = None
    """With knob ``clock``: when the game was made (Unix time, ms), the start of its first
    turn (a replay of the log starts the clock there)."""
    end: dict[str, Any] | None = None
    """How a match ended early (``{"reason": "resigned" | "timeout" | "aborted", "seat": s}``;
    C-RESIGN, C-CLOCK, C-ABORT); None while playing or after a match played out."""

    @property
    def players_count(self) -> int:
        return len(self.players)

    def meld(self, meld_id: str) -> TableMeld | None:
        """The table meld ``meld_id``, to read: it may be shared with other states
        (:meth:`copy`); one to change is :meth:`own_meld`'s."""
        return next((m for m in self.melds if m.id == meld_id), None)

    def own_meld(self, meld: TableMeld) -> TableMeld:
        """``meld``, a meld of this state's table, to change: a copy put in its place (the
        state this one was copied from, and any other, keeps the meld as it was)."""
        for i, each in enumerate(self.melds):
            if each is meld:
                mine = self.melds[i] = meld.copy()
                return mine
        raise ValueError(f"meld {meld.id!r} is not on this state's table")

    def to_dict(self) -> dict[str, Any]:
        """Every field as plain JSON-compatible data (a deep copy); the variant's facts in
        ``var``."""
        out = {name: copy_plain(getattr(self, name)) for name in _STORED}
        out["melds"] = [m.to_dict() for m in self.melds]
        if self.variant_state is not None:
            out["var"] = {**self.variant_state.to_wire(), **out["var"]}
        return out

    def to_compact(self) -> dict[str, Any]:
        """:meth:`to_dict` with card lists packed into strings and melds as arrays, for
        storage (values are shared with the state, not copied: encode it at once)."""
        out = self._values()
        del out["variant_state"]
        if self.variant_state is not None:
            out["var"] = {**self.variant_state.to_wire(), **self.var}
        out["hands"] = [_pack(h) for h in self.hands]
        out["stock"] = _pack(self.stock)
        out["discard"] = _pack(self.discard)
        out["melds"] = [m.to_compact() for m in self.melds]
        return out  # the deal record in ``var`` is kept packed already (pack_deal)

    @staticmethod
    def from_dict(data: dict[str, Any]) -> GameState:
        """The state of a :meth:`to_dict` or :meth:`to_compact` dict."""
        values = dict(data)
        var = values.get("var")
        if type(var) is dict:
            var = dict(var)
            read = _STATE_READERS.get(values.get("variant", ""))
            if read is not None:
                values["variant_state"] = read(var)
            if type(var.get(DEAL_RECORD)) is dict:  # kept packed
                var[DEAL_RECORD] = pack_deal(var[DEAL_RECORD])
            values["var"] = var
        values["melds"] = [TableMeld.from_stored(m) for m in values.get("melds", [])]
        for pile in ("stock", "discard"):
            if type(values.get(pile)) is str:
                values[pile] = _unpack(values[pile])
        hands = values.get("hands")
        if hands and any(type(h) is str for h in hands):
            values["hands"] = [_unpack(h) if type(h) is str else h for h in hands]
        return GameState(**values)

    def copy(self) -> GameState:
        """A deep copy (lists are copied; cards are immutable strings; the rules, players
        and arranged deals are never changed in place and are shared), but for the table's
        melds: the list is the copy's own, the melds in it are shared until one is changed,
        which is done to :meth:`own_meld`'s copy of it: a move copies none of the table's
        melds but those it changes."""
        values = self._values()
        values.update(
            hands=[list(h) for h in self.hands], stock=list(self.stock),
            discard=list(self.discard),
            melds=list(self.melds),
            totals=list(self.totals), history=list(self.history),
            winners=list(self.winners), tabled=list(self.tabled), melded=list(self.melded),
            out_of_match=list(self.out_of_match), var=_copy_var(self.var),
            end=None if self.end is None else dict(self.end),
            variant_state=None if self.variant_state is None else self.variant_state.copy(),
        )
        if COMPILED:
            return GameState(**values)
        new = object.__new__(GameState)  # no __init__: the values are the fields' already
        new.__dict__.update(values)
        return new

    def _values(self) -> dict[str, Any]:
        """The fields' values by name (shared, not copied). Compiled, the state has no
        ``__dict__`` and no attribute but its fields; interpreted, its ``__dict__`` is the
        quick way to them, unless another attribute was set on it."""
        if not COMPILED:
            values = dict(self.__dict__)
            if len(values) == len(_FIELDS):
                return values
        return {name: getattr(self, name) for name in _FIELDS}

    def reset_turn(self) -> None:
        """Forget the facts of the turn that ended."""
        self.taken = None
        self.taken_before = 0
        self.turn_melds = 0
        self.turn_tabled = False
        self.turn_laid_off = False
        self.turn_points = 0
        self.turn_jokers = 0
        self.joker_floor = None
        self.discard_only = False

    def next_seat(self, seat: int) -> int:
        """The next seat on the left still in the match (C-SEAT)."""
        n = self.players_count
        for step in range(1, n + 1):
            nxt = (seat + step) % n
            if not self.out_of_match or not self.out_of_match[nxt]:
                return nxt
        return seat

    def all_cards(self) -> list[str]:
        """Every card of the game wherever it is (C-DECK conservation checks)."""
        cards = list(self.stock) + list(self.discard)
        for hand in self.hands:
            cards.extend(hand)
        for m in self.melds:
            cards.extend(m.cards)
        return cards


_FIELDS = tuple(f.name for f in fields(GameState))
_STORED = tuple(name for name in _FIELDS if name != "variant_state")
"""The fields a stored document has a key for (the variant's facts are in ``var``)."""
