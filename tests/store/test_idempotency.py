"""What a game keeps of its ``Idempotency-Key``s: each first answer compressed
(:mod:`service.answers`), for ``RUMMY_IDEMPOTENCY_TTL_SECONDS`` (a day by default), at most
the newest 256 of them; a replay still answers the first answer byte for byte."""

from __future__ import annotations

import time
import zlib
from collections.abc import Iterator
from random import Random

import pytest
import redis
from flask.testing import FlaskClient

from service import answers
from service.app import create_app
from service.config import Settings
from service.store import (
    DEFAULT_IDEMPOTENCY_TTL_SECONDS,
    DEFAULT_KEEP_RECORDS,
    GameStore,
    IdempotentReplay,
    make_client,
)
from service.store.records import decode_idempotency, encode_idempotency
from tests.support.deals import auth
from tests.support.http_player import FlaskTransport
from tests.support.reliability import Game, create_game, next_move

RECORD_BYTES = 400
"""What one stored idempotency record of a 4-seat basic game takes at most on average
(expiry, fingerprint, compressed answer): 256 of them stay under 100 KB. Stored whole, as
before, they took about 1,160 bytes each (297 KB)."""


def keyed_moves(transport: FlaskTransport, game: Game, count: int, rng: Random
                ) -> list[tuple[str, int, dict[str, object], bytes]]:
    """``count`` moves, each with its own key: (key, seat, move, first answer's bytes)."""
    played = []
    for n in range(count):
        seat = game.view["turn"]["seat"]
        token = game.tokens[seat]
        if game.view.get("seat") != seat:
            game.view = transport.request("GET", f"{game.path}/me", token=token).body
        move = next_move(game.view, rng)
        key = f"move-{n}"
        reply = transport.request("POST", f"{game.path}/moves", token=token, body=move,
                                  headers={"Idempotency-Key": key})
        assert reply.status == 200, reply.raw[:300]
        played.append((key, seat, move, reply.raw))
        game.view = reply.body["game"]
    return played


def test_a_long_game_keeps_its_newest_keys_small_and_replays_them_byte_for_byte(
        client: FlaskClient, redis_url: str) -> None:
    transport = FlaskTransport(client)
    game = create_game(transport)
    played = keyed_moves(transport, game, DEFAULT_KEEP_RECORDS + 144, Random(41))
    raw = redis.Redis.from_url(redis_url)
    store: GameStore = client.application.extensions["referee"].store
    keys = store.keys(game.game_id)
    records = {f: v for f, v in raw.hgetall(keys.game).items() if f.startswith(b"i:")}
    size = sum(len(f) + len(v) for f, v in records.items())
    assert len(records) == DEFAULT_KEEP_RECORDS
    assert raw.llen(keys.idem_order) == DEFAULT_KEEP_RECORDS
    assert size <= DEFAULT_KEEP_RECORDS * RECORD_BYTES, size
    # the oldest keys are dropped; the kept ones replay the very bytes first answered
    for key, seat, move, first in (*played[:3], *played[-DEFAULT_KEEP_RECORDS:][:3],
                                   *played[-3:]):
        kept = f"i:{seat}:{key}".encode() in records
        assert kept == (played.index((key, seat, move, first)) >= 144)
        if kept:
            replay = transport.request("POST", f"{game.path}/moves", token=game.tokens[seat],
                                       body=move, headers={"Idempotency-Key": key})
            assert replay.status == 200
            assert replay.headers.get("Idempotent-Replayed") == "true"
            assert replay.raw == first
    raw.close()


@pytest.fixture
def short_store(redis_url: str) -> Iterator[GameStore]:
    """A store whose idempotency records count for one second."""
    client = make_client(redis_url)
    try:
        yield GameStore(client, idempotency_ttl_seconds=1)
    finally:
        client.close()


def wait_past(store: GameStore, game_id: str, scope: str) -> None:
    """Until the record of ``scope`` has expired (a little over a second)."""
    value = store.client.hget(store.keys(game_id).game, f"i:{scope}")
    assert isinstance(value, bytes)
    expires_ms = decode_idempotency(value).expires_ms
    assert expires_ms is not None
    time.sleep(max(0.0, expires_ms / 1000 - time.time()) + 0.02)


def commit(store: GameStore, version: int, scope: str | None = None) -> int:
    idem = (scope, "fp", b'{"answer":%d}' % version) if scope is not None else None
    return store.commit("g", expected_version=version, state=b"s%d" % (version + 1),
                        log_record=b"r%d" % (version + 1), idempotency=idem)


def test_an_idempotency_record_counts_until_it_expires(short_store: GameStore) -> None:
    store = short_store
    store.create("g", b"s0")
    assert commit(store, 0, "0:a") == 1
    with pytest.raises(IdempotentReplay) as replay:
        commit(store, 1, "0:a")
    assert replay.value.record.response == b'{"answer":0}'
    assert store.load("g", "0:a").idempotency is not None
    record = store.idempotency("g", "0:a")
    assert record is not None and record.expires_ms is not None
    assert 0 < record.expires_ms / 1000 - time.time() <= 1

    wait_past(store, "g", "0:a")
    assert store.idempotency("g", "0:a") is None
    assert store.load("g", "0:a").idempotency is None
    assert commit(store, 1, "0:a") == 2  # the key counts as new: applied
    with pytest.raises(IdempotentReplay) as replay:
        commit(store, 2, "0:a")
    assert replay.value.record.response == b'{"answer":1}'
    keys = store.keys("g")
    assert store.client.lrange(keys.idem_order, 0, -1) == [b"0:a"]  # listed once


def test_expired_records_are_dropped_by_later_commits(short_store: GameStore) -> None:
    store = short_store
    store.create("g", b"s0")
    for version in range(6):
        commit(store, version, f"0:k{version}")
    keys = store.keys("g")
    fields = lambda: sorted(f for f in store.client.hkeys(keys.game)  # noqa: E731
                            if f.startswith(b"i:"))
    assert len(fields()) == 6
    wait_past(store, "g", "0:k5")
    commit(store, 6)  # without a key: drops the two oldest
    assert fields() == [b"i:0:k2", b"i:0:k3", b"i:0:k4", b"i:0:k5"]
    commit(store, 7, "0:fresh")  # with one: drops two more, keeps its own
    assert fields() == [b"i:0:fresh", b"i:0:k4", b"i:0:k5"]
    commit(store, 8)
    assert fields() == [b"i:0:fresh"]
    assert store.client.lrange(keys.idem_order, 0, -1) == [b"0:fresh"]
    commit(store, 9)  # a fresh record stops the sweep
    assert fields() == [b"i:0:fresh"]


def test_a_record_of_an_earlier_version_still_replays(store: GameStore) -> None:
    """Stored whole, without an expiry (before records were compressed and expired)."""
    store.create("g", b"s0")
    old = encode_idempotency("fp", b'{"game":{"version":1}}')
    assert old == b'2:fp{"game":{"version":1}}'
    store.client.hset(store.keys("g").game, "i:0:old", old)
    record = store.idempotency("g", "0:old")
    assert record is not None and record.expires_ms is None
    assert answers.unpack(record.response) == b'{"game":{"version":1}}'
    with pytest.raises(IdempotentReplay):
        commit(store, 0, "0:old")


def test_a_move_key_is_forgotten_after_its_ttl(redis_url: str) -> None:
    app = create_app(Settings(redis_url=redis_url, rate_limits=(), create_rate_limits=(),
                              idempotency_ttl_seconds=1))
    client = app.test_client()
    assert app.extensions["referee"].store.idempotency_ttl_seconds == 1
    created = client.post("/v1/games", json={"variant": "basic", "players": ["Ana", "Bo"]})
    game = created.get_json()
    seat = game["game"]["turn"]["seat"]
    path, token = f"/v1/games/{game['game_id']}/moves", game["seats"][seat]["token"]
    headers = {**auth(token), "Idempotency-Key": "draw-1"}
    draw = {"type": "draw", "source": "stock"}
    first = client.post(path, json=draw, headers=headers)
    assert first.status_code == 200
    again = client.post(path, json=draw, headers=headers)
    assert again.headers.get("Idempotent-Replayed") == "true"
    assert again.get_data() == first.get_data()
    time.sleep(1.1)
    late = client.post(path, json=draw, headers=headers)  # a new move: one draw per turn
    assert late.status_code == 422, late.get_data(as_text=True)
    assert "Idempotent-Replayed" not in late.headers


def test_the_idempotency_ttl_setting() -> None:
    assert DEFAULT_IDEMPOTENCY_TTL_SECONDS == 24 * 3600
    assert Settings().idempotency_ttl_seconds == 24 * 3600
    env = Settings.from_env({"RUMMY_IDEMPOTENCY_TTL_SECONDS": "90"})
    assert env.idempotency_ttl_seconds == 90
    with pytest.raises(Exception, match="RUMMY_IDEMPOTENCY_TTL_SECONDS"):
        Settings.from_env({"RUMMY_IDEMPOTENCY_TTL_SECONDS": "0"})


# Records name their dictionary by its checksum and are read for a day: a dictionary
# changed would leave the records made with it unreadable. Add a new one instead.
PINNED = {
    "basic": 2847910176,
    "rummy51": 252253118,
    "lebanese14": 1094539138,
    "dummy": 1423664058,
    "wrotham": 3839881640,
}


def test_the_answer_dictionaries_never_change() -> None:
    assert {v: zlib.adler32(d) for v, d in answers.DICTIONARIES.items()} == PINNED


@pytest.mark.parametrize("variant", [*PINNED, "a variant without a dictionary"])
def test_an_answer_is_kept_compressed_and_read_back_exactly(variant: str) -> None:
    answer = answers.DICTIONARIES.get(variant, answers.DICTIONARIES["basic"]).replace(
        b'"game_id":""', b'"game_id":"Abc-123_xyz0"')
    packed = answers.pack(answer, variant)
    assert answers.unpack(packed) == answer
    assert len(packed) < len(answer) // (4 if variant in PINNED else 2)
    assert answers.unpack(b'{"plain":true}') == b'{"plain":true}'
    for broken in (b"", b"x", packed[:-3], packed[:2] + b"\0\0\0\0" + packed[6:]):
        with pytest.raises(ValueError):
            answers.unpack(broken)
