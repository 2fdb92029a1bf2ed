"""Reading an ``envFile`` (VS Code, Cursor): ``NAME=value`` lines, dotenv style.

``#`` starts a comment line, ``export`` before a name is allowed, a value may
be single- or double-quoted (double quotes understand ``\\n`` and ``\\"``).
No variable expansion: the hosts do none.
"""

from __future__ import annotations

import re
from pathlib import Path

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
        if path.stat().st_size > MAX_ENV_FILE_BYTES:
            problems.error(where, f"the env file is larger than {MAX_ENV_FILE_BYTES} bytes")
            return []
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        problems.error(where, f"cannot read the env file {path}: {type(exc).__name__}")
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
