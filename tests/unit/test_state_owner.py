"""BindingState owns the lifecycle rules (issue 26): other modules never write its fields.

Every module of ``_internal/client`` is parsed (nothing imported); an assignment
to one of the state's lifecycle fields through anything but ``self`` inside
``state.py`` fails, so a new rule lands as a verb of ``BindingState``.
"""

from __future__ import annotations

import ast
from pathlib import Path

import mcpclient

from ..support.sources import parsed_file

CLIENT = Path(mcpclient.__file__).resolve().parent / "_internal" / "client"
FIELDS = {
    "state",
    "last_change",
    "conn",
    "lost",
    "protocol",
    "first_server",
    "failure",
    "closing",
    "reconnect_number",
    "refresh_when_ready",
    "before_auth",
    "revive_at",
    "revivals",
    "forked",
}
HOLDERS = {"st", "state", "_st"}  # how the parts name their BindingState


def _holder(node: ast.expr) -> str | None:
    if isinstance(node, ast.Name) and node.id in HOLDERS:
        return node.id
    if isinstance(node, ast.Attribute) and node.attr == "_st":
        return "self._st"
    return None


def writes(tree: ast.AST) -> list[tuple[int, str]]:
    """(line, field) of every assignment to a state field through a holder."""
    found = []
    for node in ast.walk(tree):
        targets: list[ast.expr] = []
        if isinstance(node, ast.Assign):
            targets = list(node.targets)
        elif isinstance(node, ast.AugAssign | ast.AnnAssign):
            targets = [node.target]
        for target in targets:
            for part in ast.walk(target):
                if (
                    isinstance(part, ast.Attribute)
                    and part.attr in FIELDS
                    and _holder(part.value) is not None
                ):
                    found.append((node.lineno, part.attr))
    return found


def test_no_module_but_state_writes_the_lifecycle_fields() -> None:
    offenders = {}
    for path in sorted(CLIENT.glob("**/*.py")):
        if path.name == "state.py":
            continue
        found = writes(parsed_file(path))
        if found:
            offenders[path.name] = found
    assert offenders == {}, f"write through a BindingState verb instead: {offenders}"


def test_the_checker_sees_each_form_of_write() -> None:
    code = "st.conn = c\nself._st.failure = e\nconn, st.lost = st.lost, None\nstate.revivals += 1\n"
    assert [f for _, f in writes(ast.parse(code))] == ["conn", "failure", "lost", "revivals"]
    assert writes(ast.parse("other.conn = c\nst.definition = d\n")) == []
