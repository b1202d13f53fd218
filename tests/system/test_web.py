"""The web table at ``/play`` in a real browser, on a phone-sized screen.

Headless Chromium (Debian's ``chromium`` package; Playwright's own browser download is not
used) is driven by Playwright for Python against ``rummy-referee serve`` on the session
Redis. Every move is made by tapping the page, which uses only the public API: a basic hand
from a seat's link, played hot-seat to its end (a refused meld shows its explanation, the
scores and the match result show at the end), and a Rummy 51 game created through the form
(knobs from ``GET /v1/variants``, an arranged deal) in which an opening with a joker shows
what the joker stands for, a joker is swapped, and the hand is scored. A screenshot of the
table goes to ``docs/table.png``.

Remote players: three browser contexts (each its own storage) create a game with open
seats, join it by its link and by its typed code, and play a hand, each page showing only
its own seat's cards and each sending only its own seat's token. Abort, resign (each asked
first) and rematch; the turn clock and a claim once it has run out (the app served in this
process, its store's clock moved forward, no waiting); the hand taken off the page while a
pass-and-play device is handed over; a gin hand passed, knocked and laid out.

Without Chromium the tests fail (they do not skip): CI installs it with
``apt-get install -y chromium``; ``RUMMY_TEST_CHROMIUM`` names another binary.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import threading
from collections import Counter
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import requests

from service.redis_server import RedisServer, free_port
from tests.support.serving import wait_until_ready

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[2]
SCREENSHOT = ROOT / "docs" / "table.png"
CHROMIUM = os.environ.get("RUMMY_TEST_CHROMIUM", "/usr/bin/chromium")
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic",
                 "--no-first-run", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync"]
PHONE = {"width": 390, "height": 844}
TIMEOUT_MS = 10_000


# --- the server and the browser --------------------------------------------------------------


class Server:
    """``rummy-referee serve`` (gunicorn, 2 workers) on the session Redis, output in a file."""

    def __init__(self, workdir: Path, redis_url: str) -> None:
        self.port = free_port()
        self.base_url = f"http://127.0.0.1:{self.port}"
        self.log = workdir / "serve.log"
        exe = Path(sys.executable).parent / "rummy-referee"
        command = [str(exe) if exe.is_file() else (shutil.which("rummy-referee") or str(exe)),
                   "serve", "--host", "127.0.0.1", "--port", str(self.port), "--workers", "2"]
        env = {k: v for k, v in os.environ.items()
               if k != "REDIS_URL" and not k.startswith("RUMMY_")}
        # closed event streams free their thread at the next heartbeat: make that soon
        env.update(REDIS_URL=redis_url, RUMMY_DATA_DIR=str(workdir / "data"),
                   RUMMY_SSE_HEARTBEAT_SECONDS="1")
        with self.log.open("wb") as out:
            self.proc = subprocess.Popen(command, env=env, cwd=workdir, stdout=out,
                                         stderr=subprocess.STDOUT, start_new_session=True)

    def output(self) -> str:
        return self.log.read_text(errors="replace")

    def wait_ready(self) -> None:
        wait_until_ready(self.proc, self.base_url, self.output)

    def stop(self) -> None:
        """SIGTERM, and SIGKILL soon after (test_serve_e2e checks the graceful stop)."""
        if self.proc.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self.proc.pid, signal.SIGTERM)
            try:
                self.proc.wait(timeout=3)
            except subprocess.TimeoutExpired:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(self.proc.pid, signal.SIGKILL)
                self.proc.wait(timeout=10)


@pytest.fixture(scope="module")
def server(redis_server: RedisServer, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    started = Server(tmp_path_factory.mktemp("web"), redis_server.url)
    try:
        started.wait_ready()
        yield started
    finally:
        started.stop()


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    """Headless Chromium from the system, or a failure that says how to install it."""
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        pytest.fail("Playwright for Python is missing: pip install 'playwright>=1.65' "
                    "(in the test extras; do not run `playwright install`: the tests use the "
                    "system's Chromium)")
    if not (os.path.isfile(CHROMIUM) and os.access(CHROMIUM, os.X_OK)):
        pytest.fail(f"Chromium not found at {CHROMIUM}: the web table's browser tests need it. "
                    "Install Debian's package: sudo apt-get update && sudo apt-get install -y "
                    "chromium (CI does), or set RUMMY_TEST_CHROMIUM to a Chromium binary.")
    with sync_playwright() as playwright:
        launched = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        try:
            yield launched
        finally:
            launched.close()


RANK_WORDS = {"A": "Ace", "2": "Two", "3": "Three", "4": "Four", "5": "Five", "6": "Six",
              "7": "Seven", "8": "Eight", "9": "Nine", "T": "Ten", "J": "Jack", "Q": "Queen",
              "K": "King"}
SUIT_WORDS = {"S": "spades", "H": "hearts", "D": "diamonds", "C": "clubs"}


def card_name(code: str) -> str:
    """The page's name of a card (cards.js ``cardName``)."""
    return f"{RANK_WORDS[code[0]]} of {SUIT_WORDS[code[1]]}"


class Player:
    """One browser context (its own storage) on a phone screen, with every request it
    sends to the API recorded (URL and Authorization header)."""

    def __init__(self, browser: Any, base_url: str) -> None:
        self.context = browser.new_context(viewport=PHONE, device_scale_factor=2,
                                           is_mobile=True, has_touch=True, base_url=base_url)
        self.context.set_default_timeout(TIMEOUT_MS)
        self.page = self.context.new_page()
        self.errors: list[str] = []
        self.sent: list[tuple[str, str | None]] = []
        self.page.on("pageerror", lambda exc: self.errors.append(str(exc)))
        self.page.on("request", lambda req: self.sent.append(
            (req.url, req.headers.get("authorization"))))

    def stored(self) -> dict[str, Any]:
        games: dict[str, Any] = self.page.evaluate(
            "() => JSON.parse(localStorage.getItem('rummy-referee.games.v1') || '{}')")
        return games

    def hand(self) -> list[str]:
        codes: list[str] = self.page.locator(".hand .card").evaluate_all(
            "els => els.map(e => e.dataset.code)")
        return codes

    def shows_none_of(self, cards: list[str]) -> None:
        """Neither the page (DOM, labels) nor its text names any of ``cards``."""
        html = self.page.content()
        for code in cards:
            assert f'data-code="{code}"' not in html, code
            assert card_name(code) not in html, code

    def close(self) -> None:
        self.context.close()
        assert not self.errors, f"script errors on the page: {self.errors}"


@pytest.fixture
def page(browser: Any, server: Server) -> Iterator[Any]:
    """A fresh phone-sized page (its own storage); fails the test on any script error."""
    from playwright.sync_api import expect

    expect.set_options(timeout=TIMEOUT_MS)
    player = Player(browser, server.base_url)
    try:
        yield player.page
    finally:
        player.close()


# --- helpers -------------------------------------------------------------------------------------


def create(server: Server, body: dict[str, Any]) -> dict[str, Any]:
    resp = requests.post(f"{server.base_url}/v1/games", json=body, timeout=10)
    assert resp.status_code == 201, resp.text
    created: dict[str, Any] = resp.json()
    return created


def public_view(server: Server, game_id: str) -> dict[str, Any]:
    resp = requests.get(f"{server.base_url}/v1/games/{game_id}", timeout=10)
    assert resp.status_code == 200, resp.text
    view: dict[str, Any] = resp.json()
    return view


def card(page: Any, code: str) -> Any:
    """The (first free) card ``code`` in the hand."""
    return page.locator(f'.hand .card[data-code="{code}"]:not(.staged)').first


def tap_cards(page: Any, *codes: str) -> None:
    for code in codes:
        card(page, code).click()


def game_id_of(page: Any) -> str:
    found = re.search(r"game=([^&]+)", page.url)
    assert found, page.url
    return found.group(1)


R51_DECK = Counter([r + s for s in "SHDC" for r in "A23456789TJQK"] * 2 + ["JK"] * 4)


def r51_deal(hands: list[str], stock_top: str) -> dict[str, Any]:
    """A 108-card Rummy 51 deal: the hands as given, ``stock_top`` on top of the stock."""
    given = [h.split() for h in hands]
    top = stock_top.split()
    used = Counter(c for h in given for c in h) + Counter(top)
    assert not used - R51_DECK
    return {"hands": given, "discard": [], "stock": top + list((R51_DECK - used).elements())}


# --- the tests -----------------------------------------------------------------------------------


def test_a_basic_hand_played_by_tapping_hot_seat_to_the_match_result(
        page: Any, server: Server) -> None:
    """The README's arranged walkthrough game, played through the page."""
    from playwright.sync_api import expect

    body = json.loads((ROOT / "examples" / "walkthrough-game.json").read_text())
    created = create(server, body)
    game_id = created["game_id"]
    ana, bo = (seat["token"] for seat in created["seats"])

    # Ana opens her seat's link: the token is kept on the device and leaves the address bar.
    page.goto(f"/play#game={game_id}&token={ana}")
    expect(page.locator(".hand .card")).to_have_count(10)
    assert "token=" not in page.url and page.url.endswith(f"#game={game_id}&seat=0")
    expect(page.locator(".status")).to_contain_text("Your turn: draw")
    expect(page.get_by_role("button", name="Seven of hearts")).to_be_visible()
    expect(page.locator(".pile.discard")).to_have_attribute(
        "aria-label", re.compile("Four of spades on top"))
    # the seat view's hand, sorted by suit: spades, hearts, clubs, diamonds
    codes = page.locator(".hand .card").evaluate_all("els => els.map(e => e.dataset.code)")
    assert codes == ["3S", "QS", "KS", "7H", "8H", "9H", "QC", "5D", "QD", "KD"]

    page.get_by_role("button", name="Draw from stock").click()
    expect(page.locator(".hand .card")).to_have_count(11)
    expect(card(page, "TH")).to_have_class(re.compile(r"\bfresh\b"))  # the card just drawn

    # A refused move: the page shows the referee's explanation, code and rule.
    tap_cards(page, "QS", "QD", "KS")
    page.get_by_role("button", name=re.compile("^Meld")).click()
    problem = page.locator(".problem")
    expect(problem).to_contain_text("Move refused")
    expect(problem).to_contain_text("INVALID_MELD")
    expect(problem).to_contain_text("BASIC-SET")
    expect(problem).to_contain_text("not a set: ranks differ (Q, K)")
    page.get_by_role("button", name="Dismiss").click()
    expect(problem).to_have_count(0)
    page.get_by_role("button", name=re.compile("Clear the selection")).click()

    # Two melds in one action: a run put aside, then a set.
    tap_cards(page, "7H", "8H", "9H", "TH")
    page.locator('[data-fkey="group"]').click()
    expect(page.locator(".tray")).to_contain_text("Meld 1")
    tap_cards(page, "QS", "QD", "QC")
    page.get_by_role("button", name="Lay down 2 melds").click()
    expect(page.locator(".meld")).to_have_count(2)
    expect(page.locator('[data-meld="m1"]')).to_have_attribute(
        "aria-label",
        "Ana's run m1: Seven of hearts, Eight of hearts, Nine of hearts, Ten of hearts")
    tap_cards(page, "3S")
    page.get_by_role("button", name="Discard Three of spades").click()
    expect(page.locator(".status")).to_contain_text("Waiting for Bo to draw")
    expect(page.locator(".last-move")).to_contain_text("Ana discarded 3♠")

    # Bo's link opened on the same device: both seats are held, the switcher swaps views.
    page.goto(f"/play#game={game_id}&token={bo}")
    expect(page.locator(".seat-chip.mine")).to_contain_text("Bo")
    page.get_by_role("button", name=re.compile("^Ana, .*switch to this seat")).click()
    expect(page.locator(".hand .card")).to_have_count(3)
    page.get_by_role("button", name=re.compile("^Bo, .*switch to this seat")).click()
    expect(page.locator(".hand .card")).to_have_count(10)

    page.get_by_role("button", name="Draw from stock").click()
    expect(page.locator(".hand .card")).to_have_count(11)
    page.get_by_role("button", name="Hint", exact=True).click()  # legal moves as hints
    expect(page.locator(".hints")).to_contain_text("Lay off 6♥ on m1 (low end)")
    expect(page.locator(".hints")).to_contain_text("Meld A♥ 2♥ 3♥")
    expect(card(page, "6H")).to_have_class(re.compile(r"\bplayable\b"))
    page.get_by_role("button", name="Close hints").click()

    tap_cards(page, "AH", "2H", "3H")
    page.locator('[data-fkey="group"]').click()
    tap_cards(page, "4C", "5C", "6C")
    page.locator('[data-fkey="group"]').click()
    tap_cards(page, "9D", "TD", "JD")
    page.get_by_role("button", name="Lay down 3 melds").click()
    expect(page.locator(".meld")).to_have_count(5)

    # A lay-off at the chosen end of a run.
    tap_cards(page, "6H")
    page.get_by_role("button", name="Lay off 6♥ at the low end of m1").click()
    expect(page.locator('[data-meld="m1"] .card')).to_have_count(5)
    expect(page.locator('[data-meld="m1"] .card').first).to_have_attribute("data-code", "6H")

    # Bo goes out: the hand's scores and the match result.
    tap_cards(page, "KH")
    page.get_by_role("button", name="Discard King of hearts").click()
    dialog = page.get_by_role("dialog")
    expect(dialog).to_contain_text("Hand 1 is over")
    expect(dialog).to_contain_text("Bo went out (went rummy)")
    expect(dialog.locator("tbody tr")).to_have_text([re.compile(r"Ana\s*0\s*0"),
                                                     re.compile(r"Bo\s*50\s*50")])
    expect(dialog).to_contain_text("Match over — Bo wins")
    dialog.get_by_role("button", name="See the table").click()
    scores = page.locator(".scores")
    expect(scores.locator("tbody tr")).to_have_text(re.compile(r"1\s*went rummy\s*0\s*50"))
    expect(scores.locator("tfoot tr")).to_have_text(re.compile(r"Total\s*0\s*50"))
    expect(scores.locator(".result")).to_have_text("Match over — Bo wins (that's you!).")
    expect(page.get_by_role("button", name="New game")).to_be_visible()

    final = public_view(server, game_id)  # the page's taps were the moves
    assert final["status"] == "finished"
    assert final["hands_played"][0]["scores"] == [0, 50]
    assert final["winners"] == [1]


def test_a_rummy51_game_from_the_form_shows_what_each_joker_stands_for(
        page: Any, server: Server) -> None:
    """Created through the form (a knob changed, an arranged deal pasted), played hot-seat:
    a refused opening, an opening with a joker, a joker swap, a set with an open-suit joker,
    and the hand's end. The screenshot for the docs is taken on the way."""
    from playwright.sync_api import expect

    deal = r51_deal(["2S 5S 8S JS 3H 6H 9H QH 4D 7D TD KD AC 4C",   # Ana deals: 14 cards
                     "9H TH JH QH 5D 7D JK KS KH KD 6D 9S 9D"],     # Bo: 13
                    stock_top="2C 6S")

    page.goto("/play")
    page.select_option("#variant", "rummy51")
    expect(page.locator(".knob")).to_have_count(14)  # the form is built from GET /v1/variants
    page.get_by_label("Player 1", exact=True).fill("Ana")
    page.get_by_label("Player 2", exact=True).fill("Bo")
    page.select_option("#dealer", "0")
    page.get_by_text("House rules").click()
    expect(page.locator("#knob-opening_points")).to_have_value("51")
    page.select_option("#knob-match_end", "deals")
    page.fill("#knob-match_end-n", "1")
    page.get_by_text("Arranged deal (optional)").click()
    page.fill("#deals", json.dumps(deal))
    page.get_by_role("button", name="Create the game").click()

    dialog = page.get_by_role("dialog")
    expect(dialog).to_contain_text("Game created")
    expect(dialog.locator(".link-input")).to_have_count(2)  # each seat's link, to share
    link = dialog.get_by_label("Link for Bo's seat").input_value()
    assert re.fullmatch(rf"{re.escape(server.base_url)}/play#game=[^&]+&token=.+", link)
    dialog.get_by_role("button", name="Start playing").click()
    game_id = game_id_of(page)
    created = public_view(server, game_id)
    assert created["variant"] == "rummy51" and created["arranged"] is True
    assert created["rules"]["match_end"] == {"deals": 1}
    assert created["rules"]["opening_points"] == 51

    # The dealer's first action is a discard; then the device is passed to Bo.
    expect(page.locator(".status")).to_contain_text("you start by discarding")
    tap_cards(page, "4C")
    page.get_by_role("button", name="Discard Four of clubs").click()
    page.get_by_role("dialog").get_by_role("button", name="Show Bo's hand").click()
    expect(page.locator(".seat-chip.mine")).to_contain_text("Bo")
    page.get_by_role("button", name="Draw from stock").click()
    expect(page.locator(".hand .card")).to_have_count(14)

    # Too small an opening is refused, with every reason.
    tap_cards(page, "5D", "JK", "7D")
    page.get_by_role("button", name=re.compile("^Meld")).click()
    problem = page.locator(".problem")
    expect(problem).to_contain_text("OPENING_TOO_LOW")
    expect(problem).to_contain_text("R51-OPEN")
    expect(problem).to_contain_text("opening worth 18 points, 51 needed")
    expect(problem).to_contain_text("OPENING_NEEDS_CLEAN_RUN")

    # The opening: three melds in one action; the joker's reading is shown.
    page.locator('[data-fkey="group"]').click()
    tap_cards(page, "9H", "TH", "JH", "QH")
    page.locator('[data-fkey="group"]').click()
    tap_cards(page, "KS", "KH", "KD")
    page.get_by_role("button", name="Lay down 3 melds").click()
    expect(page.locator(".meld")).to_have_count(3)
    expect(problem).to_have_count(0)
    run = page.locator('[data-meld="m1"]')
    expect(run.locator(".readings")).to_have_text("★ Joker stands for 6♦")
    expect(run.get_by_role("img", name="Joker, standing for six of diamonds")).to_be_visible()
    expect(run.locator(".card.joker .corner")).to_have_text("6♦")
    expect(page.locator(".seat-chip.mine")).to_contain_text("opened")
    expect(page.locator(".hand .card")).to_have_count(4)

    page.locator(".table-main").evaluate("el => el.scrollTo(0, 0)")
    SCREENSHOT.parent.mkdir(exist_ok=True)
    page.screenshot(path=str(SCREENSHOT))

    # The 6♦ takes the joker's place; the joker joins 9♠ 9♦ (its suit still open).
    tap_cards(page, "6D")
    page.get_by_role("button", name="Swap 6♦ for the wild in m1").click()
    expect(run.locator(".card.joker")).to_have_count(0)
    assert run.locator(".card").evaluate_all("els => els.map(e => e.dataset.code)") == [
        "5D", "6D", "7D"]
    tap_cards(page, "9S", "9D", "JK")
    page.get_by_role("button", name="Meld 9♠ 9♦ Joker").click()
    expect(page.locator('[data-meld="m4"] .readings')).to_have_text(
        "★ Joker stands for 9 (any suit)")

    # Bo goes out with his last card: the hand is scored, lowest total wins.
    tap_cards(page, "2C")
    page.get_by_role("button", name="Discard Two of clubs").click()
    dialog = page.get_by_role("dialog")
    expect(dialog).to_contain_text("Hand 1 is over")
    expect(dialog).to_contain_text("Bo went out")
    final = public_view(server, game_id)
    ana_score = final["hands_played"][0]["scores"][0]
    expect(dialog.locator("tbody tr").first).to_have_text(
        re.compile(rf"Ana\s*{ana_score}\s*{ana_score}"))
    expect(dialog).to_contain_text("Match over — Bo wins")
    assert final["status"] == "finished" and final["winners"] == [1]


def test_a_score_sheet_for_a_paper_game(page: Any, server: Server) -> None:
    """Pick the variant, type the names, enter a hand as the cards left (typed as people
    write them), see a bad card refused without losing what was typed, enter one as
    points, and see the totals and the winner."""
    from playwright.sync_api import expect

    page.goto("/play")
    page.locator("#sheet-link").click()
    page.select_option("#sheet-variant", "rummy51")
    page.fill("#sheet-player-2", "Dee")
    page.get_by_role("button", name="Start the sheet").click()
    expect(page.locator("#sheet-h")).to_contain_text("Rummy 51: Ana, Bo and Dee")
    sheet_id = page.url.split("#sheet=")[1]

    page.select_option("#sheet-went-out", "Ana")
    page.fill('input[data-player="Bo"]', "as jk 7♦")
    page.fill('input[data-player="Dee"]', "11♥")
    page.locator('#sheet-fact-opened input[value="Ana"]').check()
    page.locator('#sheet-fact-opened input[value="Bo"]').check()
    page.locator("#sheet-add").click()
    expect(page.locator("#sheet-problem")).to_contain_text("Dee's cards: '11♥' is not a card")
    expect(page.locator('input[data-player="Bo"]')).to_have_value("as jk 7♦")
    page.fill('input[data-player="Dee"]', "10♥")
    page.locator("#sheet-add").click()
    totals = page.locator(".sheet-totals td")
    expect(totals).to_have_text(["0", "38", "100"])
    expect(page.locator("#sheet-status")).to_have_text("1 hand played")

    page.locator("#sheet-mode-points").click()
    page.fill('input[data-player="Ana"]', "0")
    page.fill('input[data-player="Bo"]', "12")
    page.fill('input[data-player="Dee"]', "950")
    page.locator("#sheet-add").click()
    expect(totals).to_have_text(["0", "50", "1050"])
    expect(page.locator("#sheet-status")).to_have_text("Match over: Ana wins!")
    expect(page.locator("#sheet-entry")).to_have_count(0)

    sheet = requests.get(f"{server.base_url}/v1/scoresheets/{sheet_id}", timeout=10).json()
    assert sheet["hands"][0]["cards"] == {"Ana": [], "Bo": ["AS", "JK", "7D"], "Dee": ["TH"]}
    assert sheet["winners"] == ["Ana"] and sheet["status"] == "finished"

    page.locator("#sheet-undo").click()  # the last hand taken back: playing again
    expect(totals).to_have_text(["0", "38", "100"])
    expect(page.locator("#sheet-entry")).to_have_count(1)


def test_a_dummy_score_sheet_asks_who_laid_down_their_contract(
        page: Any, server: Server) -> None:
    """The facts a variant asks for come from the sheet: Dummy's contracts, every hand."""
    from playwright.sync_api import expect

    page.goto("/play#sheet")
    page.select_option("#sheet-variant", "dummy")
    page.get_by_role("button", name="Remove player 3").click()
    page.get_by_role("button", name="Start the sheet").click()
    expect(page.locator("#sheet-fact-completed")).to_contain_text("laid down their contract")
    page.select_option("#sheet-went-out", "Ana")
    page.fill('input[data-player="Bo"]', "k♠ 5h JK")
    page.locator('#sheet-fact-completed input[value="Bo"]').check()
    page.locator("#sheet-add").click()
    expect(page.locator(".sheet-totals td")).to_have_text(["0", "65"])  # DUMMY-SCORE
    expect(page.locator(".sheet-hand td small")).to_have_count(2)  # both completed theirs


# --- remote players: open seats, join codes, one browser each -----------------------------------


@pytest.fixture
def players(browser: Any, server: Server) -> Iterator[Callable[[], Player]]:
    from playwright.sync_api import expect

    expect.set_options(timeout=TIMEOUT_MS)
    made: list[Player] = []

    def make() -> Player:
        made.append(Player(browser, server.base_url))
        return made[-1]

    try:
        yield make
    finally:
        for player in made:
            player.close()


THREE_HANDS = [["7H", "8H", "9H", "TH", "QS", "QD", "QC"],  # Ana: two melds after a draw
               ["2S", "5S", "8S", "JS", "3D", "6D", "9D"],  # Bo
               ["AS", "3S", "6S", "9S", "2D", "5D", "8D"]]  # Cy


def test_three_browsers_join_by_code_and_play_a_hand_each_seeing_only_its_own_cards(
        players: Callable[[], Player], server: Server) -> None:
    """Ana creates a game with two open seats; Bo opens the share link, Cy types the code
    (lower case, with a blank) in his own browser; the game deals when Cy sits down, and
    the three play the hand out. No page ever shows another seat's card, and no browser
    sends another seat's token."""
    from playwright.sync_api import expect

    deal = arranged_basic(THREE_HANDS, upcard="2C", stock_top=["4C", "5C", "KC"])
    ana, bo, cy = players(), players(), players()

    page = ana.page
    page.goto("/play")
    page.select_option("#variant", "basic")
    page.get_by_role("button", name="+ Add a player").click()
    page.get_by_label("Player 1", exact=True).fill("Ana")
    page.locator("#open-1").check()
    page.locator("#open-2").check()
    page.select_option("#dealer", "0")
    page.get_by_text("House rules").click()
    page.select_option("#knob-match_end", "deals")
    page.fill("#knob-match_end-n", "1")
    page.get_by_text("Arranged deal (optional)").click()
    page.fill("#deals", json.dumps(deal))
    page.get_by_role("button", name="Create the game").click()
    expect(page.locator("#waiting-h")).to_have_text("Waiting for 2 more players")
    code = page.locator("#join-code").inner_text()
    assert re.fullmatch(r"[2-9A-HJ-NP-Z]{4}-[2-9A-HJ-NP-Z]{4}", code), code
    link = page.locator("#join-share").input_value()
    assert link == f"{server.base_url}/play#join={code}"
    game_id = game_id_of(page)
    assert public_view(server, game_id)["status"] == "waiting"

    # Bo opens the link: the preview says what he joins, with the arranged-deal warning
    bo.page.goto(link)
    expect(bo.page.locator("#joining-h")).to_have_text("Basic rummy with Ana")
    expect(bo.page.locator(".warning")).to_contain_text("arranged by its creator")
    bo.page.fill("#join-name", "Bo")
    bo.page.get_by_role("button", name="Join the game").click()
    expect(bo.page.locator("#waiting-h")).to_have_text("Waiting for 1 more player")
    expect(page.locator("#waiting-h")).to_have_text("Waiting for 1 more player")  # live

    # Cy types the code as he heard it
    cy.page.goto("/play")
    cy.page.fill("#join-link", code.lower().replace("-", " "))
    cy.page.locator("#join-open").click()
    cy.page.fill("#join-name", "Cy")
    cy.page.get_by_role("button", name="Join the game").click()

    # dealt: each browser holds its own seat's hand, and only its own
    for player, seat in ((ana, 0), (bo, 1), (cy, 2)):
        expect(player.page.locator(".hand .card")).to_have_count(7)
        assert sorted(player.hand()) == sorted(THREE_HANDS[seat])
        player.shows_none_of([c for s, h in enumerate(THREE_HANDS) if s != seat for c in h])
        assert player.page.url.endswith(f"#game={game_id}&seat={seat}")
    view = public_view(server, game_id)
    assert view["status"] == "playing" and [s["name"] for s in view["seats"]] == [
        "Ana", "Bo", "Cy"]

    # Bo (left of the dealer) and Cy draw and throw the card drawn; Ana goes out
    expect(bo.page.locator(".status")).to_contain_text("Your turn: draw")
    bo.page.get_by_role("button", name="Draw from stock").click()
    tap_cards(bo.page, "4C")
    bo.page.get_by_role("button", name="Discard Four of clubs").click()
    expect(cy.page.locator(".status")).to_contain_text("Your turn: draw")
    cy.page.get_by_role("button", name="Draw from stock").click()
    tap_cards(cy.page, "5C")
    cy.page.get_by_role("button", name="Discard Five of clubs").click()
    expect(page.locator(".status")).to_contain_text("Your turn: draw")
    for player, seat in ((ana, 0), (bo, 1), (cy, 2)):
        player.shows_none_of([c for s, h in enumerate(THREE_HANDS) if s != seat for c in h])
    page.get_by_role("button", name="Draw from stock").click()
    tap_cards(page, "7H", "8H", "9H", "TH")
    page.locator('[data-fkey="group"]').click()
    tap_cards(page, "QS", "QD", "QC")
    page.get_by_role("button", name="Lay down 2 melds").click()
    tap_cards(page, "KC")
    page.get_by_role("button", name="Discard King of clubs").click()
    for player in (ana, bo, cy):
        dialog = player.page.get_by_role("dialog")
        expect(dialog).to_contain_text("Hand 1 is over")
        expect(dialog).to_contain_text("Ana went out")
        expect(dialog).to_contain_text("Match over — Ana wins")
    final = public_view(server, game_id)
    assert final["status"] == "finished" and final["winners"] == [0]

    # each device kept its own seat's token (the creator also the host token), and sent
    # no other: not in a header, not in a URL
    tokens = {}
    for player, seat in ((ana, 0), (bo, 1), (cy, 2)):
        saved = player.stored()[game_id]
        assert list(saved["tokens"]) == [str(seat)], saved
        tokens[seat] = saved["tokens"][str(seat)]
    host = ana.stored()[game_id]["host"]
    assert host and "host" not in bo.stored()[game_id] and "host" not in cy.stored()[game_id]
    for player, seat in ((ana, 0), (bo, 1), (cy, 2)):
        api_calls = [(url, auth) for url, auth in player.sent if "/v1/" in url]
        assert any(auth == f"Bearer {tokens[seat]}" for _url, auth in api_calls)
        for url, auth in api_calls:
            assert auth in (None, f"Bearer {tokens[seat]}"), (url, auth)
            assert not any(t in url for t in (*tokens.values(), host)), url


def arranged_basic(hands: list[list[str]], upcard: str, stock_top: list[str]
                   ) -> dict[str, Any]:
    """A 52-card deal: the hands, the upcard, the stock's top cards, then the rest."""
    rest = [r + s for s in "SHDC" for r in "A23456789TJQK"]
    for c in [*(c for h in hands for c in h), upcard, *stock_top]:
        rest.remove(c)
    return {"hands": hands, "discard": [upcard], "stock": [*stock_top, *rest]}


# --- leaving a match, rematch, clocks, pass and play ---------------------------------------------


def walkthrough(server: Server, **changes: Any) -> tuple[str, list[str]]:
    body = json.loads((ROOT / "examples" / "walkthrough-game.json").read_text())
    body.update(changes)
    created = create(server, body)
    return created["game_id"], [seat["token"] for seat in created["seats"]]


def test_abort_and_resign_ask_first_and_a_rematch_opens_the_next_match(
        page: Any, server: Server) -> None:
    from playwright.sync_api import expect

    game_id, (ana, _bo) = walkthrough(server)
    page.goto(f"/play#game={game_id}&token={ana}")
    expect(page.locator(".hand .card")).to_have_count(10)
    page.get_by_role("button", name="Abort").click()
    dialog = page.get_by_role("dialog")
    expect(dialog).to_contain_text("Abort the game?")
    dialog.get_by_role("button", name="Keep playing").click()  # no: nothing happens
    expect(dialog).to_have_count(0)
    assert public_view(server, game_id)["status"] == "playing"
    page.get_by_role("button", name="Abort").click()
    page.get_by_role("dialog").get_by_role("button", name="Abort the game").click()
    expect(page.locator(".status")).to_have_text("This game was called off: no winner.")
    assert public_view(server, game_id)["status"] == "aborted"
    expect(page.get_by_role("button", name="Rematch")).to_have_count(0)

    # after the first move there is no abort, only resign
    game_id, (ana, _bo) = walkthrough(server)
    page.goto(f"/play#game={game_id}&token={ana}")
    page.get_by_role("button", name="Draw from stock").click()
    expect(page.locator(".hand .card")).to_have_count(11)
    expect(page.get_by_role("button", name="Abort")).to_have_count(0)
    page.get_by_role("button", name="Resign").click()
    page.get_by_role("dialog").get_by_role("button", name="Resign").click()
    expect(page.locator(".status")).to_have_text("Ana resigned. Match over — Bo wins.")
    old = public_view(server, game_id)
    assert old["end"] == {"reason": "resigned", "seat": 0} and old["winners"] == [1]

    page.get_by_role("button", name="Rematch").click()
    expect(page.locator(".hand .card")).to_have_count(10)
    new_id = game_id_of(page)
    assert new_id != game_id and public_view(server, game_id)["rematch"] == new_id
    assert page.url.endswith(f"#game={new_id}&seat=0")
    new = public_view(server, new_id)
    assert new["status"] == "playing" and [s["name"] for s in new["seats"]] == ["Ana", "Bo"]
    saved = page.evaluate("() => JSON.parse(localStorage.getItem('rummy-referee.games.v1'))")
    assert list(saved[new_id]["tokens"]) == ["0"]
    assert saved[new_id]["tokens"]["0"].startswith(f"{new_id}.0.")


def test_pass_and_play_takes_the_hand_off_the_page_while_the_device_is_handed_over(
        page: Any, server: Server) -> None:
    from playwright.sync_api import expect

    game_id, (ana, bo) = walkthrough(server)
    page.goto(f"/play#game={game_id}&token={ana}")
    expect(page.locator(".hand .card")).to_have_count(10)
    page.goto(f"/play#game={game_id}&token={bo}")  # both seats on this device
    expect(page.locator(".seat-chip.mine")).to_contain_text("Bo")
    page.get_by_role("button", name=re.compile("^Ana, .*switch to this seat")).click()
    expect(page.locator(".hand .card")).to_have_count(10)
    page.get_by_role("button", name="Draw from stock").click()
    expect(page.locator(".hand .card")).to_have_count(11)
    ana_hand = [c for c in page.locator(".hand .card").evaluate_all(
        "els => els.map(e => e.dataset.code)") if c != "KS"]
    tap_cards(page, "KS")
    page.get_by_role("button", name="Discard King of spades").click()

    dialog = page.get_by_role("dialog")
    expect(dialog).to_contain_text("Bo's turn")
    expect(page.locator(".handover")).to_be_visible()
    expect(page.locator(".hand .card")).to_have_count(0)
    html = page.content()
    for code in ana_hand:  # Ana's cards are nowhere on the page, not even hidden
        assert f'data-code="{code}"' not in html and card_name(code) not in html, code
    dialog.get_by_role("button", name="Show Bo's hand").click()
    expect(page.locator(".hand .card")).to_have_count(10)
    expect(page.locator(".seat-chip.mine")).to_contain_text("Bo")
    expect(page.locator(".status")).to_contain_text("Your turn: draw")


class InProcess:
    """The app in this process (werkzeug, a thread per request) on the session Redis, so
    that a test can move its store's clock (``clock_offset_ms``) instead of waiting."""

    def __init__(self, redis_url: str) -> None:
        from werkzeug.serving import make_server

        from service.app import create_app
        from service.config import Settings

        self.app = create_app(Settings(redis_url=redis_url, rate_limits=(),
                                       create_rate_limits=(), verify_rate_limits=(),
                                       join_rate_limits=(), sse_heartbeat_seconds=1))
        self.store = self.app.extensions["referee"].store
        self.server = make_server("127.0.0.1", 0, self.app, threaded=True)
        self.base_url = f"http://127.0.0.1:{self.server.server_port}"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def stop(self) -> None:
        self.server.shutdown()
        self.thread.join(timeout=10)


@pytest.fixture
def in_process(redis_server: RedisServer) -> Iterator[InProcess]:
    started = InProcess(redis_server.url)
    try:
        yield started
    finally:
        started.stop()


def test_the_turn_clock_counts_down_and_the_other_seat_claims_the_match(
        browser: Any, in_process: InProcess) -> None:
    from playwright.sync_api import expect

    body = json.loads((ROOT / "examples" / "walkthrough-game.json").read_text())
    body["rules"]["clock"] = {"turn_seconds": 90}
    resp = requests.post(f"{in_process.base_url}/v1/games", json=body, timeout=10)
    assert resp.status_code == 201, resp.text
    game_id = resp.json()["game_id"]
    bo = resp.json()["seats"][1]["token"]
    expect.set_options(timeout=TIMEOUT_MS)
    player = Player(browser, in_process.base_url)
    page = player.page
    try:
        page.goto(f"/play#game={game_id}&token={bo}")  # Ana is to draw, on the clock
        clock = page.locator(".clock-text")
        expect(clock).to_have_text(re.compile(r"^⏱ Ana: 1:[23]\d left$"))
        expect(page.get_by_role("button", name="Claim victory")).to_have_count(0)

        in_process.store.clock_offset_ms = 91_000  # the referee's clock: past the deadline
        page.reload()
        expect(clock).to_have_text("⏱ Ana's time is up")
        page.get_by_role("button", name="Claim victory").click()
        expect(page.locator(".status")).to_have_text("Ana ran out of time. Match over — Bo "
                                                     "wins (that's you!).")
        view = requests.get(f"{in_process.base_url}/v1/games/{game_id}", timeout=10).json()
        assert view["end"] == {"reason": "timeout", "seat": 0} and view["winners"] == [1]
        expect(clock).to_have_count(0)
    finally:
        in_process.store.clock_offset_ms = 0
        player.close()


# --- gin rummy at the table ----------------------------------------------------------------------


def test_a_gin_hand_passed_knocked_and_laid_out_by_tapping(page: Any, server: Server) -> None:
    """Both pass the first upcard, Bo draws, puts three melds aside and knocks; Ana (on
    the same device, handed over) lays out her melds and lays off on Bo's run; the hand's
    result and each seat's deadwood are shown."""
    from playwright.sync_api import expect

    from tests.support.gin_game import DEFENDER, KNOCKER, deal

    created = create(server, {"variant": "gin", "players": ["Ana", "Bo"], "dealer": 0,
                              "rules": {"match_end": {"deals": 1}},
                              "deals": [deal((DEFENDER, KNOCKER), "JC", ["2C"])]})
    game_id = created["game_id"]
    ana, bo = (seat["token"] for seat in created["seats"])
    page.goto(f"/play#game={game_id}&token={ana}")
    expect(page.locator(".hand .card")).to_have_count(10)
    page.goto(f"/play#game={game_id}&token={bo}")
    expect(page.locator(".status")).to_contain_text("take the upcard J♣ or pass")
    expect(page.get_by_role("button", name="Draw from stock")).to_have_count(0)
    page.get_by_role("button", name="Pass").click()
    page.get_by_role("dialog").get_by_role("button", name="Show Ana's hand").click()
    expect(page.locator(".status")).to_contain_text("take the upcard J♣ or pass")
    page.get_by_role("button", name="Pass").click()
    page.get_by_role("dialog").get_by_role("button", name="Show Bo's hand").click()
    page.get_by_role("button", name="Draw from stock").click()
    expect(page.locator(".hand .card")).to_have_count(11)

    tap_cards(page, "AH", "2H", "3H")
    page.get_by_role("button", name=re.compile("^Put the selected cards aside")).click()
    tap_cards(page, "4C", "4D", "4S")
    page.locator('[data-fkey="group"]').click()
    tap_cards(page, "7S", "8S", "9S")
    page.locator('[data-fkey="group"]').click()
    expect(page.locator(".tray")).to_contain_text("Meld 3")
    tap_cards(page, "KD")
    page.get_by_role("button", name="Knock, discarding King of diamonds").click()
    page.get_by_role("dialog").get_by_role("button", name="Show Ana's hand").click()
    expect(page.locator(".status")).to_contain_text("Bo knocked with 2 deadwood.")
    expect(page.locator(".meld")).to_have_count(3)  # Bo's melds, on the table

    tap_cards(page, "7C", "7D", "7H")
    page.locator('[data-fkey="group"]').click()
    tap_cards(page, "JS", "QS", "KS")
    page.locator('[data-fkey="group"]').click()
    tap_cards(page, "4H", "5H")
    page.get_by_role("button", name="Lay off 4♥ 5♥ at the high end of m1").click()
    page.get_by_role("button", name="Lay out 2 melds + 1 lay-off").click()
    dialog = page.get_by_role("dialog")
    expect(dialog).to_contain_text("Bo knocked: deadwood 2 against 12.")
    expect(dialog.locator("tbody tr")).to_have_text([re.compile(r"Ana\s*12\s*0\s*0"),
                                                     re.compile(r"Bo\s*2\s*10\s*10")])
    final = public_view(server, game_id)
    assert final["status"] == "finished" and final["hands_played"][0]["result"] == "knock"
    assert final["winners"] == [1]
