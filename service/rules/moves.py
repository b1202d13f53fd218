"""Moves as value types, with a round trip to and from their wire form (API.md "Moves").

``move_from_dict(move_to_dict(m)) == m`` for every move; :func:`move_from_dict` raises
:class:`~service.rules.errors.MalformedMove` naming the offending field. It reads the log's
moves when a game is replayed (:mod:`service.rules.verify`) and serves tests and tools; the
HTTP API reads a move with its schemas (``service.api.schemas.MoveSchema``), which make the
move themselves.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from service.rules.cards import CardError, canonical
from service.rules.errors import MalformedMove
from service.rules.melds import Piece


@dataclass(frozen=True)
class Draw:
    """Take the top card of the stock or of the discard pile (C-TURN)."""

    source: str  # "stock" | "discard"


@dataclass(frozen=True)
class LayOff:
    """Add cards from hand to a meld on the table (C-LAYOFF)."""

    meld_id: str
    cards: tuple[Piece, ...]
    end: str | None = None  # "low" | "high"


@dataclass(frozen=True)
class MeldMove:
    """Put one or more new melds on the table in one action, then optionally lay off on
    melds already there (an opening counts those lay-offs: R51-OPEN)."""

    melds: tuple[tuple[Piece, ...], ...]
    lay_offs: tuple[LayOff, ...] = ()


@dataclass(frozen=True)
class SwapJoker:
    """Replace a melded joker with the card it stands for (R51-SWAP, WROTHAM-SWAP)."""

    meld_id: str
    card: str


@dataclass(frozen=True)
class Take:
    meld_id: str
    card: str


@dataclass(frozen=True)
class TakeFromMeld:
    """Take cards from table melds and meld them anew (R51-TAKE)."""

    take: tuple[Take, ...]
    melds: tuple[tuple[Piece, ...], ...]


@dataclass(frozen=True)
class Discard:
    """Put one card face up on the discard pile, ending the turn."""

    card: str
    announce: bool = False


@dataclass(frozen=True)
class CutIn:
    """Claim the top discard out of turn (DUMMY-CUTIN)."""


@dataclass(frozen=True)
class Resign:
    """Give up the match, in or out of turn: it ends at once (C-RESIGN)."""


@dataclass(frozen=True)
class Abort:
    """Call the game off before the first move of the first hand (C-ABORT)."""


@dataclass(frozen=True)
class ClaimTimeout:
    """Claim the match from the seat whose turn's deadline has passed (C-CLOCK)."""


@dataclass(frozen=True)
class Pass:
    """Refuse the first upcard (GIN-FIRST), or pass at the wall (GIN-WALL)."""


@dataclass(frozen=True)
class Knock:
    """Discard ``card`` and lay out ``melds``; the cards not melded are deadwood (GIN-KNOCK).
    ``card`` None: big gin, all eleven cards melded (GIN-KNOCK ``big_gin_bonus``).
    ``lay_offs`` are refused (the knocker may not lay off, GIN-LAYOFF)."""

    card: str | None
    melds: tuple[tuple[Piece, ...], ...]
    lay_offs: tuple[LayOff, ...] = ()


@dataclass(frozen=True)
class LayOut:
    """The knocker's opponent lays out melds and lays off on the knocker's (GIN-LAYOFF)."""

    melds: tuple[tuple[Piece, ...], ...] = ()
    lay_offs: tuple[LayOff, ...] = ()


Move = (Draw | MeldMove | LayOff | SwapJoker | TakeFromMeld | Discard | CutIn | Pass | Knock
        | LayOut | Resign | Abort | ClaimTimeout)

MATCH_MOVES = ("resign", "abort", "claim_timeout")
"""The moves that end a match early, allowed to a seat in or out of turn."""

MOVE_KINDS: dict[type[Move], str] = {
    Draw: "draw", MeldMove: "meld", LayOff: "lay_off", SwapJoker: "swap_joker",
    TakeFromMeld: "take_from_meld", Discard: "discard", CutIn: "cut_in", Pass: "pass",
    Knock: "knock", LayOut: "lay_out", Resign: "resign", Abort: "abort",
    ClaimTimeout: "claim_timeout"}
"""Each move's ``type`` on the wire."""
MOVE_TYPES = tuple(MOVE_KINDS.values())


def kind_of(move: Move) -> str:
    """``move``'s ``type`` on the wire (``move_to_dict(move)["type"]``)."""
    return MOVE_KINDS[type(move)]


def _card(value: Any, field: str) -> str:
    if not isinstance(value, str):
        raise MalformedMove(field, "a card code string is required")
    try:
        return canonical(value)
    except CardError as exc:
        raise MalformedMove(field, str(exc)) from None


def _piece(value: Any, field: str) -> Piece:
    if isinstance(value, Mapping):
        unknown = set(value) - {"card", "as"}
        if unknown:
            raise MalformedMove(field, f"unknown field(s) {', '.join(sorted(unknown))}")
        as_ = value.get("as")
        return Piece(_card(value.get("card"), f"{field}.card"),
                     None if as_ is None else _card(as_, f"{field}.as"))
    return Piece(_card(value, field))


def _pieces(value: Any, field: str) -> tuple[Piece, ...]:
    if not isinstance(value, list) or not value:
        raise MalformedMove(field, "a non-empty list of cards is required")
    return tuple(_piece(v, f"{field}.{i}") for i, v in enumerate(value))


def _melds(value: Any, field: str) -> tuple[tuple[Piece, ...], ...]:
    if not isinstance(value, list) or not value:
        raise MalformedMove(field, "a non-empty list of melds is required")
    out = []
    for i, meld in enumerate(value):
        if not isinstance(meld, Mapping) or "cards" not in meld:
            raise MalformedMove(f"{field}.{i}", 'an object {"cards": [...]} is required')
        out.append(_pieces(meld["cards"], f"{field}.{i}.cards"))
    return tuple(out)


def _melds_or_none(value: Any, field: str) -> tuple[tuple[Piece, ...], ...]:
    """``melds`` that may be empty or absent (a lay-out with no meld, GIN-LAYOFF)."""
    if value is None or value == []:
        return ()
    return _melds(value, field)


def _lay_offs(value: Any) -> tuple[LayOff, ...]:
    if value is None:
        return ()
    if not isinstance(value, list):
        raise MalformedMove("lay_offs", "a list of lay-offs is required")
    return tuple(_lay_off(lo, f"lay_offs.{i}") for i, lo in enumerate(value))


def _str(value: Any, field: str, choices: tuple[str, ...] | None = None) -> str:
    if not isinstance(value, str) or not value:
        raise MalformedMove(field, "a string is required")
    if choices is not None and value not in choices:
        raise MalformedMove(field, f"must be one of {', '.join(choices)}")
    return value


def _lay_off(data: Any, where: str) -> LayOff:
    if not isinstance(data, Mapping):
        raise MalformedMove(where, 'an object {"meld_id", "cards"} is required')
    prefix = f"{where}." if where else ""
    end = data.get("end")
    return LayOff(_str(data.get("meld_id"), f"{prefix}meld_id"),
                  _pieces(data.get("cards"), f"{prefix}cards"),
                  None if end is None else _str(end, f"{prefix}end", ("low", "high")))


def move_from_dict(data: Mapping[str, Any]) -> Move:
    """The move a wire dict describes; raise :class:`MalformedMove`."""
    kind = data.get("type")
    if kind == "draw":
        return Draw(_str(data.get("source"), "source", ("stock", "discard")))
    if kind == "meld":
        lay_offs = data.get("lay_offs", [])
        if not isinstance(lay_offs, list):
            raise MalformedMove("lay_offs", "a list of lay-offs is required")
        return MeldMove(_melds(data.get("melds"), "melds"),
                        tuple(_lay_off(lo, f"lay_offs.{i}") for i, lo in enumerate(lay_offs)))
    if kind == "lay_off":
        return _lay_off(data, "")
    if kind == "swap_joker":
        return SwapJoker(_str(data.get("meld_id"), "meld_id"), _card(data.get("card"), "card"))
    if kind == "take_from_meld":
        takes = data.get("take")
        if not isinstance(takes, list) or not takes:
            raise MalformedMove("take", "a non-empty list is required")
        parsed = []
        for i, t in enumerate(takes):
            if not isinstance(t, Mapping):
                raise MalformedMove(f"take.{i}", 'an object {"meld_id", "card"} is required')
            parsed.append(Take(_str(t.get("meld_id"), f"take.{i}.meld_id"),
                               _card(t.get("card"), f"take.{i}.card")))
        return TakeFromMeld(tuple(parsed), _melds(data.get("melds"), "melds"))
    if kind == "discard":
        announce = data.get("announce", False)
        if not isinstance(announce, bool):
            raise MalformedMove("announce", "must be true or false")
        return Discard(_card(data.get("card"), "card"), announce)
    if kind == "cut_in":
        return CutIn()
    if kind == "pass":
        return Pass()
    if kind == "knock":
        card = data.get("card")
        return Knock(None if card is None else _card(card, "card"),
                     _melds_or_none(data.get("melds"), "melds"), _lay_offs(data.get("lay_offs")))
    if kind == "lay_out":
        return LayOut(_melds_or_none(data.get("melds"), "melds"),
                      _lay_offs(data.get("lay_offs")))
    if kind == "resign":
        return Resign()
    if kind == "abort":
        return Abort()
    if kind == "claim_timeout":
        return ClaimTimeout()
    raise MalformedMove("type", f"must be one of {', '.join(MOVE_TYPES)}")


def _piece_out(p: Piece) -> str | dict[str, str]:
    return p.card if p.as_ is None else {"card": p.card, "as": p.as_}


def _lay_off_out(move: LayOff) -> dict[str, Any]:
    out: dict[str, Any] = {"meld_id": move.meld_id, "cards": [_piece_out(p) for p in move.cards]}
    if move.end is not None:
        out["end"] = move.end
    return out


def move_to_dict(move: Move) -> dict[str, Any]:
    """The wire form of ``move`` (canonical card codes)."""
    if isinstance(move, Draw):
        return {"type": "draw", "source": move.source}
    if isinstance(move, MeldMove):
        meld: dict[str, Any] = {
            "type": "meld", "melds": [{"cards": [_piece_out(p) for p in m]} for m in move.melds]}
        if move.lay_offs:
            meld["lay_offs"] = [_lay_off_out(lo) for lo in move.lay_offs]
        return meld
    if isinstance(move, LayOff):
        return {"type": "lay_off", **_lay_off_out(move)}
    if isinstance(move, SwapJoker):
        return {"type": "swap_joker", "meld_id": move.meld_id, "card": move.card}
    if isinstance(move, TakeFromMeld):
        return {"type": "take_from_meld",
                "take": [{"meld_id": t.meld_id, "card": t.card} for t in move.take],
                "melds": [{"cards": [_piece_out(p) for p in m]} for m in move.melds]}
    if isinstance(move, Discard):
        d: dict[str, Any] = {"type": "discard", "card": move.card}
        if move.announce:
            d["announce"] = True
        return d
    if isinstance(move, Pass):
        return {"type": "pass"}
    if isinstance(move, Knock | LayOut):
        out: dict[str, Any] = {"type": "knock" if isinstance(move, Knock) else "lay_out"}
        if isinstance(move, Knock) and move.card is not None:
            out["card"] = move.card
        out["melds"] = [{"cards": [_piece_out(p) for p in m]} for m in move.melds]
        if move.lay_offs or isinstance(move, LayOut):
            out["lay_offs"] = [_lay_off_out(lo) for lo in move.lay_offs]
        return out
    if isinstance(move, Resign):
        return {"type": "resign"}
    if isinstance(move, Abort):
        return {"type": "abort"}
    if isinstance(move, ClaimTimeout):
        return {"type": "claim_timeout"}
    return {"type": "cut_in"}
