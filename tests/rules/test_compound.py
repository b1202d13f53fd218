"""Compound meld actions in legal-moves: a Dummy contract and a Wrotham all-at-once finish
(an example the engine accepts, whenever the answer says one exists)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from random import Random
from typing import Any

import pytest

from service.rules import GameState, Violation, apply, new_game, planning
from service.rules.cards import JOKER, remove, standard_deck
from service.rules.compound import (
    Need,
    _blind,
    _contract_melds,
    find_all_but_one,
    find_contract,
)
from service.rules.engine import context, meld_shape, shape_of
from service.rules.legal import compound_action
from service.rules.melds import Meld, MeldError, MeldShape, Piece, check_meld, read_as
from service.rules.moves import Discard, Draw, move_from_dict
from service.rules.ruleset import Rules, default_rules
from service.rules.search import candidate_melds, meld_combos
from service.rules.variants import find_variant
from service.rules.variants.base import Turn
from service.rules.variants.dummy import CONTRACTS, DummyRules, dummy_state
from tests.support.bot import choose_move
from tests.support.dummy_game import game


@pytest.mark.parametrize(("variant", "kind", "rule", "rules"), [
    ("dummy", "contract", "DUMMY-CONTRACTS", {}),
    ("wrotham", "all_at_once", "WROTHAM-LATE", {}),
])
def test_compound_examples_are_accepted(variant: str, kind: str, rule: str,
                                        rules: dict[str, object]) -> None:
    found = 0
    for seed in range(2):
        rng = Random(seed)
        state, _ = new_game(variant, ["a", "b", "c"], rules, rng=rng)
        for _ in range(900):
            if state.status != "playing":
                break
            seat = state.turn
            compound = compound_action(state, seat)
            if compound is not None:
                assert (compound["kind"], compound["rule"]) == (kind, rule)
                if compound["exists"]:
                    found += 1
                    example = move_from_dict(compound["example"])
                    apply(state, seat, example, Random(0))  # accepted: no Violation
            try:
                state, _ = apply(state, seat, choose_move(state, seat, rng), rng)
            except Violation:
                continue
    assert found > 0


# ---------------------------------------------------------------------------------------
# A Dummy contract is found whenever the hand holds one


def _holds_a_contract(state: GameState, seat: int) -> bool:
    """Whether the seat's hand holds its contract, leaving a card: every meld of the hand
    (the meld search is checked against trying every multiset, in test_melds), tried in
    every order without a bound."""
    shape = shape_of(state)
    needs = DummyRules.current(state, seat).needs
    melds = candidate_melds(state.hands[seat], shape)

    def holds(i: int, left: list[str]) -> bool:
        if i == len(needs):
            return bool(left)
        for meld in melds:
            if len(meld.cards) < needs[i].size or not Counter(meld.cards) <= Counter(left):
                continue
            if read_as([Piece(c) for c in meld.cards], shape, needs[i].kind) is not None \
                    and holds(i + 1, remove(left, meld.cards)):
                return True
        return False

    return holds(0, list(state.hands[seat]))


def _on_contract(hand: str, number: int, drawn: str, rules: dict[str, Any] | None = None
                 ) -> GameState:
    state = game([hand.split()], stock_top=[drawn], rules=rules)
    dummy_state(state).contract[0] = number
    state, _ = apply(state, 0, Draw("stock"), Random(0))
    return state


@pytest.mark.parametrize(("hand", "number", "drawn"), [
    pytest.param("5H 6S 7H 8C 5D 6C 7S 8D", 4, "KD", id="two runs of mixed suits"),
    pytest.param("2D 2H 2S 4D 5D 5S 6C 7C 7D 9C AS KC QH", 6, "TD",
                 id="three wilds, each wanted in its place"),
])
def test_a_contract_the_search_used_to_miss_is_offered(hand: str, number: int,
                                                       drawn: str) -> None:
    """DUMMY-CONTRACTS: one card per rank in runs of mixed suits, and a bound reached
    before the melds sparing the wilds were tried, left these contracts unfound."""
    state = _on_contract(hand, number, drawn)
    compound = compound_action(state, 0)
    assert compound is not None and compound["exists"], compound
    after, _ = apply(state, 0, move_from_dict(compound["example"]), Random(0))
    assert after.melded[0]


@pytest.mark.parametrize("run_same_suit", [False, True])
def test_a_contract_is_found_exactly_when_the_hand_holds_one(run_same_suit: bool) -> None:
    """DUMMY-CONTRACTS over random hands and contracts: the compound example exists
    exactly when the hand holds the contract, and is accepted."""
    rng = Random(11)
    holding = 0
    for _ in range(40):
        state, _ = new_game("dummy", ["a", "b", "c"], {"run_same_suit": run_same_suit},
                            rng=Random(rng.random()))
        seat = state.turn
        dummy_state(state).contract[seat] = rng.randint(1, 12)
        state, _ = apply(state, seat, Draw("stock"), Random(0))
        expected = _holds_a_contract(state, seat)
        found = find_contract(state.hands[seat], shape_of(state),
                              DummyRules.current(state, seat).needs)
        assert (found is not None) == expected, (dummy_state(state).contract[seat],
                                                 state.hands[seat])
        if found is not None:
            holding += 1
            apply(state, seat, found, Random(0))  # accepted: no Violation
    assert holding >= 5  # the random hands held contracts often enough to tell


def _every_reading(cards: list[str], shape: MeldShape, needs: Sequence[Need]
                   ) -> dict[Need, list[tuple[Meld, Counter[str]]]]:
    """For each need, what reading every multiset the meld search makes (sets and runs)
    gives: the contract search's melds with nothing left unread."""
    combos = meld_combos(cards, shape, frozenset(n.size for n in needs))
    combos.sort(key=lambda m: (sum(map(shape.is_wild, m)), len(m)))
    out: dict[Need, list[tuple[Meld, Counter[str]]]] = {}
    for need in needs:
        out[need] = []
        for combo in combos:
            if len(combo) != need.size:
                continue
            try:
                meld = check_meld([Piece(c) for c in combo], shape)
            except MeldError:
                continue
            reading = read_as([Piece(c) for c in meld.cards], shape, need.kind, meld)
            if reading is not None:
                out[need].append((reading, Counter(reading.cards)))
    return out


@pytest.mark.parametrize("run_same_suit", [False, True])
def test_the_contract_search_reads_what_reading_every_meld_gives(run_same_suit: bool
                                                                 ) -> None:
    """DUMMY-CONTRACTS: the contract search leaves unread the multisets whose naturals rule
    out the kind a need asks for, and the hand's runs for a contract of sets only; on
    hands with many wilds (jokers and 2s, the most multisets), for every contract, each
    need's melds are still exactly those reading every multiset gives, in the same order
    (so the search, which takes them in that order, finds the same contract)."""
    shape = meld_shape(find_variant("dummy"), Rules.of(
        {**default_rules(find_variant("dummy")), "run_same_suit": run_same_suit}))
    code = _blind(shape)
    twos = sorted({c for c in standard_deck() if c[0] == "2"})
    naturals = [c for c in standard_deck(2) if c[0] != "2"]
    rng = Random(23)
    for _ in range(40):
        hand = [JOKER] * rng.randint(0, 4) + rng.sample(twos, rng.randint(0, 4)) \
            + rng.sample(naturals, rng.randint(4, 10))
        cards = [code(c) for c in hand]
        for wanted in CONTRACTS:
            searched = _contract_melds(cards, shape, wanted.needs)
            for need, expected in _every_reading(cards, shape, wanted.needs).items():
                listed = []
                while (item := searched[need].at(len(listed))) is not None:
                    listed.append(item)
                assert listed == expected, (wanted.number, need, hand)


# ---------------------------------------------------------------------------------------
# A Wrotham all-at-once finish is found whenever the hand holds one


@pytest.mark.parametrize(("hand", "left"), [
    pytest.param("2C 2S 3C 3S 4C 5C AC JK JK TH", "TH", id="65 melds, one card in none"),
    pytest.param("3C 4C 4D 5C 5D 6C JK JK KS", "KS", id="two jokers, two runs"),
    pytest.param("3C 4C 5C 9D 9S 9H KS QD", None, id="two cards in no meld: none"),
    pytest.param("QS", None, id="one card: no meld, none"),
])
def test_all_but_one_is_found_when_the_hand_holds_it(hand: str, left: str | None) -> None:
    """WROTHAM-LATE: melds of every card but one. The cover search tries the card held by
    the fewest melds first and remembers what did not cover; it used to take the smallest
    card first and ran out of its bound on hands with many melds (the first)."""
    state, _ = new_game("wrotham", ["a", "b"], rng=Random(1))
    seat = state.turn
    state.hands[seat], state.taken = hand.split(), None
    move = find_all_but_one(state.hands[seat], shape_of(state), None)
    if left is None:
        assert move is None
        return
    assert move is not None
    used = Counter(p.card for meld in move.melds for p in meld)
    assert Counter(state.hands[seat]) - used == Counter([left])
    assert not used - Counter(state.hands[seat])
    for meld in move.melds:
        check_meld(list(meld), shape_of(state))  # a valid meld: no MeldError


# ---------------------------------------------------------------------------------------
# A Rummy 51 / Lebanese 14 opening is offered whenever the hand holds one


def _holds_an_opening(state: GameState, seat: int) -> bool:
    """Whether the hand holds an opening (R51-OPEN: melds worth the opening points, a clean
    run among them when the knob asks, a card left to discard when going out needs one),
    by trying every set of its melds without a bound."""
    _variant, rules, _vr = context(state)
    turn = Turn(state.copy(), seat, *context(state), Random(0))
    melds = planning.hand_melds(turn, state.hands[seat])
    keep = 1 if rules.must_discard_to_go_out else 0

    def holds(i: int, left: Counter[str], points: int, clean: bool) -> bool:
        if points >= rules.opening_points and (clean or not rules.opening_requires_clean_run):
            return True
        for j in range(i, len(melds)):
            meld, need = melds[j], Counter(melds[j].cards)
            if need <= left and left.total() - need.total() >= keep and holds(
                    j + 1, left - need, points + meld.points,
                    clean or (meld.kind == "run" and not meld.wilds)):
                return True
        return False

    return holds(0, Counter(state.hands[seat]), 0, False)


@pytest.mark.parametrize("variant", ["rummy51", "lebanese14"])
@pytest.mark.parametrize("rules", [{}, {"opening_requires_clean_run": False},
                                   {"max_wilds_per_meld": 4}])
def test_an_opening_is_offered_exactly_when_the_hand_holds_one(
        variant: str, rules: dict[str, Any]) -> None:
    """R51-OPEN over random first hands: the compound example exists exactly when the
    hand holds an opening, and is accepted."""
    rng = Random(5)
    holding = 0
    for _ in range(40):
        state, _ = new_game(variant, ["a", "b"], rules, rng=Random(rng.random()))
        if state.phase != "draw":  # the Lebanese dealer's first action: a discard only
            state, _ = apply(state, state.turn, Discard(state.hands[state.turn][0]),
                             Random(0))
        seat = state.turn
        state, _ = apply(state, seat, Draw("stock"), Random(0))
        compound = compound_action(state, seat)
        assert compound is not None and compound["kind"] == "opening"
        assert compound["exists"] == _holds_an_opening(state, seat), state.hands[seat]
        if compound["exists"]:
            holding += 1
            apply(state, seat, move_from_dict(compound["example"]), Random(0))
    assert holding >= 3  # the random hands held openings often enough to tell
