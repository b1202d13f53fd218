"""Rule ids: every id the service can cite is a member of ``RuleId``, each member is stated
in the project's rules reference (``docs/rules.md``), and every refusal names its rule as a
member, never as a string written or built in place (so that searching for the member finds
every place that enforces it).

The refusals are read with ``ast``: the rule argument of every ``Violation`` and ``Reason``
(and every ``Knob``) under ``service/`` must not be a string literal, an f-string or a
string made of pieces.
"""

from __future__ import annotations

import ast
import json
import re
from pathlib import Path

import pytest

from service.rules import RuleId
from service.rules.ruleset import default_rules
from service.rules.variants import VARIANTS

ROOT = Path(__file__).resolve().parents[2]
SERVICE = ROOT / "service"
REFERENCE = ROOT / "docs" / "rules.md"

ID = re.compile(r"\b(?:C|BASIC|R51|L14|DUMMY|WROTHAM|GIN)(?:-[A-Z0-9]+)+\b")
"""A rule id as the reference writes it (``R51-OPEN``)."""
STATED = re.compile(r"^- \*\*([A-Z0-9-]+)\*\* ", re.MULTILINE)
"""A rule stated in the reference: a list item opening with its id in bold."""

RULE_ARGUMENT = {"Violation": 1, "Reason": 1, "Knob": 2}
"""Where each call takes its rule: the position of the argument."""


def reference() -> str:
    return REFERENCE.read_text(encoding="utf-8")


def test_member_names_are_their_ids() -> None:
    assert [m.name for m in RuleId if m.name != m.value.replace("-", "_")] == []


def test_every_member_is_stated_in_the_reference() -> None:
    stated = STATED.findall(reference())
    assert sorted(set(stated)) == sorted(stated), "a rule stated twice"
    assert [m.value for m in RuleId if m.value not in stated] == []


def test_every_id_in_the_reference_is_a_member() -> None:
    members = {m.value for m in RuleId}
    assert sorted({i for i in ID.findall(reference()) if i not in members}) == []


def test_every_rule_is_stated_in_one_to_three_lines() -> None:
    text = reference()
    items = re.findall(r"^- \*\*[A-Z0-9-]+\*\* .*?(?=^- |^$|^#)", text,
                       re.MULTILINE | re.DOTALL)
    assert len(items) == len(RuleId)
    assert [i.split("**")[1] for i in items if not 1 <= len(i.strip().splitlines()) <= 3] == []


def _knob_tables() -> dict[str, list[tuple[str, object, str]]]:
    """Each variant's table of knobs in the reference: (knob, default, rule) rows."""
    tables: dict[str, list[tuple[str, object, str]]] = {}
    current: list[tuple[str, object, str]] | None = None
    for line in reference().splitlines():
        heading = re.match(r"^### `([a-z0-9]+)`", line)
        if heading:
            current = tables.setdefault(heading.group(1), [])
            continue
        row = re.match(r"^\| `([a-z_]+)` \| `(.*?)` \| .* \| ([A-Z0-9-]+) \|$", line)
        if row and current is not None:
            current.append((row.group(1), json.loads(row.group(2)), row.group(3)))
    return tables


def test_the_reference_lists_every_variant_s_knobs_with_their_defaults() -> None:
    expected = {v.id: [(name, value, v.knob(name).rule.value)
                       for name, value in default_rules(v).items()]
                for v in VARIANTS.values()}
    assert _knob_tables() == expected


def _built_rules(source: str) -> list[str]:
    """``line: call`` of each call that gives its rule as a string made in place."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if not isinstance(node, ast.Call):
            continue
        name = node.func.id if isinstance(node.func, ast.Name) else (
            node.func.attr if isinstance(node.func, ast.Attribute) else "")
        at = RULE_ARGUMENT.get(name)
        if at is None:
            continue
        rule = node.args[at] if len(node.args) > at else next(
            (k.value for k in node.keywords if k.arg == "rule"), None)
        if rule is not None and isinstance(rule, ast.Constant | ast.JoinedStr | ast.BinOp):
            found.append(f"{node.lineno}: {ast.unparse(node)[:80]}")
    return found


@pytest.mark.parametrize("path", [pytest.param(p, id=str(p.relative_to(SERVICE)))
                                  for p in sorted(SERVICE.rglob("*.py"))])
def test_no_rule_is_cited_as_a_string(path: Path) -> None:
    assert _built_rules(path.read_text(encoding="utf-8")) == []


@pytest.mark.parametrize(("source", "bad"), [
    pytest.param('Violation(Code.X, "R51-OPEN", N_("no"))', True, id="a literal id"),
    pytest.param('Violation(Code.X, f"{self.prefix}-WILDS", N_("no"))', True,
                 id="an id built by an f-string"),
    pytest.param('Reason(Code.X, prefix + "-FIRST", N_("no"))', True,
                 id="an id built by concatenation"),
    pytest.param('Knob("ace", "enum", "C-RUN", "…")', True, id="a knob's literal id"),
    pytest.param('Violation(Code.X, RuleId.R51_OPEN, N_("no"))', False, id="a member"),
    pytest.param('Reason(r.code, r.rule, N_("meld {n}: {r}"))', False, id="a rule passed on"),
    pytest.param('raise Violation(Code.X, self.variant.end_rule, "no")', False,
                 id="a variant's rule"),
])
def test_the_string_check_itself(source: str, bad: bool) -> None:
    assert bool(_built_rules(source)) is bad


def test_the_shapes_and_variants_cite_members() -> None:
    """The ids a variant's data names for its common steps are members (a refused set, run
    or wild limit, going out, the end of the match)."""
    for variant in VARIANTS.values():
        rules = (variant.set_rule, variant.run_rule, variant.wild_rule, variant.out_rule,
                 variant.end_rule)
        assert all(type(rule) is RuleId for rule in rules), variant.id
        assert all(type(k.rule) is RuleId for k in variant.knobs.values()), variant.id
