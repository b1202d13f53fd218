"""Sizes from Redis: a stored mid-hand game state, and memory per game and per logged move.

The reference game is a 4-player Rummy 51 game played over HTTP by the benchmark's player
until 16 stock draws have been made in its first hand (four rounds: mid-hand). Its keys
are measured with ``MEMORY USAGE … SAMPLES 0``: the game hash (state, version, tokens,
idempotency records) is the memory per stored game; the move log is reported per logged
move (its ``MEMORY USAGE`` over its length).
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

import redis

from bench.http import Connection
from bench.player import GamePlan
from service.store import game_keys

MID_HAND_DRAWS = 16


def _usage(client: redis.Redis, key: str) -> int:
    value: Any = client.memory_usage(key, samples=0)
    return int(value or 0)


async def _mid_hand_game(host: str, port: int, seed: int = 7) -> str:
    """The id of a 4-player rummy51 game left mid-hand (first hand, 16 stock draws)."""
    from random import Random

    conn = Connection(host, port)
    rng = Random(seed)
    try:
        for _attempt in range(20):
            body = json.dumps({"variant": "rummy51",
                               "players": ["Ana", "Bo", "Cy", "Di"]}).encode()
            data = (await conn.request("POST", "/v1/games", body)).json()
            game = GamePlan(data["game_id"], "rummy51", [s["token"] for s in data["seats"]],
                            data["game"], rng)
            draws = 0
            while game.view["status"] == "playing" and game.view["hand_number"] == 1:
                if draws >= MID_HAND_DRAWS and game.view["turn"]["phase"] == "draw":
                    return game.game_id
                seat = game.to_move
                auth = {"Authorization": f"Bearer {game.tokens[seat]}"}
                if game.seats[seat].hand is None:
                    me = await conn.request("GET", f"/v1/games/{game.game_id}/me",
                                            headers=auth)
                    game.saw(seat, me.json(), [])
                    continue
                move = game.next_move()
                reply = await conn.request("POST", f"/v1/games/{game.game_id}/moves",
                                           json.dumps(move).encode(), auth)
                if reply.status != 200:
                    raise RuntimeError(f"probe move refused: {move}: {reply.body[:300]!r}")
                answer = reply.json()
                game.saw(seat, answer["game"], answer["events"])
                if move["type"] == "draw":
                    draws += 1
        raise RuntimeError("no game reached mid-hand in 20 tries")
    finally:
        await conn.close()


def reference_game(host: str, port: int, redis_url: str) -> dict[str, Any]:
    """Sizes of the mid-hand 4-player rummy51 game: state bytes, memory per key."""
    game_id = asyncio.run(_mid_hand_game(host, port))
    keys = game_keys(game_id)
    client = redis.Redis.from_url(redis_url)
    try:
        state = client.hget(keys.game, "s")
        assert isinstance(state, bytes)
        log_entries = int(client.llen(keys.log))
        game_bytes = _usage(client, keys.game) + _usage(client, keys.idem_order)
        log_bytes = _usage(client, keys.log)
    finally:
        client.close()
    return {"game_id": game_id, "state_bytes": len(state), "game_bytes": game_bytes,
            "log_bytes": log_bytes, "log_entries": log_entries,
            "bytes_per_logged_move": log_bytes / max(log_entries, 1),
            "all_keys_bytes": game_bytes + log_bytes}


def all_games(redis_url: str, limit: int = 2000) -> dict[str, Any]:
    """Average memory of the games the run left in Redis (every variant and size)."""
    client = redis.Redis.from_url(redis_url)
    games = game_bytes = log_bytes = entries = 0
    try:
        for key in client.scan_iter(match="rummy:*:game", count=500):
            name = key.decode()
            prefix = name[: -len(":game")]
            game_bytes += _usage(client, name) + _usage(client, prefix + ":idem")
            log_bytes += _usage(client, prefix + ":log")
            entries += int(client.llen(prefix + ":log"))
            games += 1
            if games >= limit:
                break
    finally:
        client.close()
    return {"games": games, "bytes_per_game": game_bytes / max(games, 1),
            "bytes_per_logged_move": log_bytes / max(entries, 1), "log_entries": entries}
