"""service/referee is split by responsibility, and offers every name it did as one module."""

from __future__ import annotations

import hashlib
import importlib

import pytest

import service.referee

WHERE = {
    "games": ["Referee", "Answer", "new_game_id", "LOG_ONLY_EVENTS", "MAX_ATTEMPTS",
              "VERIFY_CACHE", "redacted_entry"],
    "errors": ["RefereeError", "UnknownGame", "Unauthorized", "Forbidden", "StaleVersion",
               "KeyReused", "Contention"],
    "documents": ["encode", "decode", "document", "token_hash", "holds", "extras"],
    "held": ["HeldStates", "HELD_STATES"],
    "meter": ["Meter", "UNMETERED"],
    "lobby": ["LobbyReferee", "LobbyError", "normal_code", "CODE_ALPHABET"],
}


@pytest.mark.parametrize("module", sorted(WHERE))
def test_each_responsibility_has_its_module(module: str) -> None:
    found = importlib.import_module(f"service.referee.{module}")
    for name in WHERE[module]:
        assert hasattr(found, name), f"service.referee.{module}.{name}"


def test_the_package_offers_the_names_it_did() -> None:
    for module in sorted(WHERE.keys() - {"documents", "lobby"}):
        found = importlib.import_module(f"service.referee.{module}")
        for name in WHERE[module]:
            assert getattr(service.referee, name) is getattr(found, name), name
    assert set(service.referee.__all__) == {n for m, names in WHERE.items()
                                            if m not in ("documents", "lobby")
                                            for n in names}


def test_a_token_hash_is_its_sha256_and_a_process_remembers_a_bounded_number() -> None:
    documents = importlib.import_module("service.referee.documents")
    tokens = [f"game.0.secret{i}" for i in range(documents.TOKEN_HASHES + 10)]
    for _ in range(2):  # hashed, then remembered
        for token in tokens:
            assert documents.token_hash(token) == hashlib.sha256(token.encode()).hexdigest()
    assert tokens[-1] in documents._token_hashes
    assert len(documents._token_hashes) <= documents.TOKEN_HASHES
