"""A real generated client (issue 10): ``openapi-python-client`` builds a Python client from
the committed ``openapi/openapi.json``, and a tiny bot plays a complete game of every
variant through it against ``rummy-referee serve``, choosing each move from
``GET …/legal-moves``. The bot that ships, ``examples/bot.py`` (shown in the README), runs
against the same server with nothing but the standard library.
"""

from __future__ import annotations

import contextlib
import importlib
import os
import re
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
import requests

from service.redis_server import RedisServer
from service.rules.moves import MOVE_TYPES
from tests.support import serving
from tests.support.serving import Server

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[2]
DOCUMENT = ROOT / "openapi" / "openapi.json"
PACKAGE = "rummy_referee_client"
MAX_MOVES = 5000
PREFERENCE = {"knock": 0, "meld": 1, "lay_off": 2, "lay_out": 3, "draw": 4, "discard": 5,
              "pass": 6}
"""The bot's taste: go out (gin: knock) or put cards on the table first; draw from the
stock; discard last; gin's first upcard: pass only when nothing else is left."""


def _generator() -> str:
    beside = Path(sys.executable).parent / "openapi-python-client"
    found = str(beside) if beside.is_file() else shutil.which("openapi-python-client")
    if found is None:
        pytest.fail("openapi-python-client is not installed (test requirement)")
    return found


@pytest.fixture(scope="module")
def generated(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ModuleType]:
    """The client generated from the committed document, importable as PACKAGE."""
    where = tmp_path_factory.mktemp("client")
    config = where / "config.yaml"
    config.write_text("post_hooks: []\n")  # no formatter run: the code is used as generated
    done = subprocess.run(
        [_generator(), "generate", "--path", str(DOCUMENT), "--meta", "none",
         "--config", str(config), "--output-path", str(where / PACKAGE)],
        capture_output=True, text=True, timeout=300, check=False)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "warning" not in (done.stdout + done.stderr).lower(), done.stdout + done.stderr
    sys.path.insert(0, str(where))
    try:
        yield importlib.import_module(PACKAGE)
    finally:
        sys.path.remove(str(where))
        for name in [n for n in sys.modules if n == PACKAGE or n.startswith(PACKAGE + ".")]:
            del sys.modules[name]


@pytest.fixture(scope="module")
def served(redis_server: RedisServer, tmp_path_factory: pytest.TempPathFactory,
           ) -> Iterator[Server]:
    """``rummy-referee serve`` (gunicorn) on the session Redis, default settings."""
    with serving.served(tmp_path_factory.mktemp("serve"), redis_server.url) as server:
        yield server


def _api(name: str) -> Any:
    return importlib.import_module(f"{PACKAGE}.api.{name}")


def _ok(call: Any, wanted: type, *args: Any, **kwargs: Any) -> Any:
    """``call(*args, **kwargs)`` (an operation's ``sync_detailed``), waiting and retrying
    while rate limited (429, as a polite bot does); the parsed body of the expected model."""
    response = call(*args, **kwargs)
    for _ in range(30):
        if response.status_code != 429:
            break
        time.sleep(float(response.headers.get("Retry-After", "1")))
        response = call(*args, **kwargs)
    assert isinstance(response.parsed, wanted), (response.status_code, response.content)
    return response.parsed


def choose(legal: Any) -> Any:
    """The bot: a compound meld action (an opening, a contract, going down all at once) when
    there is one, else a meld, a lay-off, a draw from the stock, a discard, in that order."""
    if legal.compound and legal.compound.exists and legal.compound.example:
        return legal.compound.example
    playable = [m for m in legal.moves if _kind(m) in PREFERENCE]
    assert playable, f"no move to make: {legal.to_dict()}"
    return min(playable, key=lambda m: (PREFERENCE[_kind(m)],
                                        m.to_dict().get("source") == "discard"))


def _kind(move: Any) -> str:
    kind: str = move.to_dict()["type"]
    return kind


def _move_classes(models: ModuleType) -> tuple[type, ...]:
    """The generated client's class of each move type (``DrawMove`` …), whose fields are
    its attributes: one class per schema of the ``Move`` oneOf."""
    classes = tuple(getattr(models, "".join(p.title() for p in kind.split("_")) + "Move")
                    for kind in MOVE_TYPES)
    assert not any(hasattr(c, "additional_properties") for c in classes)
    return classes


GAMES = {
    "gin": {"match_end": {"deals": 1}},
    "basic": {"match_end": {"deals": 1}},
    "rummy51": {"match_end": {"deals": 1}},
    "lebanese14": {"match_end": {"deals": 1}},
    "dummy": {"match_end": {"deals": 2}},
    "wrotham": {},  # the whole match: six deals, the last three late deals
}


@pytest.mark.parametrize("variant", list(GAMES))
def test_the_generated_client_plays_a_complete_game(
        generated: ModuleType, served: Server, variant: str) -> None:
    models = importlib.import_module(f"{PACKAGE}.models")
    move_classes = _move_classes(models)
    games, moves = _api("games.create_game"), _api("games.post_move")
    public = _api("games.get_game")
    legal_moves = _api("games.list_legal_moves")
    players = ["Ana", "Bo"] if variant == "gin" else ["Ana", "Bo", "Cy"]
    with contextlib.ExitStack() as stack:
        anyone = stack.enter_context(generated.Client(base_url=served.base_url))
        request = models.GameCreate.from_dict({"variant": variant, "players": players,
                                               "rules": GAMES[variant]})
        created = _ok(games.sync_detailed, models.GameCreated, client=anyone, body=request)
        seats = [stack.enter_context(generated.AuthenticatedClient(
            base_url=served.base_url, token=s.token)) for s in created.seats]
        game_id = created.game_id
        view = created.game
        assert isinstance(view, models.PublicView)
        stale_checked = False
        for _ in range(MAX_MOVES):
            if view.status != "playing":
                break
            assert isinstance(view.turn, models.Turn)  # a typed model, not an untyped object
            seat = seats[view.turn.seat]
            legal = _ok(legal_moves.sync_detailed, models.LegalMoves, game_id, client=seat)
            assert legal.your_turn and legal.seat == view.turn.seat
            assert all(isinstance(m, move_classes) for m in legal.moves)  # typed per type
            move = choose(legal)
            if not stale_checked:  # a stale If-Match: its 412 keeps current_version
                stale = _ok(moves.sync_detailed, models.Problem, game_id, client=seat,
                            body=move, if_match=f'"{view.version + 7}"')
                assert (stale.status, stale.current_version) == (412, view.version)
                stale_checked = True
            answer = _ok(moves.sync_detailed, models.MoveResult, game_id, client=seat,
                         body=move)
            view = answer.game
            assert isinstance(view, models.SeatView)
        final = _ok(public.sync_detailed, models.PublicView, game_id, client=anyone)
        assert final.status == models.PublicViewStatus.FINISHED, "the game did not end"
        assert final.version == view.version
        assert isinstance(final.winners, list) and final.winners
        assert final.hands_played and all(isinstance(h, models.HandResult)
                                          for h in final.hands_played)
        deals = {"gin": 1, "basic": 1, "rummy51": 1, "lebanese14": 1, "dummy": 2,
                 "wrotham": 6}
        assert len(final.hands_played) == deals[variant]

        # a refusal parses as the generated Problem model, with its code enum
        late = models.DrawMove(type_=models.DrawMoveType.DRAW,
                               source=models.DrawMoveSource.STOCK)
        problem = _ok(moves.sync_detailed, models.Problem, game_id, client=seats[0],
                      body=late)
        assert (problem.status, problem.code) == (422, models.ProblemCode.GAME_FINISHED)


def test_the_generated_client_keeps_a_score_sheet(generated: ModuleType,
                                                   served: Server) -> None:
    models = importlib.import_module(f"{PACKAGE}.models")
    create = _api("scoresheets.create_score_sheet")
    add = _api("scoresheets.add_score_sheet_hand")
    take_back = _api("scoresheets.undo_score_sheet_hand")
    read = _api("scoresheets.get_score_sheet")
    with contextlib.ExitStack() as stack:
        anyone = stack.enter_context(generated.Client(base_url=served.base_url))
        created = _ok(create.sync_detailed, models.SheetCreated, client=anyone,
                      body=models.SheetCreate.from_dict({
                          "variant": "rummy51", "players": ["Ana", "Bo", "Cy"],
                          "rules": {"match_end": {"target": 100}}}))
        keeper = stack.enter_context(generated.AuthenticatedClient(
            base_url=served.base_url, token=created.token))
        sheet_id = created.sheet_id
        hand = models.SheetHand.from_dict({
            "went_out": "Ana", "hands": {"Bo": ["as", "JK", "7♦"], "Cy": ["10♥"]},
            "opened": ["Ana", "Bo"], "all_at_once": False})
        sheet = _ok(add.sync_detailed, models.SheetView, sheet_id, client=keeper, body=hand)
        assert sheet.hands[0].cards.to_dict() == {"Ana": [], "Bo": ["AS", "JK", "7D"],
                                                  "Cy": ["TH"]}
        assert sheet.totals.to_dict() == {"Ana": 0, "Bo": 38, "Cy": 100}
        assert sheet.status == models.SheetViewStatus.FINISHED
        assert sheet.winners == ["Ana"]
        refused = _ok(add.sync_detailed, models.Problem, sheet_id, client=keeper,
                      body=models.SheetHand.from_dict({"points": {"Ana": 0, "Bo": 0,
                                                                  "Cy": 0}}))
        assert refused.code == models.ProblemCode.SHEET_FINISHED
        sheet = _ok(take_back.sync_detailed, models.SheetView, sheet_id, client=keeper)
        assert sheet.status == models.SheetViewStatus.PLAYING and sheet.hands == []
        sheet = _ok(add.sync_detailed, models.SheetView, sheet_id, client=keeper,
                    body=models.SheetHand.from_dict({"points": {"Ana": 5, "Bo": 0,
                                                                "Cy": 12}}))
        final = _ok(read.sync_detailed, models.SheetView, sheet_id, client=anyone)
        assert final.version == sheet.version == 3
        assert final.totals.to_dict() == {"Ana": 5, "Bo": 0, "Cy": 12}


# ---------------------------------------------------------------------------------------
# The bot that ships (examples/bot.py), shown in the README

BOT = ROOT / "examples" / "bot.py"


def readme_bot() -> str:
    readme = (ROOT / "README.md").read_text()
    block = re.search(r"<!-- bot:start -->\n```python\n(.*?)```\n<!-- bot:end -->", readme,
                      re.S)
    assert block, "README lost its bot block"
    return block.group(1)


def test_the_readme_shows_the_bot_that_ships() -> None:
    assert readme_bot() == BOT.read_text()


def test_the_bot_is_short_and_needs_only_the_standard_library() -> None:
    code = BOT.read_text()
    assert len(code.splitlines()) <= 40
    imports = set(re.findall(r"^(?:import|from) (\w+)", code, re.M))
    assert imports and imports <= sys.stdlib_module_names, imports - sys.stdlib_module_names
    assert "legal-moves" in code and "Retry-After" in code


def run_bot(base_url: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    """``python3 examples/bot.py BASE`` as on a fresh machine: isolated mode and no site
    directory, so nothing installed in this venv (``requests`` …) is importable."""
    return subprocess.run([sys.executable, "-I", "-S", str(BOT), base_url], cwd=cwd,
                          capture_output=True, text=True, timeout=300, check=False,
                          env={k: v for k, v in os.environ.items() if k != "BASE"})


def test_the_bot_plays_a_whole_basic_game(served: Server, tmp_path: Path) -> None:
    done = run_bot(served.base_url, tmp_path)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    last = done.stdout.strip().splitlines()[-1]
    assert last.startswith("finished "), last


def _answers_with_status(base_url: str, status: int) -> float:
    """How many answers of ``status`` the served app counted (its Prometheus metrics)."""
    text = requests.get(f"{base_url}/metrics", timeout=10).text
    found = re.findall(rf'^rummy_http_requests_total\{{[^}}]*status="{status}"[^}}]*\}} (\S+)$',
                       text, re.M)
    return sum(float(n) for n in found)


def test_the_bot_waits_out_its_rate_limit(redis_server: RedisServer, tmp_path: Path) -> None:
    """A seat limited to 10 requests a second meets 429s; the bot waits each one out
    (``Retry-After``) and still plays the game to its end."""
    with serving.served(tmp_path, redis_server.url, workers=1,
                        env={"RUMMY_RATE_LIMITS": "10/second"}) as server:
        done = run_bot(server.base_url, tmp_path)
        assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
        assert done.stdout.strip().splitlines()[-1].startswith("finished "), done.stdout
        assert _answers_with_status(server.base_url, 429) > 0
