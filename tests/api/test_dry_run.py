"""A dry run (``POST …/moves?dry_run=true``) tells the seat what it may know before the move,
and nothing more (issue 41).

Over HTTP, on the real Redis: a stock draw's dry run does not name the card the real draw
then gets, in any variant, neither in its events nor in the view's hand; the Rummy 51 /
Lebanese 14 penalty for an unannounced last card does not show the two stock cards; a dry
run of a move that ends the hand shows neither the hand's scores nor the next deal; a
refused dry run is the real move's refusal; gin's pass, knock and lay-out (which ends the
hand) show nothing more than their public part. Each dry run is compared with the real move
made right after it (the public log of that move, and its answer).

Engine level (Hypothesis): in random reachable states of every variant, with random knobs,
the dry run of moves of every type the mover may try (up to three listed legal moves of each
type, the compound example, a Dummy cut-in by each other seat, gin's pass, knock and
lay-out, and moves that are usually illegal) holds no card the mover could not see before
the move, no score and nothing of a next hand (``hidden_cards.check_dry_run``).
"""

from __future__ import annotations

import json
from collections import Counter
from random import Random
from typing import Any

import pytest
from flask.testing import FlaskClient
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from service.rules import (
    GameState,
    Piece,
    Violation,
    apply,
    move_from_dict,
    move_to_dict,
    new_game,
)
from service.rules.cards import standard_deck
from service.rules.legal import legal_moves
from service.rules.moves import MATCH_MOVES, CutIn, Discard, Draw, Knock, LayOut, Move, Pass
from service.rules.randomplay import play
from service.rules.variants import gin
from service.rules.views import dry_run_answer
from service.store import GameStore
from tests.support.basic_game import B_HANDS, C_HANDS
from tests.support.deals import arranged, auth
from tests.support.gin_game import DEFENDER, KNOCK, KNOCKER, TAKE, UPCARD, deal
from tests.support.hidden_cards import check_dry_run, expected_dry_run, shown_cards

PLAYERS = {"basic": 2, "rummy51": 3, "lebanese14": 2, "dummy": 3, "wrotham": 2, "gin": 2}
R51_DECK = standard_deck(2, 4)


class Game:
    def __init__(self, client: FlaskClient, store: GameStore, variant: str = "basic",
                 players: int = 2, **fields: Any) -> None:
        body = {"variant": variant, "players": [f"P{i}" for i in range(players)], **fields}
        resp = client.post("/v1/games", json=body)
        assert resp.status_code == 201, resp.get_data(as_text=True)
        self.client, self.store = client, store
        self.id: str = resp.get_json()["game_id"]
        self.tokens: list[str] = [s["token"] for s in resp.get_json()["seats"]]
        self.path = f"/v1/games/{self.id}"

    def state(self) -> GameState:
        loaded = self.store.load(self.id)
        assert loaded.state is not None
        return GameState.from_dict(json.loads(loaded.state)["state"])

    def me(self, seat: int) -> dict[str, Any]:
        resp = self.client.get(f"{self.path}/me", headers=auth(self.tokens[seat]))
        assert resp.status_code == 200
        body: dict[str, Any] = resp.get_json()
        return body

    def move(self, seat: int, move: dict[str, Any], dry: bool = False) -> Any:
        return self.client.post(f"{self.path}/moves" + ("?dry_run=true" if dry else ""),
                                json=move, headers=auth(self.tokens[seat]))

    def ok(self, seat: int, move: dict[str, Any]) -> dict[str, Any]:
        resp = self.move(seat, move)
        assert resp.status_code == 200, resp.get_data(as_text=True)
        body: dict[str, Any] = resp.get_json()
        return body

    def public_log(self, version: int) -> list[dict[str, Any]]:
        entries = self.client.get(f"{self.path}/events?after={version - 1}").get_json()
        events: list[dict[str, Any]] = entries["entries"][0]["events"]
        return events

    def dry_then_real(self, seat: int, move: dict[str, Any]) -> tuple[Any, dict[str, Any]]:
        """The dry run's answer, checked against the real move made right after it
        (:func:`hidden_cards.expected_dry_run`), and the real answer."""
        before, stored = self.me(seat), self.state()
        dry = self.move(seat, move, dry=True)
        assert dry.status_code == 200, dry.get_data(as_text=True)
        assert self.state().to_dict() == stored.to_dict(), "the dry run stored something"
        real = self.ok(seat, move)
        public = self.public_log(real["game"]["version"])
        answer = dry.get_json()
        assert answer == expected_dry_run(real, public, before, seat)
        assert dry.headers["ETag"] == f'"{answer["game"]["version"]}"'
        return answer, real


def unseen_by(state: GameState, seat: int) -> set[str]:
    """Card codes no copy of which the seat can see (its hand, the melds, the discards)."""
    seen = set(state.hands[seat]) | set(state.discard) | {c for m in state.melds
                                                          for c in m.cards}
    return (set(state.stock) | {c for h in state.hands for c in h}) - seen


@pytest.mark.parametrize("variant", list(PLAYERS))
def test_a_stock_draw_dry_run_does_not_show_the_card_drawn(
        client: FlaskClient, store: GameStore, variant: str) -> None:
    for _attempt in range(20):  # a deal whose top stock card the drawer sees no copy of
        game = Game(client, store, variant, PLAYERS[variant], dealer=0)
        state = game.state()
        if variant == "gin":  # GIN-FIRST: the upcard is offered; both pass it
            for _ in range(2):
                game.ok(state.turn, {"type": "pass"})
                state = game.state()
        if state.phase != "draw":  # R51 / L14: the dealer discards first (R51-FIRST)
            seat = state.turn
            discard = next(c for c in state.hands[seat] if c != "JK")
            game.ok(seat, {"type": "discard", "card": discard})
            state = game.state()
        seat, top = state.turn, state.stock[-1]
        if top in unseen_by(state, seat):
            break
    else:
        pytest.fail("no deal with an unseen stock top")
    dry = game.move(seat, {"type": "draw", "source": "stock"}, dry=True)
    assert dry.status_code == 200, dry.get_data(as_text=True)
    assert top not in shown_cards(dry.get_json()), (top, dry.get_json())
    assert dry.get_json()["events"][0] == {"type": "draw", "seat": seat, "source": "stock",
                                           "dry_run": True}
    assert Counter(dry.get_json()["game"]["hand"]) == Counter(state.hands[seat])
    assert dry.get_json()["game"]["seats"][seat]["hand_count"] == len(state.hands[seat]) + 1
    answer, real = game.dry_then_real(seat, {"type": "draw", "source": "stock"})
    assert real["events"][0]["card"] == top  # the real draw gets the card the dry run hid
    assert top in real["game"]["hand"]
    assert answer["game"]["version"] == real["game"]["version"]


R51_HAND1 = ["9H", "TH", "JH", "QH", "KH", "KS", "KD", "KC", "2S", "3S", "4S", "5S", "7C"]
R51_HAND0 = ["AS", "3D", "5H", "6C", "7D", "8S", "9C", "JD", "QC", "2H", "4C", "6D", "8C", "TC"]


@pytest.mark.parametrize("variant", ["rummy51", "lebanese14"])
def test_an_unannounced_last_card_dry_run_does_not_show_the_penalty_cards(
        client: FlaskClient, store: GameStore, variant: str) -> None:
    """R51-LAST: a discard that leaves one card without ``announce`` draws two penalty cards
    from the stock; the dry run says two would be drawn, not which."""
    extra = ["AS"] if variant == "lebanese14" else []  # 14 cards (the dealer 15)
    hands = [[*R51_HAND0, *(["9D"] if extra else [])], [*R51_HAND1[:8], *extra,
                                                        *R51_HAND1[8:]]]
    deal = arranged(hands, None, ["8D", "4H", "5C"], deck=R51_DECK)
    game = Game(client, store, variant, 2, dealer=0, deals=[deal])
    game.ok(0, {"type": "discard", "card": "TC"})
    game.ok(1, {"type": "draw", "source": "stock"})
    spades = [*extra, "2S", "3S", "4S", "5S"]
    game.ok(1, {"type": "meld", "melds": [
        {"cards": ["9H", "TH", "JH", "QH", "KH"]}, {"cards": ["KS", "KD", "KC"]},
        {"cards": spades}]})
    assert sorted(game.me(1)["hand"]) == ["7C", "8D"]
    dry = game.move(1, {"type": "discard", "card": "7C"}, dry=True)
    assert dry.status_code == 200, dry.get_data(as_text=True)
    assert not {"4H", "5C"} & set(shown_cards(dry.get_json())), dry.get_json()
    penalty = [e for e in dry.get_json()["events"] if e["type"] == "penalty"]
    assert penalty and penalty[0]["count"] == 2 and "cards" not in penalty[0]
    assert dry.get_json()["game"]["hand"] == ["8D"]
    _, real = game.dry_then_real(1, {"type": "discard", "card": "7C"})
    assert [e["cards"] for e in real["events"] if e["type"] == "penalty"] == [["4H", "5C"]]


# Deal B (tests/support/basic_game.py): seat 0 goes out at once after taking the upcard
# 5C; deal C: the next hand.


@pytest.mark.parametrize("match_end", [{"deals": 1}, {"deals": 2}])
def test_a_going_out_dry_run_shows_no_score_and_no_next_deal(
        client: FlaskClient, store: GameStore, match_end: dict[str, int]) -> None:
    game = Game(client, store, "basic", 2, dealer=1, rules={"match_end": match_end},
                deals=[arranged(B_HANDS, "5C", []), arranged(C_HANDS, "6C", ["8D"])])
    game.ok(0, {"type": "draw", "source": "discard"})
    out = {"type": "meld", "melds": [{"cards": ["7H", "8H", "9H", "TH"]},
                                     {"cards": ["QS", "QD", "QC"]},
                                     {"cards": ["2C", "3C", "4C", "5C"]}]}
    before = game.me(0)
    dry = game.move(0, out, dry=True)
    assert dry.status_code == 200, dry.get_data(as_text=True)
    answer = dry.get_json()
    assert [e["type"] for e in answer["events"]] == ["meld", "hand_end"]
    assert answer["events"][1] == {"type": "hand_end", "hand_number": 1, "went_out": 0,
                                   "reason": "out", "dry_run": True}
    assert answer["game"] == before  # not the next hand's view, nor the scores
    opponent = {"KS", "KH", "5D", "6D", "7D", "AS", "2S", "8C", "9S", "JD"}
    assert not opponent & set(shown_cards(answer)), answer
    _, real = game.dry_then_real(0, out)
    kinds = [e["type"] for e in real["events"]]
    assert kinds == (["meld", "hand_end", "game_end"] if match_end["deals"] == 1
                     else ["meld", "hand_end", "dealt"])
    assert real["events"][1]["scores"] == [136, 0]  # 68, doubled: going rummy


def test_a_refused_dry_run_is_the_real_refusal(client: FlaskClient, store: GameStore) -> None:
    game = Game(client, store, "basic", 2, dealer=1,
                deals=[arranged(B_HANDS, "5C", ["8D"])])
    for seat, move in [(1, {"type": "draw", "source": "stock"}),
                       (0, {"type": "discard", "card": "7H"}),
                       (0, {"type": "meld", "melds": [{"cards": ["7H", "8H", "KS"]}]})]:
        dry = game.move(seat, move, dry=True)
        real = game.move(seat, move)
        assert dry.status_code == real.status_code == 422
        assert dry.get_json() == real.get_json()


@pytest.mark.random_run
def test_dry_runs_of_listed_moves_over_http_keep_hidden_cards_hidden(
        client: FlaskClient, store: GameStore) -> None:
    """A sample of the mover's listed moves (and the compound example) in random play of
    every variant, dry run over HTTP and judged on the state in Redis before the move."""
    rng = Random(7)
    for variant, players in PLAYERS.items():
        game = Game(client, store, variant, players)
        for _ in range(60):
            state = game.state()
            if state.status != "playing":
                break
            seat = state.turn
            listed = game.client.get(f"{game.path}/legal-moves",
                                     headers=auth(game.tokens[seat])).get_json()
            example = (listed["compound"] or {}).get("example")
            for wire in rng.sample(listed["moves"], min(6, len(listed["moves"]))) + (
                    [example] if example else []):
                dry = game.move(seat, wire, dry=True)
                assert dry.status_code == 200, (wire, dry.get_data(as_text=True))
                check_dry_run(state, seat, dry.get_json(), wire)
            mover, move = next_move(state, rng)
            game.ok(mover, move_to_dict(move))


def next_move(state: GameState, rng: Random) -> tuple[int, Move]:
    """The test bot's next move (a Dummy cut-in claim, sometimes) and who makes it."""
    if state.variant == "gin":
        return state.turn, gin_move(state, rng)
    made: list[tuple[int, Move]] = []
    play(state, rng, max_moves=1, on_move=lambda _s, seat, move, *_: made.append((seat, move)))
    return made[0]


def gin_move(state: GameState, rng: Random) -> Move:
    """A gin move from the listed ones (the random player plays no gin): a knock when one
    is listed, most often, and a discard that keeps the least deadwood, so that hands are
    knocked and laid out, not only drawn at the wall; else any listed move."""
    seat = state.turn
    listed = [m for m in legal_moves(state, seat).moves if m["type"] not in MATCH_MOVES]
    knocks = [m for m in listed if m["type"] == "knock"]
    if knocks and rng.random() < 0.8:
        return move_from_dict(rng.choice(knocks))
    discards = [m for m in listed if m["type"] == "discard"]
    if discards and rng.random() < 0.7:
        hand = state.hands[seat]
        return move_from_dict(min(discards, key=lambda m: gin.arrange(
            [c for c in hand if c != m["card"]])[0]))
    return move_from_dict(rng.choice(listed))


def test_gin_dry_runs_of_a_pass_a_knock_and_a_lay_out(client: FlaskClient,
                                                       store: GameStore) -> None:
    """GIN-FIRST, GIN-KNOCK, GIN-LAYOFF: the dry run of a pass, of taking the upcard, of a
    knock (whose event shows the knocker's own cards) and of the lay-out that ends the hand
    (its example from legal-moves: no scores, no deadwood of the hand's end, nothing of the
    next deal) is the real move's public part, and shows no card the mover could not see."""
    game = Game(client, store, "gin", 2, dealer=0, rules={"match_end": {"deals": 2}},
                deals=[deal((DEFENDER, KNOCKER), UPCARD)])
    passing = Game(client, store, "gin", 2, dealer=0, rules={"match_end": {"deals": 1}},
                   deals=[deal((DEFENDER, KNOCKER), UPCARD)])
    made = []
    for table, seat, move in [(passing, 1, {"type": "pass"}), (game, 1, TAKE), (game, 1, KNOCK),
                              (game, 0, None)]:
        before = table.state()
        if move is None:  # the defender's best lay-out, as legal-moves gives it
            move = table.client.get(f"{table.path}/legal-moves",
                                    headers=auth(table.tokens[seat])).get_json()["moves"][0]
            assert move["type"] == "lay_out" and move["lay_offs"]
        answer, _ = table.dry_then_real(seat, move)
        check_dry_run(before, seat, answer, move)
        made.append([e["type"] for e in answer["events"]])
    assert made == [["pass"], ["draw"], ["discard", "meld", "knock"],
                    ["meld", "lay_off", "lay_off", "lay_out", "hand_end"]]
    assert game.state().hand_number == 2  # the lay-out did end the hand


# ---------------------------------------------------------------------------------------
# Engine level (Hypothesis): every move type, every variant

KNOBS = {
    "basic": st.fixed_dictionaries({}, optional={
        "stock_exhausted": st.sampled_from(["turn_over", "shuffle", "end_hand"]),
        "must_discard_to_go_out": st.booleans(),
        "match_end": st.integers(1, 3).map(lambda n: {"deals": n})}),
    "rummy51": st.fixed_dictionaries({}, optional={
        "last_card_call": st.sampled_from(["required", "auto"]),
        "allow_take_from_meld": st.booleans(),
        "opening_points": st.sampled_from([30, 51]),
        "stock_exhausted": st.sampled_from(["turn_over", "shuffle", "end_hand"]),
        "match_end": st.integers(1, 3).map(lambda n: {"deals": n})}),
    "lebanese14": st.fixed_dictionaries({}, optional={
        "last_card_call": st.sampled_from(["required", "auto"]),
        "allow_take_from_meld": st.booleans(),
        "joker_swap_from_set": st.sampled_from(["four_only", "any"]),
        "match_end": st.integers(1, 3).map(lambda n: {"deals": n})}),
    "dummy": st.fixed_dictionaries({"cut_ins": st.just(True)}, optional={
        "stock_exhausted": st.sampled_from(["turn_over", "shuffle", "end_hand"]),
        "match_end": st.integers(1, 2).map(lambda n: {"deals": n})}),
    "wrotham": st.fixed_dictionaries({}, optional={
        "stock_exhausted": st.sampled_from(["turn_over", "shuffle", "end_hand"]),
        "max_stock_rebuilds": st.sampled_from([0, 1, 3]),
        "match_end": st.integers(1, 4).map(lambda n: {"deals": n})}),
    "gin": st.fixed_dictionaries({}, optional={
        "knock_card": st.sampled_from([10, 5, 0]),
        "oklahoma": st.booleans(),
        "big_gin_bonus": st.sampled_from([0, 31]),
        "discard_taken_card": st.booleans(),
        "match_end": st.integers(1, 3).map(lambda n: {"deals": n})}),
}
MAX_PLAYERS = {"basic": 4, "rummy51": 5, "lebanese14": 5, "dummy": 4, "wrotham": 4,
               "gin": 2}


def probes(state: GameState, seat: int, rng: Random) -> list[Move]:
    """Moves of every type, usually illegal."""
    hand = state.hands[seat]
    out: list[Move] = [Draw("stock"), Draw("discard"), CutIn(), Discard(rng.choice(hand)),
                       Discard(rng.choice(hand), announce=True)]
    if len(hand) >= 3:
        out.append(move_from_dict({"type": "meld",
                                   "melds": [{"cards": rng.sample(hand, 3)}]}))
    if state.melds:
        meld = rng.choice(state.melds)
        out.append(move_from_dict({"type": "lay_off", "meld_id": meld.id,
                                   "cards": [rng.choice(hand)]}))
        out.append(move_from_dict({"type": "swap_joker", "meld_id": meld.id,
                                   "card": rng.choice(hand)}))
        if len(hand) >= 2:
            out.append(move_from_dict({"type": "take_from_meld",
                                       "take": [{"meld_id": meld.id,
                                                 "card": rng.choice(meld.cards)}],
                                       "melds": [{"cards": [*rng.sample(hand, 2),
                                                            rng.choice(meld.cards)]}]}))
    if state.variant == "gin":  # GIN-FIRST's pass; a knock and a lay-out of random cards
        melds = (tuple(Piece(c) for c in rng.sample(hand, 3)),) if len(hand) >= 4 else ()
        out += [Pass(), Knock(rng.choice(hand), melds), LayOut(melds), LayOut()]
    return out


def moves_of(state: GameState, seat: int, rng: Random) -> list[dict[str, Any]]:
    listed = legal_moves(state, seat).as_dict()
    by_type: dict[str, list[dict[str, Any]]] = {}
    for wire in listed["moves"]:
        by_type.setdefault(wire["type"], []).append(wire)
    moves = [m for same in by_type.values() for m in rng.sample(same, min(3, len(same)))]
    if listed["compound"] and listed["compound"].get("example"):
        moves.append(listed["compound"]["example"])
    return moves + [move_to_dict(m) for m in probes(state, seat, rng)]


def dry_answer(state: GameState, seat: int, wire: dict[str, Any]) -> dict[str, Any] | None:
    """What the referee's dry run answers (None for a refusal)."""
    try:
        after, events = apply(state, seat, move_from_dict(wire))
    except Violation:
        return None
    return dry_run_answer(state, after, events, "g", 7, seat)


MATCHES = 3
"""Matches dealt at most until dry runs of both a draw and a discard were checked: a Wrotham
match of one deal ended in its first two moves, a seat going out at once (seed 25407)."""


@pytest.mark.parametrize("variant", list(PLAYERS))
@settings(max_examples=6, deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                                HealthCheck.data_too_large])
@given(data=st.data(), seed=st.integers(0, 2**32 - 1))
def test_no_dry_run_shows_the_mover_a_card_it_could_not_see(
        variant: str, data: st.DataObject, seed: int) -> None:
    rng = Random(seed)
    players = data.draw(st.integers(2, MAX_PLAYERS[variant]), label="players")
    knobs = data.draw(KNOBS[variant], label="knobs")
    kinds: Counter[str] = Counter()
    for _match in range(MATCHES):  # a match of one deal may end before anyone draws
        state, _ = new_game(variant, [f"p{i}" for i in range(players)], knobs, None, None,
                            rng)
        for _step in range(120):
            if state.status != "playing":
                break
            movers = [state.turn] + [s for s in range(players) if s != state.turn
                                     and state.rules.get("cut_ins")]
            for seat in movers:
                for wire in moves_of(state, seat, rng):
                    answer = dry_answer(state, seat, wire)
                    if answer is not None:
                        kinds[wire["type"]] += 1
                        check_dry_run(state, seat, answer, wire)
            if variant == "gin":
                state, _ = apply(state, state.turn, gin_move(state, rng), rng)
            else:
                state, _ = play(state, rng, max_moves=1)
        if kinds["draw"] and kinds["discard"]:
            break
    assert kinds["draw"] and kinds["discard"], kinds
