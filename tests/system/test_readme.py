"""The README and the docs are honest: the README's commands are the ones CI runs, its curl
walkthrough works, and the docs say what the software is and does, not its history."""

from __future__ import annotations

import json
import os
import re
import subprocess
from pathlib import Path

import pytest
from flask.testing import FlaskClient

from service.redis_server import RedisServer
from tests.support.serving import served

ROOT = Path(__file__).resolve().parents[2]
README = (ROOT / "README.md").read_text()


def test_quickstart_has_the_two_commands_and_ci_runs_the_test_command_verbatim() -> None:
    quickstart = README.split("## Quickstart", 1)[1].split("##", 1)[0]
    commands = [line.split("#", 1)[0].strip() for line in quickstart.splitlines()
                if line.startswith("python3 ")]
    assert commands == ["python3 dev.py serve", "python3 dev.py test"]
    assert "python3 dev.py test" in (ROOT / ".ci" / "run").read_text().splitlines()


def _walkthrough() -> str:
    block = re.search(r"<!-- walkthrough:start -->\n```sh\n(.*?)```\n<!-- walkthrough:end -->",
                      README, re.S)
    assert block, "README lost its walkthrough block"
    return block.group(1)


@pytest.mark.slow
def test_the_curl_walkthrough_runs_against_the_served_app(
        redis_server: RedisServer, redis_url: str, tmp_path: Path) -> None:
    with served(tmp_path, redis_url, workers=1) as server:
        done = subprocess.run(["bash", "-euo", "pipefail", "-c", _walkthrough()], cwd=ROOT,
                              env=dict(os.environ, BASE=server.base_url),
                              capture_output=True, text=True, timeout=60)
        assert done.returncode == 0, done.stderr
        lines = done.stdout.splitlines()
        assert "(422, 'NOT_YOUR_TURN', 'C-TURN')" in lines
        assert lines[-1] == "('finished', [0, 50], [1])"
        assert "['discard', 'hand_end', 'game_end']" in lines
        assert "304" in lines


# --- the docs: for users, as the software is ----------------------------------------------

DOCS = [ROOT / "README.md", ROOT / "bench" / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
HISTORY = re.compile(r"\brounds? \d+|\bissues? #?\d+|ROUNDS\.md", re.I)


def test_the_readme_is_a_page_of_at_most_300_lines() -> None:
    assert len(README.splitlines()) <= 300


@pytest.mark.parametrize("page", DOCS, ids=lambda p: str(p.relative_to(ROOT)))
def test_no_doc_tells_history(page: Path) -> None:
    """History is what git log is for: no doc names a benchmark round or an issue, or
    links to a log of rounds."""
    found = [f"{n}: {line}" for n, line in enumerate(page.read_text().splitlines(), 1)
             if HISTORY.search(line)]
    assert not found, found
    assert not (ROOT / "bench" / "ROUNDS.md").exists()


LINK = re.compile(r"\]\(([^)#\s]*)(?:#([^)\s]*))?\)")


def _anchors(page: Path) -> set[str]:
    """The anchors of a Markdown page's headings, as GitHub makes them."""
    headings = re.findall(r"^#+ (.*)$", page.read_text(), re.M)
    return {re.sub(r"[^\w\- ]", "", h.strip().lower()).replace(" ", "-") for h in headings}


@pytest.mark.parametrize("page", DOCS, ids=lambda p: str(p.relative_to(ROOT)))
def test_every_link_between_the_docs_resolves(page: Path) -> None:
    """Relative links name files of the repository, and their anchors headings of the page
    linked. (``docs/rules.md``, the rules reference, is checked by the test of the rule ids
    it documents.)"""
    broken = []
    for target, anchor in LINK.findall(page.read_text()):
        if "://" in target:
            continue
        linked = (page.parent / target).resolve() if target else page
        if linked == ROOT / "docs" / "rules.md":
            continue
        if not linked.exists() or (anchor and anchor not in _anchors(linked)):
            broken.append(f"{target}#{anchor}" if anchor else target)
    assert not broken, broken


def test_the_readme_links_every_page_of_the_docs() -> None:
    linked = {(ROOT / t).resolve() for t, _ in LINK.findall(README) if t and "://" not in t}
    assert {ROOT / "docs" / "rules.md", ROOT / "bench" / "README.md", *DOCS[2:]} <= linked


def _table_under(page: Path, heading: str) -> list[list[str]]:
    """The rows of the first table in the ``heading`` section of ``page``, cells stripped."""
    section = page.read_text().split(f"\n{heading}\n", 1)[1].split("\n#", 1)[0]
    rows = [line for line in section.splitlines() if line.startswith("|")]
    return [[cell.strip() for cell in row.strip("|").split("|")] for row in rows[2:]]


def _documented_default(value: object) -> str | None:
    """How the configuration table writes a setting's default (None: in words)."""
    if isinstance(value, bool):
        return "1" if value else "0"
    if isinstance(value, float):
        return f"{value:g}"
    if isinstance(value, tuple):
        return ";".join(value) if value else None
    if value is None:
        return None
    return str(value)


def test_the_configuration_table_names_every_setting_with_its_default() -> None:
    """docs/operations.md's table is the list of settings: every variable
    ``Settings.from_env`` reads, and no other, each with the default it has."""
    from service.config import Settings

    rows = {row[0].strip("`"): row[1]
            for row in _table_under(ROOT / "docs" / "operations.md", "## Configuration")}
    variables = Settings.env_vars()
    assert set(rows) == set(variables.values()), (
        f"add a row to the table under '## Configuration' in docs/operations.md for "
        f"{sorted(set(variables.values()) - set(rows))}; remove the rows of "
        f"{sorted(set(rows) - set(variables.values()))}")
    defaults = Settings(redis_url="redis://localhost")  # a Redis mode is required
    for name, var in variables.items():
        value = None if name == "redis_url" else getattr(defaults, name)
        if name == "workers":
            continue  # the number of CPUs, in words
        written = _documented_default(value)
        if written is not None:
            assert f"`{written}`" in rows[var], (var, rows[var], written)


def test_the_api_page_lists_every_knob_of_every_variant_with_its_default(
        client: FlaskClient) -> None:
    """docs/api.md has a table per variant: each knob of ``GET /v1/variants`` with its
    default (as JSON) and its rule id, and no other knob."""
    api = ROOT / "docs" / "api.md"
    for variant in client.get("/v1/variants").get_json()["variants"]:
        rows = {row[0].strip("`"): row for row in _table_under(api, f"### `{variant['id']}`")}
        knobs = {knob["name"]: knob for knob in variant["knobs"]}
        assert set(rows) == set(knobs), (variant["id"], set(rows) ^ set(knobs))
        for name, knob in knobs.items():
            assert rows[name][1] == f"`{json.dumps(knob['default'])}`", (variant["id"], name)
            assert rows[name][3] == knob["rule"], (variant["id"], name)
