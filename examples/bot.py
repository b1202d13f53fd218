"""Plays both seats of a one-hand basic rummy game, each move chosen from the seat's legal
moves. Standard library only: python3 examples/bot.py [http://127.0.0.1:8000]"""
import json
import sys
import time
import urllib.error
import urllib.request

BASE = sys.argv[1] if len(sys.argv) > 1 else "http://127.0.0.1:8000"
FIRST = {"meld": 0, "lay_off": 1, "draw": 2, "discard": 3}  # table cards first, discard last


def call(method, path, token=None, body=None):
    headers = {"Content-Type": "application/json"}
    if token:
        headers["Authorization"] = f"Bearer {token}"
    data = None if body is None else json.dumps(body).encode()
    while True:  # wait and retry when rate limited (429)
        request = urllib.request.Request(BASE + path, data, headers, method=method)
        try:
            with urllib.request.urlopen(request, timeout=10) as answer:
                return json.load(answer)
        except urllib.error.HTTPError as error:
            problem = error.read().decode()
            if error.code != 429:
                sys.exit(f"{method} {path}: {error.code} {problem}")
            time.sleep(float(error.headers.get("Retry-After", 1)))


game = call("POST", "/v1/games", body={"variant": "basic", "players": ["Ana", "Bot"],
                                        "rules": {"match_end": {"deals": 1}}})
gid, view, tokens = game["game_id"], game["game"], [s["token"] for s in game["seats"]]
while view["status"] == "playing":
    seat = view["turn"]["seat"]
    legal = call("GET", f"/v1/games/{gid}/legal-moves", tokens[seat])["moves"]
    move = min(legal, key=lambda m: (FIRST.get(m["type"], 9), m.get("source") == "discard"))
    view = call("POST", f"/v1/games/{gid}/moves", tokens[seat], move)["game"]
    print(seat, move)
print(view["status"], view["hands_played"][-1]["scores"], view["winners"])
