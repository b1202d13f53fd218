"""The state of one game: everything the engine needs, as plain data.

``GameState.to_dict()`` / ``GameState.from_dict()`` round-trip through JSON-compatible
values; the store keeps the encoded dict. The state holds hidden information (hands, the
stock, arranged deals still to come): only :mod:`service.rules.views` may show it, and only
to the seat allowed to see it.

Piles: ``stock[-1]`` is the top of the stock, ``discard[-1]`` the top of the discard pile
(``discard[0]`` its bottom).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any


@dataclass
class TableMeld:
    """A meld on the table: its cards in order and what each stands for (``idents``)."""

    id: str
    owner: int
    kind: str
    cards: list[str]
    idents: list[str]
    start: int

    def wilds(self) -> list[dict[str, Any]]:
        return [{"index": i, "card": c, "as": ident}
                for i, (c, ident) in enumerate(zip(self.cards, self.idents, strict=True))
                if c != ident]


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
    """Per seat: made a new meld in this hand (BASIC-LAYOFF)."""
    taken: str | None = None
    """The card taken from the discard pile this turn (C-DISCARD-BACK)."""
    taken_had_copy: bool = False
    """Whether the hand already held a copy of ``taken`` (two-deck games)."""
    turn_melds: int = 0
    """New melds made this turn (BASIC-MELDS-PER-TURN)."""
    turn_tabled: bool = False
    """A card was put on the table this turn."""

    @property
    def players_count(self) -> int:
        return len(self.players)

    def meld(self, meld_id: str) -> TableMeld | None:
        return next((m for m in self.melds if m.id == meld_id), None)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @staticmethod
    def from_dict(data: dict[str, Any]) -> GameState:
        values = dict(data)
        values["melds"] = [TableMeld(**m) for m in values.get("melds", [])]
        return GameState(**values)

    def copy(self) -> GameState:
        """A deep copy (lists are copied; cards are immutable strings)."""
        return GameState(
            variant=self.variant, rules=self.rules, players=self.players, dealer=self.dealer,
            hand_number=self.hand_number, status=self.status, turn=self.turn, phase=self.phase,
            hands=[list(h) for h in self.hands], stock=list(self.stock),
            discard=list(self.discard),
            melds=[TableMeld(m.id, m.owner, m.kind, list(m.cards), list(m.idents), m.start)
                   for m in self.melds],
            meld_seq=self.meld_seq, totals=list(self.totals), history=list(self.history),
            winners=list(self.winners), arranged=self.arranged, deals=self.deals,
            rebuilds=self.rebuilds, tabled=list(self.tabled), melded=list(self.melded),
            taken=self.taken, taken_had_copy=self.taken_had_copy,
            turn_melds=self.turn_melds, turn_tabled=self.turn_tabled,
        )

    def all_cards(self) -> list[str]:
        """Every card of the game wherever it is (C-DECK conservation checks)."""
        cards = list(self.stock) + list(self.discard)
        for hand in self.hands:
            cards.extend(hand)
        for m in self.melds:
            cards.extend(m.cards)
        return cards
