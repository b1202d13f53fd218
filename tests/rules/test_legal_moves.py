"""Legal moves for bots (``GET /v1/games/{id}/legal-moves``) and dry runs (API.md).

Engine level (Hypothesis): in random reachable states of ``basic``, ``rummy51`` and
``lebanese14`` (and ``dummy``, ``wrotham`` once the service offers them), with random
knobs and a random number of moves played by the test bot, every move ``legal_moves``
lists is accepted by the engine, and a sample of moves it does not list is refused; the R51
opening example (``compound``) is accepted; out of turn nothing is listed but a cut-in.

Over HTTP: the endpoint's auth, ``limit``/``truncated``, and that each listed move passes
``POST …/moves?dry_run=true`` without storing anything. A dry run answers what the real
move answers right after it, as the seat could know it before the move
(``hidden_cards.expected_dry_run``; arranged deals make every drawn card known).
"""

from __future__ import annotations

import itertools
import json
from random import Random
from typing import Any

import pytest
from flask.testing import FlaskClient
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from werkzeug.test import TestResponse

from bench.engine import joker_state
from service.rules import (
    GameState,
    Violation,
    apply,
    move_from_dict,
    move_to_dict,
    new_game,
)
from service.rules.cards import standard_deck
from service.rules.legal import legal_moves
from service.rules.melds import MeldError, Piece, extend_meld, may_lay_off
from service.rules.moves import (
    MATCH_MOVES,
    Abort,
    ClaimTimeout,
    CutIn,
    Discard,
    Draw,
    LayOff,
    MeldMove,
    Move,
    Resign,
    SwapJoker,
)
from service.rules.search import candidate_melds
from service.rules.state import TableMeld
from service.rules.variants import VARIANTS
from tests.support.basic_game import A_HANDS, B_HANDS, C_HANDS, CreatedGame
from tests.support.bot import play
from tests.support.deals import arranged, auth
from tests.support.hidden_cards import expected_dry_run
from tests.support.problems import RULE_IDS, assert_problem
from tests.support.shapes import SHAPES

DECK = standard_deck()
ANSWER_KEYS = {"game", "events", "version", "status", "turn"}
"""A move answer's members: the view, the events, and the game's version, status and turn."""
R51_DECK = standard_deck(2, 4)

# ---------------------------------------------------------------------------------------
# Engine level: random reachable states

BASIC_KNOBS = st.fixed_dictionaries({}, optional={
    "ace": st.sampled_from(["low", "high_or_low", "around"]),
    "melds_per_turn": st.sampled_from(["unlimited", 1]),
    "lay_off_requires_own_meld": st.booleans(),
    "must_discard_to_go_out": st.booleans(),
    "stock_exhausted": st.sampled_from(["turn_over", "shuffle", "end_hand"]),
})
R51_KNOBS = st.fixed_dictionaries({}, optional={
    "ace": st.sampled_from(["low", "high_or_low"]),
    "opening_points": st.sampled_from([30, 51, 71]),
    "opening_requires_clean_run": st.booleans(),
    "opening_counts_lay_offs": st.booleans(),
    "max_wilds_per_meld": st.sampled_from([1, 2, None]),
    "joker_swap_from_set": st.sampled_from(["four_only", "never", "any"]),
    "last_card_call": st.sampled_from(["required", "auto"]),
})
DUMMY_KNOBS = st.fixed_dictionaries({}, optional={
    "run_same_suit": st.booleans(),
    "playable_discard": st.sampled_from(["forbid", "allow"]),
    "cut_ins": st.booleans(),
})
WROTHAM_KNOBS = st.fixed_dictionaries({}, optional={
    "ace": st.sampled_from(["low", "high_or_low"]),
    "melds_per_turn": st.sampled_from(["unlimited", 1]),
    "must_discard_to_go_out": st.booleans(),
})
# DUMMY and WROTHAM are covered once the service offers them (GET /v1/variants)
GAMES = st.one_of(
    st.tuples(st.just("basic"), st.integers(2, 4), BASIC_KNOBS),
    st.tuples(st.sampled_from(["rummy51", "lebanese14"]), st.integers(2, 4), R51_KNOBS),
    *([st.tuples(st.just("dummy"), st.integers(2, 4), DUMMY_KNOBS)]
      if "dummy" in VARIANTS else []),
    *([st.tuples(st.just("wrotham"), st.integers(2, 4), WROTHAM_KNOBS)]
      if "wrotham" in VARIANTS else []),
)


def accepted(state: GameState, seat: int, move: Move, seen: set[str] | None = None) -> bool:
    """Whether the engine accepts ``move``; the input state is never changed. The rule id of
    a refusal is added to ``seen``."""
    before = state.to_dict()
    try:
        apply(state, seat, move, Random(0))
    except Violation as violation:
        assert violation.code and violation.rule and violation.detail
        if seen is not None:
            seen.update(r.rule for r in violation.reasons)
        ok = False
    else:
        ok = True
    assert state.to_dict() == before, f"{move} changed its input state"
    return ok


def wire(move: dict[str, Any]) -> str:
    return json.dumps(move, sort_keys=True)


def meld_key(cards: list[Any]) -> tuple[str, ...]:
    return tuple(sorted(c if isinstance(c, str) else c["card"] for c in cards))


def check_state(state: GameState, rng: Random, seen: set[str] | None = None) -> None:
    """legal_moves agrees with the engine in ``state`` (for the seat to move and others);
    the rule ids of the refusals are added to ``seen``."""
    seat = state.turn
    answer = legal_moves(state, seat)
    assert answer.seat == seat
    assert answer.your_turn is True
    assert answer.truncated is False
    listed = {wire(m) for m in answer.moves}
    assert len(listed) == len(answer.moves), "a move is listed twice"
    # every listed move is accepted (and leaves the state unchanged)
    for m in answer.moves:
        assert accepted(state, seat, move_from_dict(m)), f"listed but refused: {m}"
    # a sample of unlisted moves is refused
    hand = state.hands[seat]
    probes: list[Move] = [Draw(source) for source in ("stock", "discard")]
    probes += [Resign(), Abort(), ClaimTimeout()]  # C-RESIGN, C-ABORT, C-CLOCK
    not_held = sorted(set(state.all_cards()) - set(hand))
    probes += [Discard(c) for c in rng.sample(not_held, min(6, len(not_held)))]
    for probe in probes:
        m = move_to_dict(probe)
        if wire(m) not in listed:
            assert not accepted(state, seat, probe, seen), f"legal but not listed: {m}"
    single_melds = {meld_key(m["melds"][0]["cards"]) for m in answer.moves
                    if m["type"] == "meld" and len(m["melds"]) == 1 and not m.get("lay_offs")}
    combos = list(itertools.combinations(sorted(hand), 3))
    for combo in rng.sample(combos, min(40, len(combos))):
        if tuple(sorted(combo)) in single_melds:
            continue
        move = MeldMove((tuple(Piece(c) for c in combo),))
        assert not accepted(state, seat, move, seen), f"legal but not listed: meld {combo}"
    lay_offs = {(m["meld_id"], m["cards"][0], m.get("end")) for m in answer.moves
                if m["type"] == "lay_off" and len(m["cards"]) == 1}
    for meld in state.melds:
        ends: tuple[str | None, ...] = (None, "low", "high") if meld.kind == "run" else (None,)
        for card in sorted(set(hand)):
            for end in ends:
                if (meld.id, card, end) in lay_offs:
                    continue
                if end is None and meld.kind == "run" and (
                        (meld.id, card, "low") in lay_offs or (meld.id, card, "high") in lay_offs):
                    continue  # the same lay-off without naming the end
                move = LayOff(meld.id, (Piece(card),), end)
                assert not accepted(state, seat, move, seen), (
                    f"legal but not listed: lay off {card} on {meld.id} {meld.cards} ({end})")
        if "JK" in meld.cards:
            for card in sorted(set(hand) - {"JK"}):
                m = {"type": "swap_joker", "meld_id": meld.id, "card": card}
                if wire(m) not in listed:
                    assert not accepted(state, seat, SwapJoker(meld.id, card), seen), (
                        f"legal but not listed: {m}")
    # the compound action (R51-OPEN; a contract, an all-at-once finish): its example is
    # accepted
    compound = answer.compound
    if compound is not None:
        if compound["kind"] == "opening":
            assert compound["rule"] == "R51-OPEN"
            assert state.variant in ("rummy51", "lebanese14")
            assert not state.melded[seat]
        if compound["exists"]:
            example = compound["example"]
            assert example["type"] == "meld"
            assert accepted(state, seat, move_from_dict(example)), f"refused: {example}"
        else:
            assert compound["example"] is None
    if state.variant == "basic" or state.phase != "play" or state.discard_only or (
            state.variant in ("rummy51", "lebanese14") and state.melded[seat]):
        assert compound is None
    # out of turn: nothing, unless a cut-in is allowed (DUMMY-CUTIN)
    for other in range(state.players_count):
        if other == seat:
            continue
        theirs = legal_moves(state, other)
        assert theirs.your_turn is False
        assert theirs.compound is None
        ending = [move_to_dict(m) for m in (Resign(), Abort(), ClaimTimeout())
                  if accepted(state, other, m)]
        assert {"type": "resign"} in ending  # any seat in the match may resign (C-RESIGN)
        if accepted(state, other, CutIn()):
            assert theirs.moves == [{"type": "cut_in"}, *ending]
        else:
            assert theirs.moves == ending
    # a limit cuts the list
    if len(answer.moves) >= 2:
        cut = legal_moves(state, seat, limit=1)
        assert cut.truncated is True
        assert len(cut.moves) == 1
        assert wire(cut.moves[0]) in listed


def states_on_the_way(state: GameState, rng: Random, moves: int) -> list[GameState]:
    """``state`` and every state the bot reaches from it in at most ``moves`` moves."""
    visited: list[GameState] = []

    def record(before: GameState, *_: Any) -> None:
        visited.append(before)

    final, _ = play(state, rng, max_moves=moves, on_move=record)
    return [*visited, final]


@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(game=GAMES, moves=st.integers(0, 150), seed=st.integers(0, 2**32 - 1))
def test_listed_moves_are_exactly_the_legal_ones(game: tuple[str, int, dict[str, Any]],
                                                 moves: int, seed: int) -> None:
    variant, players, knobs = game
    rng = Random(seed)
    state, _ = new_game(variant, [f"p{i}" for i in range(players)], knobs, None, None, rng)
    visited = states_on_the_way(state, rng, moves)
    state = visited[-1]
    playing = [s for s in visited if s.status == "playing"]
    # the reached state, and a few states on the way (both phases are visited)
    for checked in [*rng.sample(playing, min(4, len(playing))), *playing[-1:]]:
        check_state(checked, rng)
    if state.status != "playing":
        for seat in range(players):
            assert legal_moves(state, seat).moves == []


@pytest.mark.parametrize("variant", [
    "basic", "rummy51", "lebanese14",
    *(v for v in ("dummy", "wrotham") if v in VARIANTS)])
def test_refusals_cite_rules_md_ids(variant: str) -> None:
    """Every refusal met while probing unlisted moves cites a rule id of RULES.md (L14 is
    R51 except its own L14-* rules: e.g. the dealer's first action is R51-FIRST)."""
    seen: set[str] = set()
    for seed in range(3):
        rng = Random(seed)
        knobs = {"must_discard_to_go_out": True} if variant == "basic" else {}
        state, _ = new_game(variant, ["a", "b", "c"], knobs, None, None, rng)
        visited = states_on_the_way(state, rng, 60)
        for checked in visited[::6]:
            check_state(checked, rng, seen)
    assert seen, "no refusal met"
    assert seen <= RULE_IDS, sorted(seen - RULE_IDS)


def r51_opening_state() -> GameState:
    """R51 after the dealer's first discard and seat 1's stock draw: seat 1 can open."""
    hand1 = ["9H", "TH", "JH", "QH", "KH", "KS", "KD", "KC", "2S", "3S", "4S", "5S", "7C"]
    hand0 = ["AS", "3D", "5H", "6C", "7D", "8S", "9C", "JD", "QC", "2H", "4C", "6D", "8C", "TC"]
    rest = list(R51_DECK)
    for c in hand0 + hand1 + ["8D"]:
        rest.remove(c)
    deal = {"hands": [hand0, hand1], "discard": [], "stock": ["8D", *rest]}
    state, _ = new_game("rummy51", ["a", "b"], {}, 0, [deal])
    state, _ = apply(state, 0, Discard("TC"))
    state, _ = apply(state, 1, Draw("stock"))
    return state


def test_the_r51_opening_is_offered_as_a_compound_example() -> None:
    state = r51_opening_state()
    answer = legal_moves(state, 1)
    assert answer.your_turn is True
    # before opening no single meld is worth 51 with a clean run: only discards are listed
    assert {"type": "resign"} in answer.moves  # always listed (C-RESIGN)
    turn = [m for m in answer.moves if m["type"] not in MATCH_MOVES]
    assert {m["type"] for m in turn} == {"discard"}
    assert {m["card"] for m in turn} == set(state.hands[1])
    compound = answer.compound
    assert compound is not None
    assert compound["kind"] == "opening" and compound["rule"] == "R51-OPEN"
    assert compound["exists"] is True
    example = compound["example"]
    new, _ = apply(state, 1, move_from_dict(example))
    assert new.melded[1] is True
    opened = sum(m.points for m in new.melds)
    assert opened >= 51
    assert any(m.kind == "run" and "JK" not in m.cards for m in new.melds)
    assert len(new.hands[1]) >= 1  # R51-OUT: a card is kept for the discard
    check_state(state, Random(1))


def test_the_dealers_first_action_lists_only_discards() -> None:
    """R51-FIRST: the dealer's first action is a discard (no draw, no meld)."""
    state, _ = new_game("rummy51", ["a", "b", "c"], {}, 2, None, Random(7))
    answer = legal_moves(state, 2)
    assert answer.your_turn is True
    assert answer.compound is None
    assert {"type": "resign"} in answer.moves  # always listed (C-RESIGN)
    turn = [m for m in answer.moves if m["type"] not in MATCH_MOVES]
    assert sorted(m["card"] for m in turn) == sorted(set(state.hands[2]))
    assert {m["type"] for m in turn} == {"discard"}
    check_state(state, Random(2))


def test_a_joker_run_with_the_natural_in_hand_is_listed() -> None:
    """A 3-card meld putting the joker in a gap whose natural the hand also holds is legal
    (C-MELD: any assignment that makes it valid), so it must be listed too."""
    hand1 = ["5D", "6D", "7D", "JK", "9H", "TH", "JH", "KS", "KD", "2S", "3S", "4C", "7C"]
    hand0 = ["AS", "3D", "5H", "6C", "8S", "9C", "JD", "QC", "2H", "8C", "TC", "AH", "4D", "6S"]
    rest = list(R51_DECK)
    for c in hand0 + hand1 + ["8D"]:
        rest.remove(c)
    deal = {"hands": [hand0, hand1], "discard": [], "stock": ["8D", *rest]}
    rules = {"opening_points": 0, "opening_requires_clean_run": False}
    state, _ = new_game("rummy51", ["a", "b"], rules, 0, [deal])
    state, _ = apply(state, 0, Discard("TC"))
    state, _ = apply(state, 1, Draw("stock"))
    move = MeldMove(((Piece("5D"), Piece("JK"), Piece("7D")),))
    assert accepted(state, 1, move)
    answer = legal_moves(state, 1)
    keys = {meld_key(m["melds"][0]["cards"]) for m in answer.moves if m["type"] == "meld"}
    assert ("5D", "6D", "7D") in keys
    assert ("5D", "7D", "JK") in keys, sorted(keys)


def test_joker_hands_on_a_full_table_list_exactly_the_legal_moves() -> None:
    """The benchmark's hands (Rummy 51, 14 cards holding the 4 jokers, before and after
    the opening, melds of three seats on the table), some with a joker already in one of
    the seat's own runs: the lay-offs left out without asking the engine (a joker past a
    meld's wild limit or on an opponent's run, a card of another suit than the run's or of
    a suit the set holds, a run with no room at that end) are each refused by it."""
    rng = Random(8)
    seen: set[str] = set()
    for i in range(16):
        state = joker_state(rng, opened=i % 2 == 1)
        if i % 4 == 3:  # a joker of the hand stands in the seat's own first run
            run = next(m for m in state.melds if m.owner == 1 and m.kind == "run")
            natural = run.cards[1]
            run.cards[1] = "JK"
            state.hands[1].remove("JK")
            state.stock.append(natural)
        check_state(state, rng, seen)
    assert {"R51-JOKER-OPP", "R51-WILDS", "C-LAYOFF"} <= seen, seen


# ---------------------------------------------------------------------------------------
# HTTP

# Deal A of tests/support/basic_game.py (basic, two players, dealer 1: seat 0 plays first;
# upcard 5C; stock 6H, 9D, …)


class Game(CreatedGame):
    def __init__(self, client: FlaskClient, variant: str = "basic", players: int = 2,
                 **fields: Any) -> None:
        body = {"variant": variant, "players": ["Ana", "Bo", "Cy", "Di"][:players], **fields}
        super().__init__(client, body)

    def legal(self, seat: int, query: str = "") -> TestResponse:
        return self.client.get(f"{self.path}/legal-moves{query}", headers=auth(self.tokens[seat]))

    def move(self, seat: int, body: Any, query: str = "") -> TestResponse:
        return self.client.post(f"{self.path}/moves{query}", json=body,
                                headers=auth(self.tokens[seat]))

    def ok(self, seat: int, body: Any) -> dict[str, Any]:
        resp = self.move(seat, body)
        assert resp.status_code == 200, resp.get_data(as_text=True)
        answer: dict[str, Any] = resp.get_json()
        return answer

    def snapshot(self) -> tuple[str, Any, list[Any]]:
        resp = self.client.get(self.path)
        seats = [self.client.get(f"{self.path}/me", headers=auth(t)).get_json()
                 for t in self.tokens]
        return resp.headers["ETag"], resp.get_json(), seats


def normalized(moves: list[dict[str, Any]]) -> list[Any]:
    """Moves comparable regardless of the order of cards within a meld."""
    out: list[Any] = []
    for m in moves:
        if m["type"] == "meld":
            out.append(("meld", sorted(meld_key(x["cards"]) for x in m["melds"])))
        else:
            out.append(wire(m))
    return sorted(out, key=repr)


def test_legal_moves_over_http(client: FlaskClient) -> None:
    game = Game(client, dealer=1, deals=[arranged(A_HANDS, "5C", ["6H", "9D"])])
    resp = game.legal(0)
    assert resp.status_code == 200, resp.get_data(as_text=True)
    assert resp.mimetype == "application/json"
    assert resp.headers["Cache-Control"] == "no-store"
    body = resp.get_json()
    assert body == {"seat": 0, "your_turn": True, "version": 0, "truncated": False,
                    "compound": None,
                    "moves": [{"type": "draw", "source": "stock"},
                              {"type": "draw", "source": "discard"},
                              {"type": "resign"}, {"type": "abort"}]}
    other = game.legal(1).get_json()
    assert other == {"seat": 1, "your_turn": False, "version": 0, "truncated": False,
                     "compound": None, "moves": [{"type": "resign"}, {"type": "abort"}]}

    game.ok(0, {"type": "draw", "source": "stock"})  # 6H
    body = game.legal(0).get_json()
    assert body["version"] == 1
    hand = [*A_HANDS[0], "6H"]
    expected = [
        {"type": "meld", "melds": [{"cards": cards}]}
        for cards in (["6H", "7H", "8H"], ["7H", "8H", "9H"], ["6H", "7H", "8H", "9H"],
                      ["QS", "QD", "QC"], ["2C", "3C", "4C"])
    ] + [{"type": "discard", "card": c} for c in hand] + [{"type": "resign"}]
    assert normalized(body["moves"]) == normalized(expected)
    types = [m["type"] for m in body["moves"]]
    assert types == sorted(types, key=["draw", "meld", "lay_off", "discard", "resign"].index)

    game.ok(0, {"type": "meld", "melds": [{"cards": ["7H", "8H", "9H"]}]})
    body = game.legal(0).get_json()
    lay_offs = [m for m in body["moves"] if m["type"] == "lay_off"]
    assert lay_offs == [{"type": "lay_off", "meld_id": "m1", "cards": ["6H"], "end": "low"}]


def test_each_listed_move_passes_a_dry_run_and_nothing_is_stored(client: FlaskClient) -> None:
    game = Game(client, dealer=1, deals=[arranged(A_HANDS, "5C", ["6H", "9D"])])
    game.ok(0, {"type": "draw", "source": "stock"})
    game.ok(0, {"type": "meld", "melds": [{"cards": ["QS", "QD", "QC"]}]})
    before = game.snapshot()
    moves = game.legal(0).get_json()["moves"]
    assert len(moves) >= 10
    real_shape = None
    for move in moves:
        resp = game.move(0, move, "?dry_run=true")
        assert resp.status_code == 200, (move, resp.get_data(as_text=True))
        assert resp.mimetype == "application/json"
        assert resp.headers["Cache-Control"] == "no-store"
        assert resp.headers["ETag"] == '"3"'
        answer = resp.get_json()
        assert set(answer) == ANSWER_KEYS
        assert answer["game"]["version"] == answer["version"] == 3
        assert answer["game"]["seat"] == 0
        assert answer["events"] and answer["events"][0]["type"] == move["type"]
        real_shape = set(answer["game"])
    assert game.snapshot() == before
    # the real move answers the same shape
    real = game.ok(0, moves[-1])
    assert set(real) == ANSWER_KEYS
    assert set(real["game"]) == real_shape


def test_legal_moves_auth_and_unknown_game(client: FlaskClient) -> None:
    game, other = Game(client), Game(client)
    path = f"{game.path}/legal-moves"
    assert_problem(client.get(path), 401)
    assert_problem(client.get(path, headers=auth("not-a-token")), 401)
    secret = game.tokens[0].rsplit(".", 1)[1]
    assert_problem(client.get(path, headers=auth(f"{game.id}.1.{secret}")), 401)
    assert_problem(client.get(path, headers=auth(other.tokens[0])), 403)
    assert_problem(client.get("/v1/games/no-such-game/legal-moves",
                              headers=auth(game.tokens[0])), 404)


def test_legal_moves_limit_truncates(client: FlaskClient) -> None:
    game = Game(client, dealer=1, deals=[arranged(A_HANDS, "5C", ["6H", "9D"])])
    game.ok(0, {"type": "draw", "source": "stock"})
    full = game.legal(0).get_json()
    assert len(full["moves"]) == 17 and full["truncated"] is False  # resign the 17th
    resp = game.legal(0, "?limit=3")
    assert resp.status_code == 200, resp.get_data(as_text=True)
    cut = resp.get_json()
    assert cut["truncated"] is True
    assert len(cut["moves"]) == 3
    assert all(m in full["moves"] for m in cut["moves"])
    assert game.legal(0, "?limit=500").get_json() == full


def test_a_limit_that_cuts_nothing_is_not_truncated(client: FlaskClient) -> None:
    """API.md: ``truncated`` says the list was cut; 17 moves with limit=17 are all there."""
    game = Game(client, dealer=1, deals=[arranged(A_HANDS, "5C", ["6H", "9D"])])
    game.ok(0, {"type": "draw", "source": "stock"})
    full = game.legal(0).get_json()
    assert len(full["moves"]) == 17
    resp = game.legal(0, "?limit=17")
    assert resp.status_code == 200, resp.get_data(as_text=True)
    exact = resp.get_json()
    assert exact["truncated"] is False
    assert exact["moves"] == full["moves"]


@pytest.mark.parametrize("query", ["?limit=0", "?limit=abc", "?limit=-1", "?limit=5001"])
def test_legal_moves_bad_limit_is_400(client: FlaskClient, query: str) -> None:
    game = Game(client)
    assert_problem(game.legal(0, query), 400, fields={"limit"})


# ---------------------------------------------------------------------------------------
# Dry runs answer what the real move answers, as the seat could know it before the move

# Deal B: seat 0 goes out at once after taking the upcard 5C; deal C: hand 2 (dealer 0),
# seat 1 plays first, draws 8D from the stock, melds ten cards and discards 8D to go out
# (deals B and C of tests/support/basic_game.py).


def dry_then_real(game: Game, seat: int, move: dict[str, Any]) -> dict[str, Any]:
    before = game.snapshot()
    dry = game.move(seat, move, "?dry_run=true")
    assert dry.status_code == 200, (move, dry.get_data(as_text=True))
    assert game.snapshot() == before, f"the dry run of {move} stored something"
    real = game.move(seat, move)
    assert real.status_code == 200, (move, real.get_data(as_text=True))
    answer: dict[str, Any] = real.get_json()
    version = answer["game"]["version"]
    public = game.client.get(f"{game.path}/events?after={version - 1}").get_json()
    expected = expected_dry_run(answer, public["entries"][0]["events"], before[2][seat], seat)
    assert dry.get_json() == expected, move
    assert dry.headers["ETag"] == f'"{expected["game"]["version"]}"'
    return answer


def test_dry_runs_answer_the_real_answer_basic(client: FlaskClient) -> None:
    game = Game(client, dealer=1, deals=[arranged(A_HANDS, "5C", ["6H", "9D"])])
    for seat, move in [
        (0, {"type": "draw", "source": "stock"}),
        (0, {"type": "meld", "melds": [{"cards": ["9H", "7H", "8H"]},
                                       {"cards": ["QC", "QS", "QD"]}]}),
        (0, {"type": "lay_off", "meld_id": "m1", "cards": ["6H"], "end": "low"}),
        (0, {"type": "discard", "card": "KD"}),
        (1, {"type": "draw", "source": "discard"}),
        (1, {"type": "lay_off", "meld_id": "m1", "cards": ["TH"]}),
        (1, {"type": "discard", "card": "8C"}),
    ]:
        answer = dry_then_real(game, seat, move)
        assert answer["game"]["seat"] == seat
    assert game.snapshot()[1]["version"] == 7


def test_dry_runs_answer_the_real_answer_through_hand_and_game_end(
        client: FlaskClient) -> None:
    game = Game(client, dealer=1, rules={"match_end": {"deals": 2}},
                deals=[arranged(B_HANDS, "5C", []), arranged(C_HANDS, "5C", ["8D"])])
    dry_then_real(game, 0, {"type": "draw", "source": "discard"})
    answer = dry_then_real(game, 0, {"type": "meld", "melds": [
        {"cards": ["7H", "8H", "9H", "TH"]}, {"cards": ["QS", "QD", "QC"]},
        {"cards": ["2C", "3C", "4C", "5C"]}]})
    assert [e["type"] for e in answer["events"]] == ["meld", "hand_end", "dealt"]
    assert sorted(answer["events"][2]["hand"]) == sorted(C_HANDS[0])
    answer = dry_then_real(game, 1, {"type": "draw", "source": "stock"})
    assert answer["events"][0]["card"] == "8D"
    dry_then_real(game, 1, {"type": "meld", "melds": [
        {"cards": ["7H", "8H", "9H", "TH"]}, {"cards": ["QS", "QD", "QC"]},
        {"cards": ["2C", "3C", "4C"]}]})
    answer = dry_then_real(game, 1, {"type": "discard", "card": "8D"})
    assert [e["type"] for e in answer["events"]] == ["discard", "hand_end", "game_end"]
    assert answer["game"]["status"] == "finished"


R51_HAND1 = ["9H", "TH", "JH", "QH", "KH", "KS", "KD", "KC", "2S", "3S", "4S", "5S", "7C"]
R51_HAND0 = ["AS", "3D", "5H", "6C", "7D", "8S", "9C", "JD", "QC", "2H", "4C", "6D", "8C", "TC"]


def test_dry_runs_answer_the_real_answer_r51_with_penalty_cards(client: FlaskClient) -> None:
    deal = arranged([R51_HAND0, R51_HAND1], None, ["8D", "4H", "5C"], deck=R51_DECK)
    game = Game(client, variant="rummy51", dealer=0, deals=[deal])
    dry_then_real(game, 0, {"type": "discard", "card": "TC"})
    dry_then_real(game, 1, {"type": "draw", "source": "stock"})
    dry_then_real(game, 1, {"type": "meld", "melds": [
        {"cards": ["9H", "TH", "JH", "QH", "KH"]}, {"cards": ["KS", "KD", "KC"]},
        {"cards": ["2S", "3S", "4S", "5S"]}]})
    answer = dry_then_real(game, 1, {"type": "discard", "card": "7C"})  # not announced
    penalty = [e for e in answer["events"] if e["type"] == "penalty"]
    assert penalty and penalty[0]["cards"] == ["4H", "5C"]
    assert sorted(answer["game"]["hand"]) == sorted(["8D", "4H", "5C"])


TWO_DECKS = sorted(set(standard_deck(2, 4)))


@settings(max_examples=300, deadline=None)
@given(name=st.sampled_from(sorted(SHAPES)),
       hand=st.lists(st.sampled_from(TWO_DECKS), min_size=8, max_size=14),
       data=st.data())
def test_may_lay_off_never_rules_out_a_card_that_fits(name: str, hand: list[str],
                                                       data: st.DataObject) -> None:
    """``may_lay_off`` skips the reading of a card on a table meld (the listing's lay-offs,
    Dummy's playable-discard check) or on a reading of one (the benchmark's player):
    whenever ``extend_meld`` lays the card off, at an end asked for or at either, it says
    it may, of either."""
    shape = SHAPES[name]
    found = candidate_melds(hand, shape)
    if not found:
        return
    meld = data.draw(st.sampled_from(found))
    target = TableMeld("m1", 0, meld.kind, list(meld.cards), list(meld.idents), meld.start,
                       meld.points)
    for card in TWO_DECKS:
        for end in (None, "low", "high") if meld.kind == "run" else (None,):
            try:
                extend_meld(meld, (Piece(card),), shape, end)
            except MeldError:
                continue
            assert may_lay_off(target, card, end, shape), (meld, card, end)
            assert may_lay_off(meld, card, end, shape), (meld, card, end)
