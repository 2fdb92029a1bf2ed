"""Variable expansion, in each host's own syntax.

Syntaxes (``SYNTAXES``):

* ``"none"``: nothing is expanded (Claude Desktop, Codex, Zed, FastMCP).
* ``"posix"`` (Claude Code): ``${VAR}`` and ``${VAR:-default}`` (the default
  also replaces an empty variable, as in the shell).
* ``"shell"`` (Gemini CLI): ``$VAR`` and ``${VAR}``.
* ``"env"`` (Cline): ``${env:VAR}``; Cline's dialect applies it only to
  ``env``, ``url`` and ``headers``.
* ``"windsurf"``: ``${env:VAR}`` and ``${file:/path}`` (the file's text,
  whitespace trimmed at both ends; ``~`` is the home, a relative path is
  taken from the configuration's folder).
* ``"editor"`` (Cursor): ``${env:VAR}``, ``${workspaceFolder}``,
  ``${workspaceFolderBasename}``, ``${userHome}``, ``${pathSeparator}`` and ``${/}``.
* ``"vscode"``: the editor variables plus ``${input:id}``, answered by the
  ``inputs=`` argument of :func:`~mcpclient.config.load` (a mapping of id to
  value, or a callable ``(id, spec) -> str`` where ``spec`` is the file's
  ``inputs`` entry); each id is asked once per load.

An unset variable (or an unanswered input, or an unreadable file) is an
error with ``strict=True``; with ``strict=False`` it becomes ``""`` and a
warning, and is kept in :attr:`Expander.missing` so that a caller that would
send the value (the CLI) can refuse. Messages name the variable, never a
value. With ``references=True`` nothing is looked up: each reference becomes
a marker of :mod:`mcpclient.config.refs` (what ``dump`` converts).
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from types import MappingProxyType
from typing import Any

from mcpclient.config import refs
from mcpclient.config.files import FileReadError, read_regular
from mcpclient.config.problems import Problems

__all__ = ["SYNTAXES", "Expander", "InputsArg"]

#: A caller's answers to VS Code ``${input:id}`` prompts.
InputsArg = Mapping[str, str] | Callable[[str, Mapping[str, Any]], str | None] | None

SYNTAXES = ("none", "posix", "shell", "env", "windsurf", "editor", "vscode")
#: The largest ``${file:}`` read.
MAX_FILE_BYTES = 64 * 1024

_POSIX = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}")
_SHELL = re.compile(r"\$(?:([A-Za-z_][A-Za-z0-9_]*)|\{([A-Za-z_][A-Za-z0-9_]*)\})")
_EDITOR = re.compile(r"\$\{([^}]*)\}")


class Expander:
    """Expands the strings of one load.

    Thread safety: not thread safe; one per load.
    """

    def __init__(
        self,
        syntax: str,
        problems: Problems,
        *,
        env: Mapping[str, str] | None,
        strict: bool,
        workspace: Path,
        home: Path,
        inputs: InputsArg = None,
        input_specs: Mapping[str, Mapping[str, Any]] | None = None,
        references: bool = False,
    ) -> None:
        if syntax not in SYNTAXES:
            raise ValueError(f"unknown expansion syntax {syntax!r}")
        self.syntax = syntax
        self.problems = problems
        self.env = os.environ if env is None else env
        self.strict = strict
        self.workspace = workspace
        self.home = home
        self.inputs = inputs
        self.input_specs = dict(input_specs or {})
        self.references = references
        self._answers: dict[str, str] = {}
        #: (path, kind, name) of each reference left unresolved (``strict=False``).
        self.missing: list[tuple[tuple[str | int, ...], str, str]] = []

    def expand(self, text: str, path: Sequence[str | int]) -> str:
        """``text`` with its variables replaced; problems recorded at ``path``."""
        if self.syntax == "none" or "$" not in text:
            return text
        if self.syntax == "posix":
            return _POSIX.sub(lambda m: self._posix(m, path), text)
        if self.syntax == "shell":
            return _SHELL.sub(lambda m: self._variable(m.group(1) or m.group(2), path), text)
        return _EDITOR.sub(lambda m: self._editor(m, path), text)

    def _missing(
        self, what: str, path: Sequence[str | int], kind: str, name: str, why: str = "is not set"
    ) -> str:
        self.missing.append((tuple(path), kind, name))
        if self.strict:
            self.problems.error(path, f"{what} {why}")
        else:
            self.problems.warn(path, f"{what} {why}; expanded to an empty string")
        return ""

    def _variable(self, name: str, path: Sequence[str | int]) -> str:
        if self.references:
            return refs.marker(refs.ENV, name)
        value = self.env.get(name)
        if value is None:
            return self._missing(f"environment variable {name}", path, refs.ENV, name)
        return value

    def _file(self, name: str, path: Sequence[str | int]) -> str:
        if self.references:
            return refs.marker(refs.FILE, name)
        file_path = Path(os.path.expanduser(name))
        if not file_path.is_absolute():
            file_path = self.workspace / file_path
        try:
            data = read_regular(file_path, MAX_FILE_BYTES)
        except FileNotFoundError:
            why = "cannot be read (FileNotFoundError)"
            return self._missing(f"file {name}", path, refs.FILE, name, why)
        except FileReadError as exc:
            if exc.too_large:
                self.problems.error(path, f"file {name} is larger than {MAX_FILE_BYTES} bytes")
                return ""
            why = f"cannot be read ({exc.reason})"
            return self._missing(f"file {name}", path, refs.FILE, name, why)
        try:
            return data.decode("utf-8").strip()
        except UnicodeDecodeError:
            self.problems.error(path, f"file {name} is not UTF-8 text")
            return ""

    def _posix(self, match: re.Match[str], path: Sequence[str | int]) -> str:
        name, default = match.group(1), match.group(2)
        if self.references:
            return refs.marker(refs.ENV, name, default)
        value = self.env.get(name)
        # POSIX ":-": the default stands in for an unset *or empty* variable.
        if value and default is not None:
            return value
        if default is not None:
            return default
        if value is not None:
            return value
        return self._missing(f"environment variable {name}", path, refs.ENV, name)

    def _editor(self, match: re.Match[str], path: Sequence[str | int]) -> str:
        body = match.group(1)
        if body.startswith("env:"):
            return self._variable(body[4:], path)
        if self.syntax == "windsurf" and body.startswith("file:"):
            return self._file(body[5:], path)
        if self.syntax in ("env", "windsurf"):
            return match.group(0)
        if self.syntax == "vscode" and body.startswith("input:"):
            return self._input(body[6:], path)
        simple = {
            "workspaceFolder": str(self.workspace),
            "workspaceFolderBasename": self.workspace.name,
            "userHome": str(self.home),
            "pathSeparator": os.sep,
            "/": os.sep,
        }
        if body in simple:
            return simple[body]
        self.problems.warn(path, f"unknown variable ${{{body}}}, left as written")
        return match.group(0)

    def _input(self, ident: str, path: Sequence[str | int]) -> str:
        if ident in self._answers:
            return self._answers[ident]
        spec = self.input_specs.get(ident)
        if spec is None:
            self.problems.error(path, f"${{input:{ident}}} names no entry of inputs")
            self._answers[ident] = ""
            return ""
        if self.references:
            return refs.marker(refs.INPUT, ident)
        answer: object = None
        if callable(self.inputs):
            answer = self.inputs(ident, MappingProxyType(dict(spec)))
        elif self.inputs is not None:
            answer = self.inputs.get(ident)
        if answer is None:
            default = spec.get("default")
            answer = default if isinstance(default, str) else None
        if answer is None:
            answer = self._missing(f"input {ident}", path, refs.INPUT, ident)
        elif not isinstance(answer, str):
            self.problems.error(path, f"the answer to input {ident} must be a str")
            answer = ""
        assert isinstance(answer, str)
        self._answers[ident] = answer
        return answer
