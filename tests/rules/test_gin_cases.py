"""OpenSpiel's own hand-made gin rummy cases, restated as ours (docs/rules.md, GIN).

Each case is one of ``open_spiel/games/gin_rummy/gin_rummy_test.cc`` (google-deepmind/
open_spiel) or a property of the meld and deadwood utilities in its ``gin_rummy_utils.cc``,
played through our engine or asked of our meld checks, with the GIN rule it proves. The
deals are OpenSpiel's chance actions read as cards: its card ``i`` is rank ``i % 13`` of
suit ``"SCDH"[i // 13]``; its player 0 is dealt the first ten cards and acts first (our
seat 0, with seat 1 dealing), its player 1 the next ten, then the upcard; its stock draws
are our stock's top cards, in order. None of this needs OpenSpiel installed.
"""

from __future__ import annotations

import ast
import tomllib
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

from service.rules.cards import standard_deck
from service.rules.checks import check_one_meld
from service.rules.melds import Piece
from service.rules.state import GameState
from service.rules.variants import gin
from service.rules.views import public_view
from tests.support.engine import turn_moves
from tests.support.gin_game import (
    PASS,
    STOCK,
    TAKE,
    hand_end,
    knock,
    melds,
    new_hand,
    play,
    plays,
    refused,
)

_RANKS = "A23456789TJQK"
_SUITS = "SCDH"


def card(index: int) -> str:
    """OpenSpiel's card ``index`` as our code."""
    return _RANKS[index % 13] + _SUITS[index // 13]


def cards(*indexes: int) -> list[str]:
    return [card(i) for i in indexes]


def openspiel_game(actions: Sequence[int], draws: Sequence[int] = (),
                   rules: dict[str, Any] | None = None) -> GameState:
    """Our game on OpenSpiel's first 21 chance actions (two hands, the upcard) and the
    cards its stock draws give, in order."""
    return new_hand(rules, (cards(*actions[:10]), cards(*actions[10:20])), card(actions[20]),
                    cards(*draws), dealer=1)


def lay_out_deadwood(state: GameState, move: dict[str, Any]) -> int:
    """The deadwood the defender keeps after ``move``."""
    after, _ = play(state, state.turn, move)
    deadwood: int = after.history[-1]["deadwood"][state.turn]
    return deadwood


def lay_out(groups: Sequence[str], offs: dict[str, str] | None = None) -> dict[str, Any]:
    return {"type": "lay_out", "melds": melds(*groups),
            "lay_offs": [{"meld_id": m, "cards": c.split()} for m, c in (offs or {}).items()]}


# -- MeldTests: the melds there are ---------------------------------------------------------


def test_the_deck_holds_185_melds_of_three_to_five_cards() -> None:
    """GIN-PLAYERS: 65 sets (13 ranks: four sets of 3 and one of 4) and 120 runs of 3-5 (no
    Q-K-A), as OpenSpiel's ``AllMelds`` counts; our listing also holds the longer runs
    (OpenSpiel lays those as two)."""
    every = gin.all_melds(standard_deck())
    assert len([m for m in every if len(m) <= 5]) == 185
    assert len([m for m in every if len({c[0] for c in m}) == 1]) == 65
    assert len(every) == 65 + 4 * sum(14 - n for n in range(3, 14))


@pytest.mark.parametrize(("codes", "kind"), [
    ("AS 2S 3S", "run"),           # IsSuitMeld
    ("AS AC AD", "set"),           # IsRankMeld
    ("AS AC AD 2S", None),         # neither
    ("AS 2S 3S KS", None),         # no "around the corner" meld
    ("JS QS KS AC", None),         # consecutive in OpenSpiel's numbering, not a meld
    ("KS KC KD KH", "set"),
    ("9H TH JH QH KH", "run"),
    ("QS KS AS", None),            # ace low only
])
def test_what_is_a_meld(codes: str, kind: str | None) -> None:
    """GIN-PLAYERS, as ``/v1/melds/check`` answers for ``gin``."""
    answer = check_one_meld("gin", None, [Piece(c) for c in codes.split()])
    assert answer["valid"] is (kind is not None) and answer["kind"] == kind
    if kind is None:
        assert {e["rule"] for e in answer["errors"]} <= {"GIN-PLAYERS"}


@pytest.mark.parametrize(("codes", "count"), [
    # four aces (one set of 4, four of 3) and As2s3s
    ("AS AC AD AH 2S 3S", 6),
    # 4s and 5s: five sets each; 6s6c6d; the runs of spades, clubs and diamonds
    ("4S 4C 4D 4H 5S 5C 5D 5H 6S 6C 6D", 14),
])
def test_all_melds_in_a_hand(codes: str, count: int) -> None:
    """GIN-PLAYERS: every meld the cards hold, overlapping ones too (``AllMelds``)."""
    assert len(gin.all_melds(codes.split())) == count


# -- MinDeadwood, BestMeldGroup, LegalMelds, LegalDiscards ----------------------------------


@pytest.mark.parametrize(("codes", "deadwood", "melded"), [
    # BestMeldGroup: 4s4d4h, 5s5c5d, 2c3c4c leave 6s 3s; eleven cards discard the 6s: 3
    ("4S 4C 4D 4H 5S 5C 5D 6S 2C 3S 3C", 3, 9),
    # LegalMelds' example: 8s8c8d leaves the sixes and sevens (26); the runs leave 8d (8)
    ("6S 7S 8S 6C 7C 8C 8D", 8, 6),
    ("AS 2S 3S 4S 5S 6S 7S 8S 9S TS", 0, 10),
    ("AS AC AD 2S 2C 2D 3S 3C 3D KH", 10, 9),
    ("QS KS AS 2C 3D 4H 6S 8C TD JH", 64, 0),
    ("7C 7D 7H 7S 5S 6S 8S 9S KD KH", 20, 8),
])
def test_least_deadwood(codes: str, deadwood: int, melded: int) -> None:
    """GIN-KNOCK: the least deadwood of ten cards, or of eleven less the best discard
    (OpenSpiel's ``MinDeadwood``), and melds that leave it."""
    hand = codes.split()
    if len(hand) == 11:
        best = min(((gin.arrange([c for c in hand if c != d]), d) for d in hand),
                   key=lambda found: found[0][0])
        (dead, chosen), discard = best
        assert discard == "6S"
    else:
        dead, chosen = gin.arrange(hand)
    assert dead == deadwood and sum(len(m) for m in chosen) == melded
    assert all(check_one_meld("gin", None, [Piece(c) for c in m])["valid"] for m in chosen)


def test_legal_knock_discards() -> None:
    """GIN-KNOCK, GIN-TURN (OpenSpiel's ``LegalDiscards``): the knocks are the discards
    that leave deadwood within the limit; the card just taken from the discard pile is one
    of them only with ``discard_taken_card``."""
    actions = [11, 4, 5, 6, 21, 22, 23, 12, 25, 38, 1, 14, 27, 40, 7, 20, 33, 8, 19, 13, 36]
    for knob, discards in ((False, ["QS"]), (True, ["JD", "QS"])):
        s = plays(openspiel_game(actions, rules={"discard_taken_card": knob}), (0, TAKE))
        listed = [m for m in turn_moves(s, 0) if m["type"] == "knock"]
        assert sorted(m["card"] for m in listed) == discards
        assert refused(s, 0, knock("KS", "KC KD JD", "5S 6S 7S", "9C TC JC")) == (
            "INVALID_MELD", "GIN-PLAYERS")


# -- RankMeldLayoff, SuitMeldLayoffs, AllLayoffs -------------------------------------------


@pytest.mark.parametrize(("meld", "fits"), [
    ("7S 7C 7D", {"7H"}),                   # a set of 3 takes the fourth card
    ("7S 7C 7D 7H", set()),                 # a set of 4 none
    ("5S 6S 7S", {"4S", "8S"}),             # a run takes a card at either end
    ("AS 2S 3S", {"4S"}),                   # nothing below the ace
    ("JH QH KH", {"TH"}),                   # nothing above the king
    ("4S 5S 6S 7S 8S", {"3S", "9S"}),
])
def test_what_lays_off_on_a_meld(meld: str, fits: set[str]) -> None:
    """GIN-LAYOFF: the cards that lay off on a table meld (``RankMeldLayoff``,
    ``SuitMeldLayoffs``)."""
    group = tuple(meld.split())
    assert {c for c in standard_deck() if gin.extended(group, c) is not None} == fits


def test_a_run_grows_by_its_lay_offs() -> None:
    """GIN-LAYOFF (``AllLayoffs`` with earlier lay-offs): a card laid off on a run makes
    room for the next one beyond it."""
    grown = gin.extended(("JS", "QS", "KS"), "TS")
    assert grown == ("TS", "JS", "QS", "KS")
    assert gin.extended(grown, "9S") == ("9S", "TS", "JS", "QS", "KS")
    assert gin.extended(("JS", "QS", "KS"), "9S") is None


# -- GameplayTest1: breaking a meld to lay off wins an undercut -----------------------------

GAME_1 = [11, 4, 5, 6, 21, 22, 23, 12, 25, 38,   # QS 5S 6S 7S 9C TC JC KS KC KD
          1, 14, 27, 40, 7, 20, 33, 8, 19, 13,   # 2S 2C 2D 2H 8S 8C 8D 9S 7C AC
          36]                                    # JD up


def knocked_game_1() -> GameState:
    s = openspiel_game(GAME_1, rules={"undercut_bonus": 20})
    return plays(s, (0, TAKE), (0, knock("QS", "KS KC KD", "5S 6S 7S", "9C TC JC")))


def test_gameplay_1_the_defender_breaks_a_set_to_undercut() -> None:
    """GIN-KNOCK, GIN-LAYOFF, GIN-SCORE: the knocker keeps JD (10). The defender's eights
    as a set leave AC 9S 7C (17); laying off 8S 9S on 5S-7S and 8C 7C on 9C-JC instead
    leaves AC 8D (9): an undercut, 10 - 9 + the knob's 20 = 21 (OpenSpiel: -21, 21)."""
    s = knocked_game_1()
    assert public_view(s, "g", 1)["gin"]["knock"] == {"seat": 0, "deadwood": 10,
                                                       "kind": "knock"}
    assert lay_out_deadwood(s, lay_out(["2S 2C 2D 2H", "8S 8C 8D"])) == 17
    best = turn_moves(s, 1)
    assert len(best) == 1 and lay_out_deadwood(s, best[0]) == 9
    # the lay-offs in any order: 7C first still grows 9C-JC once 8C is on it
    s, events = play(s, 1, lay_out(["2S 2C 2D 2H"], {"m2": "8S 9S", "m3": "7C 8C"}))
    end = hand_end(events)
    assert (end["scores"], end["result"], end["deadwood"]) == ([0, 21], "undercut", [10, 9])
    assert public_view(s, "g", 0)["gin"]["deadwood"] == [10, 9]


def test_gameplay_1_the_naive_lay_out() -> None:
    """GIN-SCORE: had the defender kept the eights as a set, the knocker scored 17 - 10."""
    _, events = play(knocked_game_1(), 1, lay_out(["2S 2C 2D 2H", "8S 8C 8D"]))
    assert hand_end(events)["scores"] == [7, 0]


# -- GameplayTest2: the knocker lays sets, not runs, to avoid the undercut ------------------

GAME_2 = [1, 4, 5, 6, 17, 18, 19, 30, 31, 32,    # 2S 5S 6S 7S 5C 6C 7C 5D 6D 7D
          2, 3, 16, 29, 43, 44, 45, 7, 20, 33,   # 3S 4S 4C 4D 5H 6H 7H 8S 8C 8D
          0]                                     # AS up


@pytest.mark.parametrize(("knocker_melds", "defender", "scores", "result"), [
    # three sets: the defender melds 4S4C4D, 8S8C8D, 5H-7H and keeps 3S (3): 3 - 1 = 2
    (("5S 5C 5D", "6S 6C 6D", "7S 7C 7D"), 3, [2, 0], "knock"),
    # three runs: 4S 3S 8S, 4C 8C, 4D 8D all lay off, 5H-7H melds: 0, an undercut 1 + 25
    (("5S 6S 7S", "5C 6C 7C", "5D 6D 7D"), 0, [0, 26], "undercut"),
])
def test_gameplay_2_how_the_knocker_lays_out(knocker_melds: tuple[str, ...], defender: int,
                                            scores: list[int], result: str) -> None:
    """GIN-KNOCK, GIN-LAYOFF: the six overlapping melds of 5s-7s; the defender's best
    lay-out (the legal-moves example) answers the knocker's choice."""
    s = plays(openspiel_game(GAME_2), (0, TAKE))
    rest = [c for c in s.hands[0] if c != "2S"]
    assert len(gin.all_melds(rest)) == 6 and gin.arrange(rest)[0] == 1
    assert [m["card"] for m in turn_moves(s, 0) if m["type"] == "knock"] == ["2S"]
    s = plays(s, (0, knock("2S", *knocker_melds)))
    (best,) = turn_moves(s, 1)
    assert lay_out_deadwood(s, best) == defender
    _, events = play(s, 1, best)
    assert (hand_end(events)["scores"], hand_end(events)["result"]) == (scores, result)


def test_gameplay_2_lay_offs_on_sets() -> None:
    """GIN-LAYOFF: 5H 6H 7H may lay off on the knocker's sets instead of melding: the same
    deadwood (OpenSpiel lists those three lay-offs and the pass)."""
    s = plays(openspiel_game(GAME_2), (0, TAKE),
              (0, knock("2S", "5S 5C 5D", "6S 6C 6D", "7S 7C 7D")))
    offs = lay_out(["4S 4C 4D", "8S 8C 8D"], {"m1": "5H", "m2": "6H", "m3": "7H"})
    _, events = play(s, 1, offs)
    assert hand_end(events)["scores"] == [2, 0]


# -- GameplayTest3: a card laid off on a run, then the next ---------------------------------

GAME_3 = [10, 11, 12, 22, 35, 48, 13, 26, 1, 40,  # JS QS KS TC TD TH AC AD 2S 2H
          9, 8, 3, 16, 29, 42, 4, 17, 30, 43,     # TS 9S 4S 4C 4D 4H 5S 5C 5D 5H
          0]                                      # AS up


def test_gameplay_3_lay_off_on_the_run_then_beyond_it() -> None:
    """GIN-LAYOFF: TS lays off on JS-KS (not on the tens), and then 9S on TS-KS: the
    defender keeps nothing, an undercut of 2 - 0 + 25 = 27 (OpenSpiel: -27, 27)."""
    s = plays(openspiel_game(GAME_3), (0, TAKE),
              (0, knock("2S", "AS AC AD", "JS QS KS", "TC TD TH")))
    # TS on the tens leaves 9S (9): the knocker scores 7
    assert lay_out_deadwood(s, lay_out(["4S 4C 4D 4H", "5S 5C 5D 5H"], {"m3": "TS"})) == 9
    (best,) = turn_moves(s, 1)
    assert best["lay_offs"] == [{"meld_id": "m2", "cards": ["TS", "9S"]}]
    s, events = play(s, 1, best)
    assert (hand_end(events)["scores"], hand_end(events)["result"]) == ([0, 27], "undercut")


# -- WallTest: the 50th card; no lay-off on a gin -------------------------------------------

WALL_DEAL = [8, 9, 10, 11, 12, 13, 14, 15, 48, 49,  # 9S-KS AC 2C 3C TH JH
             0, 1, 2, 3, 4, 5, 6, 7, 50, 51,        # AS-8S QH KH
             16]                                    # 4C up
WALL_DRAWS = [*range(17, 45), 46]                   # 5C .. 6H, then 8H; 7H 9H stay


def at_the_wall() -> GameState:
    """Both pass the upcard; each draw from the stock is discarded again, but the last:
    player 0 keeps 8H and discards JH, leaving two cards in the stock."""
    s = plays(openspiel_game(WALL_DEAL, WALL_DRAWS), (0, PASS), (1, PASS))
    for i, drawn in enumerate(WALL_DRAWS):
        seat = i % 2
        s = plays(s, (seat, STOCK), (seat, {"type": "discard",
                                            "card": "JH" if drawn == 46 else card(drawn)}))
    return s


def test_wall_a_pass_ends_the_hand() -> None:
    """GIN-WALL: two cards left; player 1 may not draw from the stock, and a pass ends the
    hand with no score."""
    s = at_the_wall()
    assert len(s.stock) == 2 and s.turn == 1 and public_view(s, "g", 1)["gin"]["wall"]
    assert refused(s, 1, STOCK) == ("STOCK_DRAW_FORBIDDEN", "GIN-WALL")
    assert {m["type"] for m in turn_moves(s, 1)} == {"pass", "draw"}
    s, events = play(s, 1, PASS)
    assert (hand_end(events)["scores"], hand_end(events)["result"]) == ([0, 0], "wall_draw")


def test_wall_the_discard_taken_to_go_gin() -> None:
    """GIN-WALL, GIN-LAYOFF, GIN-SCORE: player 1 takes JH and goes gin (AS discarded;
    2S-8S, JH QH KH); player 0 may not lay TH off on JH-KH; 25 + 8H TH (18) = 43."""
    s = plays(at_the_wall(), (1, TAKE))
    assert refused(s, 1, {"type": "discard", "card": "AS"}) == ("MUST_KNOCK", "GIN-WALL")
    s = plays(s, (1, knock("AS", "2S 3S 4S 5S 6S 7S 8S", "JH QH KH")))
    assert refused(s, 0, lay_out(["9S TS JS QS KS", "AC 2C 3C"], {"m2": "TH"})) == (
        "INVALID_LAY_OFF", "GIN-LAYOFF")
    (best,) = turn_moves(s, 0)
    assert best["lay_offs"] == []
    s, events = play(s, 0, best)
    end = hand_end(events)
    assert (end["scores"], end["result"], end["deadwood"]) == ([0, 43], "gin", [18, 0])


# -- MaxGameLengthTest: OpenSpiel's cap on taking the discard, which GIN does not have ------


def test_no_cap_on_taking_the_discard() -> None:
    """GIN-TURN: OpenSpiel ends a hand at its 51st draw of the discard (its own cap, "well
    above anything observed in actual play"); no GIN rule does: after the same 51 draws
    our hand goes on. (The lockstep stops comparing there.)"""
    deal_ = [0, 1, 2, 13, 14, 15, 26, 27, 28, 39,      # AS 2S 3S AC 2C 3C AD 2D 3D AH
             9, 10, 11, 12, 23, 24, 25, 36, 37, 38,    # TS JS QS KS JC QC KC JD QD KD
             40]                                       # 2H up
    s = openspiel_game(deal_)
    discards = [0, 12, 1] * 17                         # AS, KS, 2S in turn
    for i, discard in enumerate(discards[:51]):
        s = plays(s, (i % 2, TAKE), (i % 2, {"type": "discard", "card": card(discard)}))
    assert s.status == "playing" and public_view(s, "g", 0)["gin"]["upcards_taken"] == 51


# -- OklahomaTest: an ace up means gin only -------------------------------------------------

OKLAHOMA_DEAL = [35, 37, 10, 11, 41, 14, 15, 16, 48, 49,  # TD QD JS QS 3H 2C 3C 4C TH JH
                 0, 1, 2, 3, 4, 5, 6, 7, 8, 51,           # AS-9S KH
                 13]                                      # AC up


def test_oklahoma_ace_up_gin_only() -> None:
    """GIN-KNOCK ``oklahoma``: AC up sets the limit to 0. Player 1 takes it, holds 1
    deadwood and may not knock; takes AD later and goes gin (AS AC AD, 2S-8S, 9S
    discarded): 25 + 63 = 88 (OpenSpiel: -88, 88)."""
    s = openspiel_game(OKLAHOMA_DEAL, [26], {"oklahoma": True})
    assert public_view(s, "g", 0)["gin"]["knock_limit"] == 0
    s = plays(s, (0, PASS), (1, TAKE))
    assert [m for m in turn_moves(s, 1) if m["type"] == "knock"] == []
    assert refused(s, 1, knock("KH", "AS 2S 3S 4S 5S 6S 7S 8S 9S")) == (
        "KNOCK_TOO_HIGH", "GIN-KNOCK")
    s = plays(s, (1, {"type": "discard", "card": "KH"}), (0, STOCK),
              (0, {"type": "discard", "card": "AD"}), (1, TAKE))
    # a gin whichever of 2S, 5S, 6S, 9S goes: the aces and the spades left in runs
    assert {m["card"] for m in turn_moves(s, 1) if m["type"] == "knock"} == {
        "2S", "5S", "6S", "9S"}
    s = plays(s, (1, knock("9S", "AS AC AD", "2S 3S 4S 5S 6S 7S 8S")))
    s, events = play(s, 0, lay_out(["2C 3C 4C"]))
    end = hand_end(events)
    assert (end["scores"], end["result"], end["deadwood"]) == ([0, 88], "gin", [63, 0])


# -- OpenSpiel is a test dependency only ---------------------------------------------------


def test_the_service_never_imports_openspiel() -> None:
    """``open-spiel`` is in pyproject's ``test`` extra, not among the service's dependencies,
    and no module of the service imports it."""
    root = Path(__file__).resolve().parents[2]
    project = tomllib.loads((root / "pyproject.toml").read_text())["project"]
    assert not any(d.startswith("open-spiel") for d in project["dependencies"])
    assert any(d.startswith("open-spiel") for d in project["optional-dependencies"]["test"])
    for path in sorted((root / "service").rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            names = [a.name for a in node.names] if isinstance(node, ast.Import) else \
                [node.module or ""] if isinstance(node, ast.ImportFrom) else []
            assert not any(n.split(".")[0] in ("pyspiel", "open_spiel") for n in names), path
