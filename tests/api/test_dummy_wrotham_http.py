"""Dummy and Wrotham over HTTP (API.md) through the Flask test client, on the real Redis:
whole hands from arranged deals, the way a client plays them.

* Dummy: a contract met and one failed (DUMMY-CONTRACTS), the failed one repeated in the
  next hand while the other seat moves on; a refused playable discard (DUMMY-DISCARD); a
  cut-in claimed and granted (DUMMY-CUTIN).
* Wrotham: three quick deals, then a late deal (WROTHAM-LATE) won all at once.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from typing import Any

from flask.testing import FlaskClient

from service.rules.cards import standard_deck
from tests.support.basic_game import CreatedGame
from tests.support.problems import PROBLEM


def arranged(deck: list[str], hands: Sequence[Sequence[str]], sizes: Sequence[int],
             discard: Sequence[str] = (), stock_top: Sequence[str] = ()) -> dict[str, Any]:
    """A complete deal of ``deck``: the hands filled up to ``sizes`` with leftover natural
    cards (wilds last), the discard pile, the stock's top cards first."""
    pool = Counter(deck)
    for card in [*(c for h in hands for c in h), *discard, *stock_top]:
        pool[card] -= 1
        assert pool[card] >= 0, f"{card} used too often"
    rest = sorted(pool.elements(), key=lambda c: (c == "JK" or (len(deck) > 55 and c[0] == "2"),
                                                  deck.index(c)))
    full = []
    for seat, size in enumerate(sizes):
        hand = list(hands[seat]) if seat < len(hands) else []
        while len(hand) < size:
            hand.append(rest.pop(0))
        full.append(hand)
    return {"hands": full, "discard": list(discard), "stock": [*stock_top, *rest]}


class Game(CreatedGame):
    """A created game (``body`` as posted), and the refused move's check."""

    def __init__(self, client: FlaskClient, **body: Any) -> None:
        super().__init__(client, body)

    def refused(self, seat: int, body: dict[str, Any], code: str, rule: str) -> dict[str, Any]:
        """An illegal move: 422 with ``code`` and ``rule``, and nothing changes."""
        before = (self.public(), [self.me(s) for s in range(len(self.tokens))])
        resp = self.client.post(f"{self.path}/moves", json=body, headers=self.headers(seat))
        assert resp.status_code == 422, resp.get_data(as_text=True)
        assert resp.mimetype == PROBLEM
        problem: dict[str, Any] = resp.get_json()
        assert (problem["code"], problem["rule"]) == (code, rule), problem
        assert (self.public(), [self.me(s) for s in range(len(self.tokens))]) == before
        return problem


def draw(source: str = "stock") -> dict[str, Any]:
    return {"type": "draw", "source": source}


def meld(*texts: str) -> dict[str, Any]:
    return {"type": "meld", "melds": [{"cards": t.split()} for t in texts]}


def lay_off(meld_id: str, text: str) -> dict[str, Any]:
    return {"type": "lay_off", "meld_id": meld_id, "cards": text.split()}


def discard(card: str) -> dict[str, Any]:
    return {"type": "discard", "card": card}


def hand_end(answer: dict[str, Any]) -> dict[str, Any]:
    return next(e for e in answer["events"] if e["type"] == "hand_end")


# ---------------------------------------------------------------------------------------
# Dummy

DUMMY_DECK = standard_deck(2, 4)
D1_SEAT0 = ["7H", "7S", "7D", "KC", "KD", "KS", "4D", "7C", "7C", "KH", "KH", "JK", "2S"]
D1_SEAT1 = ["3S", "4S", "5S", "6H", "8H", "9H", "TS", "JS", "QS", "AC", "AD", "3D", "3H"]
D2_SEAT0 = ["7H", "7S", "7D", "KC", "KD", "KS", "3C", "4H", "5C", "6D", "8S", "TC", "QD"]
D2_SEAT1 = ["5S", "5H", "5D", "9S", "9H", "9D", "3S", "4S", "6H", "8H", "TS", "JS", "QS"]


def test_variants_list_dummy_and_wrotham(client: FlaskClient) -> None:
    variants = {v["id"]: v for v in client.get("/v1/variants").get_json()["variants"]}
    assert variants["dummy"]["deck_size"] == 108 and variants["wrotham"]["deck_size"] == 55
    assert variants["dummy"]["rules"]["match_end"] == {"contracts": 12}
    assert variants["wrotham"]["rules"]["joker_penalty"] == 15
    assert {k["name"] for k in variants["dummy"]["knobs"]} == {
        "run_same_suit", "playable_discard", "cut_ins", "stock_exhausted",
        "max_stock_rebuilds", "match_end", "clock"}


def test_dummy_contract_met_and_failed_then_repeated(client: FlaskClient) -> None:
    deal1 = arranged(DUMMY_DECK, [D1_SEAT0, D1_SEAT1], [13, 13], ["QH"], ["2H", "9D", "5C"])
    deal2 = arranged(DUMMY_DECK, [D2_SEAT0, D2_SEAT1], [13, 13], ["QH"], ["8D", "JD"])
    game = Game(client, variant="dummy", players=["Ana", "Bo"], dealer=1,
                deals=[deal1, deal2])
    seats = game.public()["seats"]
    assert [s["contract"]["number"] for s in seats] == [1, 1]
    assert seats[0]["contract"]["text"] == "two sets of 3"

    # hand 1: seat 0 lays down contract 1 in one meld action, seat 1 does not
    game.ok(0, draw())
    answer = game.ok(0, meld("7H 7S 7D", "KC KD KS"))
    assert answer["game"]["seats"][0]["contract"]["down"] is True
    problem = game.refused(0, discard("7C"), "PLAYABLE_DISCARD", "DUMMY-DISCARD")
    assert "m1" in problem["detail"]
    game.ok(0, discard("4D"))
    game.ok(1, draw())
    game.ok(1, discard("9D"))
    game.refused(0, draw("discard"), "DISCARD_DRAW_FORBIDDEN", "DUMMY-DRAW")
    game.ok(0, draw())
    game.ok(0, lay_off("m1", "7C 7C JK"))
    game.ok(0, lay_off("m2", "KH KH 2S 2H"))
    end = hand_end(game.ok(0, discard("5C")))
    assert end["scores"] == [0, 100]
    assert end["contracts"] == [{"number": 1, "made": True}, {"number": 1, "made": False}]

    # hand 2: seat 0 is on contract 2, seat 1 repeats contract 1
    view = game.public()
    assert view["hand_number"] == 2 and view["turn"] == {"seat": 1, "phase": "draw"}
    assert [s["contract"]["number"] for s in view["seats"]] == [2, 1]
    assert [s["total"] for s in view["seats"]] == [0, 100]
    assert view["hands_played"][0]["scores"] == [0, 100]
    game.ok(1, draw())
    game.ok(1, meld("5S 5H 5D", "9S 9H 9D"))
    game.ok(1, discard("8D"))
    game.ok(0, draw())
    problem = game.refused(0, meld("7H 7S 7D", "KC KD KS"), "CONTRACT_NOT_MET",
                           "DUMMY-CONTRACTS")
    assert "contract 2 is a set of 3 and a run of 4" in problem["detail"]
    answer = game.ok(0, meld("7H 7S 7D", "3C 4H 5C 6D"))
    assert [m["kind"] for m in answer["game"]["melds"]] == ["set", "set", "set", "run"]
    assert [s["contract"]["down"] for s in answer["game"]["seats"]] == [True, True]
    game.refused(0, meld("KC KD KS"), "CONTRACT_ALREADY_MET", "DUMMY-AFTER")


def test_dummy_cut_in(client: FlaskClient) -> None:
    deal = arranged(DUMMY_DECK, [], [13, 13, 13], ["QH"], ["9C", "3D", "4D", "5D", "6D"])
    game = Game(client, variant="dummy", players=["Ana", "Bo", "Cy"], dealer=2,
                rules={"cut_ins": True}, deals=[deal])
    game.ok(0, draw())
    game.ok(0, discard("9C"))
    game.refused(1, {"type": "cut_in"}, "CUT_IN_NOT_ALLOWED", "DUMMY-CUTIN")
    game.refused(0, {"type": "cut_in"}, "CUT_IN_NOT_ALLOWED", "DUMMY-CUTIN")
    answer = game.ok(2, {"type": "cut_in"})
    assert answer["events"] == [{"type": "cut_in_claim", "seat": 2, "card": "9C", "next": 1}]
    assert game.public()["cut_in"] == {"open": True, "claims": [2]}
    answer = game.ok(1, draw())
    grant = next(e for e in answer["events"] if e["type"] == "cut_in")
    assert grant["seat"] == 2 and grant["card"] == "9C" and "cards" not in grant
    me = game.me(2)
    assert len(me["hand"]) == 17
    assert Counter(me["hand"]) >= Counter(["9C", "3D", "4D", "5D"])
    assert me["seats"][2]["contract"]["cut_ins"] == 1
    assert game.me(1)["hand"].count("6D") == 1
    assert game.public()["discard_top"] == "QH"


# ---------------------------------------------------------------------------------------
# Wrotham

WROTHAM_DECK = standard_deck(1, 3)
QUICK = ["3H", "4H", "5H", "6H", "9S", "9D", "9C", "KD"]
LOSER_1 = ["JK", "AS", "2S", "7C", "TD", "QC", "8S"]  # counts 53
LOSER_0 = ["AS", "2S", "7C", "TD", "QC", "8S", "4D"]  # counts 42
LATE = ["3H", "4H", "5H", "6H", "9S", "9D", "9C", "9H"]


def test_wrotham_late_deal_won_all_at_once(client: FlaskClient) -> None:
    deals = [arranged(WROTHAM_DECK, [QUICK, LOSER_1], [8, 7]),
             arranged(WROTHAM_DECK, [LOSER_0, QUICK], [7, 8]),
             arranged(WROTHAM_DECK, [QUICK, LOSER_1], [8, 7]),
             arranged(WROTHAM_DECK, [[], LATE], [7, 8])]
    game = Game(client, variant="wrotham", players=["Ana", "Bo"], dealer=1, deals=deals)
    view = game.public()
    assert view["turn"] == {"seat": 0, "phase": "play"}
    assert [s["hand_count"] for s in view["seats"]] == [8, 7] and view["discard_top"] is None
    for hand in range(3):
        starter = hand % 2
        game.ok(starter, meld("3H 4H 5H 6H", "9S 9D 9C"))
        end = hand_end(game.ok(starter, discard("KD")))
        assert end["going_rummy"] is True
    assert [s["total"] for s in game.public()["seats"]] == [212, 84]

    view = game.public()  # deal 4: a late deal, seat 1 starts with 8 cards and no draw
    assert view["hand_number"] == 4 and view["turn"] == {"seat": 1, "phase": "play"}
    game.refused(1, draw(), "WRONG_PHASE", "C-TURN")
    game.refused(1, meld("3H 4H 5H 6H"), "MUST_MELD_ALL_AT_ONCE", "WROTHAM-LATE")
    game.refused(1, meld("3H 4H 5H 6H", "9S 9D 9C 9H"), "MUST_DISCARD_TO_GO_OUT",
                 "WROTHAM-LATE")
    game.ok(1, meld("3H 4H 5H 6H", "9S 9D 9C"))
    end = hand_end(game.ok(1, discard("9H")))
    assert end["going_rummy"] is True and end["went_out"] == 1
    assert end["scores"] == [0, 2 * end["counts"][0]]
    view = game.public()
    assert view["hand_number"] == 5 and view["status"] == "playing"
    assert view["hands_played"][3]["going_rummy"] is True
