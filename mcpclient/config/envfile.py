"""Reading an ``envFile`` (VS Code, Cursor): ``NAME=value`` lines, dotenv style.

``#`` starts a comment line, ``export`` before a name is allowed, a value may
be single- or double-quoted (double quotes understand ``\\n`` and ``\\"``).
No variable expansion: the hosts do none.
"""

from __future__ import annotations

import re
from pathlib import Path

from mcpclient.config.files import FileReadError, read_regular
from mcpclient.config.problems import Problems

__all__ = ["MAX_ENV_FILE_BYTES", "read_env_file"]

#: The largest env file read.
MAX_ENV_FILE_BYTES = 256 * 1024
_LINE = re.compile(r"\s*(?:export\s+)?([A-Za-z_][A-Za-z0-9_.-]*)\s*=\s*(.*?)\s*")


def _unquote(raw: str) -> str:
    if len(raw) >= 2 and raw[0] == raw[-1] == "'":
        return raw[1:-1]
    if len(raw) >= 2 and raw[0] == raw[-1] == '"':
        body = raw[1:-1]
        return body.replace("\\n", "\n").replace('\\"', '"').replace("\\\\", "\\")
    # an unquoted value ends at a " #" comment
    cut = raw.find(" #")
    return (raw[:cut] if cut >= 0 else raw).rstrip()


def read_env_file(path: Path, problems: Problems, where: list[str | int]) -> list[tuple[str, str]]:
    """The variables of the env file at ``path``; problems recorded at ``where``."""
    try:
        text = read_regular(path, MAX_ENV_FILE_BYTES).decode("utf-8")
    except FileNotFoundError:
        problems.error(where, f"cannot read the env file {path}: FileNotFoundError")
        return []
    except FileReadError as exc:
        problems.error(where, f"cannot read the env file {path}: {exc.reason}")
        return []
    except UnicodeDecodeError:
        problems.error(where, f"cannot read the env file {path}: it is not UTF-8 text")
        return []
    out: list[tuple[str, str]] = []
    for number, line in enumerate(text.splitlines(), 1):
        stripped = line.strip()
        if not stripped or stripped.startswith("#"):
            continue
        match = _LINE.fullmatch(line)
        if match is None:
            problems.warn(where, f"line {number} of the env file is not NAME=value, ignored")
            continue
        out.append((match.group(1), _unquote(match.group(2))))
    return out
