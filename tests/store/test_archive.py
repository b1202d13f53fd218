"""The log archive: when a hand ends the referee moves the live log into one compressed
chunk (``GameStore.archive``); the log reads the same records, commits go on, every key
keeps the game's expiry and slot, and a log archived while it is read is read again."""

from __future__ import annotations

from typing import Any

import pytest
import redis
from redis.crc import key_slot

from service.store import GameStore, StoreCorrupted
from service.store.redis_store import ARCHIVE_CHUNK


def _played(store: GameStore, game_id: str, moves: int, start: int = 0) -> None:
    for i in range(start, start + moves):
        assert store.commit(game_id, expected_version=i, state=b"s%d" % i,
                            log_record=b'{"v":%d,"text":"a\\nb"}' % (i + 1)) == i + 1


def _record(v: int) -> bytes:
    return b'{"v":%d,"text":"a\\nb"}' % v


@pytest.fixture
def admin(redis_url: str) -> Any:
    client = redis.Redis.from_url(redis_url)
    yield client
    client.close()


def test_an_archived_log_reads_as_it_did_for_every_range(store: GameStore,
                                                         admin: redis.Redis) -> None:
    store.create("g", b"")
    _played(store, "g", 30)
    assert store.archive("g") == 30
    _played(store, "g", 25, start=30)
    assert store.archive("g") == 25
    _played(store, "g", 7, start=55)  # live: 56..62
    keys = store.keys("g")
    assert admin.llen(keys.log) == 7 and admin.llen(keys.archive) == 2
    assert admin.hget(keys.game, "o") == b"55"
    everything = [(v, _record(v)) for v in range(1, 63)]
    assert store.log("g") == everything
    fresh = GameStore(store.client)  # a process that has not read this game's log yet
    for after in (0, 1, 29, 30, 31, 54, 55, 56, 61, 62, 70):
        for limit in (None, 1, 5, 30, 100):
            want = everything[after:] if limit is None else everything[after:after + limit]
            assert fresh.log("g", after, limit) == want, (after, limit)
            assert store.log("g", after, limit) == want, (after, limit)
    assert store.load("g").version == 62
    assert store.archive("g") == 7 and store.archive("g") == 0  # nothing live: nothing moved
    assert store.log("g") == everything


def test_an_archiving_moves_a_chunk_of_the_oldest_records_at_most(
        store: GameStore, admin: redis.Redis) -> None:
    """A live log longer than a chunk (a game stored before the archive, or whose archivings
    failed) is archived a chunk at a time, the oldest first, and reads as it did."""
    store.create("g", b"")
    total = 2 * ARCHIVE_CHUNK + 7
    _played(store, "g", total)
    keys = store.keys("g")
    assert store.archive("g") == ARCHIVE_CHUNK
    assert admin.llen(keys.log) == ARCHIVE_CHUNK + 7
    assert admin.hget(keys.game, "o") == str(ARCHIVE_CHUNK).encode()
    assert admin.lindex(keys.archive, 0).startswith(b"1:%d:" % ARCHIVE_CHUNK)
    everything = [(v, _record(v)) for v in range(1, total + 1)]
    assert store.log("g") == everything
    _played(store, "g", 3, start=total)
    assert store.archive("g") == ARCHIVE_CHUNK and store.archive("g") == 10
    assert admin.exists(keys.log) == 0 and admin.llen(keys.archive) == 3
    assert store.log("g") == everything + [(v, _record(v)) for v in range(total + 1,
                                                                         total + 4)]
    assert store.log("g", ARCHIVE_CHUNK - 1, 3) == everything[ARCHIVE_CHUNK - 1:
                                                               ARCHIVE_CHUNK + 2]


def test_the_archive_takes_less_memory_than_the_log_it_holds(store: GameStore,
                                                              admin: redis.Redis) -> None:
    store.create("g", b"")
    for i in range(200):
        record = (b'{"version":%d,"seat":%d,"move":{"type":"draw","source":"stock"},'
                  b'"events":[{"type":"draw","seat":%d,"source":"stock"}]}' % (i + 1, i % 4,
                                                                                i % 4))
        store.commit("g", expected_version=i, state=b"s", log_record=record)
    keys = store.keys("g")
    live = admin.memory_usage(keys.log, samples=0)
    store.archive("g")
    assert admin.exists(keys.log) == 0
    archived = admin.memory_usage(keys.archive, samples=0)
    assert archived * 4 < live, (archived, live)


def test_an_archived_game_keeps_one_slot_and_its_expiry(redis_url: str,
                                                         admin: redis.Redis) -> None:
    from service.store import make_client

    client = make_client(redis_url)
    store = GameStore(client, ttl_seconds=1000)
    store.create("h", b"")
    _played(store, "h", 3)
    store.archive("h")
    keys = store.keys("h")
    assert 990 <= admin.ttl(keys.archive) <= 1000
    admin.expire(keys.archive, 5)
    _played(store, "h", 1, start=3)  # a commit refreshes the archive's expiry too
    assert 990 <= admin.ttl(keys.archive) <= 1000
    assert key_slot(keys.archive.encode()) == key_slot(b"h")
    admin.delete(keys.game)  # as if it expired: a new game of that id starts clean
    store.create("h", b"new")
    assert admin.exists(keys.archive) == 0 and store.log("h") == []
    client.close()


def test_an_archiving_that_raced_a_commit_or_another_writes_nothing(
        store: GameStore, admin: redis.Redis) -> None:
    """The archive script moves only what its caller read: if the archive moved on
    meanwhile (another worker archived), nothing is written."""
    store.create("g", b"")
    _played(store, "g", 4)
    keys = store.keys("g")
    scripts = store._scripts
    assert scripts.archive(keys, 1, 2, b"5:2:") is False  # o is 0, not 1
    assert scripts.archive(keys, 0, 9, b"1:9:") is False  # only 4 live records
    assert admin.llen(keys.log) == 4 and admin.exists(keys.archive) == 0
    assert store.log("g") == [(v, _record(v)) for v in range(1, 5)]


def test_a_bad_chunk_is_corruption_not_a_wrong_answer(store: GameStore,
                                                      admin: redis.Redis) -> None:
    store.create("g", b"")
    _played(store, "g", 3)
    store.archive("g")
    admin.lset(store.keys("g").archive, 0, b"1:3:not zlib")
    with pytest.raises(StoreCorrupted):
        store.log("g")
    assert store.log("g", after=3) == []  # what is not archived still reads
