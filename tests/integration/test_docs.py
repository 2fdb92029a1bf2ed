"""Every code block of the documentation runs, so the documentation cannot rot.

* Each page of ``docs/*.md`` and ``README.md`` has its ```` ```python ````
  blocks run in order, in one fresh namespace, in a subprocess
  (``tests/support/docs_runner.py``) with a timeout; a block that raises, a
  page that hangs, or a thread or child process left behind fails the page.
  The testing server is what the pages connect to; ``TESTING_URL`` (the
  testing server in HTTP mode, started here) is injected for pages that use it.
* A block whose info string carries a flag of :data:`SKIP_FLAGS`
  (```` ```python sdk ````: the official async SDK, not installed for users;
  ```` ```python no-run ````: needs a network, a browser or a provider key)
  is not run; it must follow a line of prose (its reason), and an unknown
  flag fails, so a typo cannot hide a block.
* ```` ```sh ```` (and unlabelled) blocks: every ``mcpclient COMMAND`` /
  ``python -m mcpclient COMMAND`` line they show must name a command (and
  subcommand) the CLI has: ``COMMAND [WORD] --help`` exits 0.
* ``docs/errors.md`` names every error class of ``mcpclient.errors`` and
  every ``FailureClass``; ``mkdocs.yml`` lists every page.
"""

from __future__ import annotations

import importlib.util
import json
import os
import re
import shutil
import signal
import subprocess
import sys
from pathlib import Path

import attrs
import pytest

from mcpclient import errors
from tests.support.servers import REPO_ROOT

from .conftest import SpawnHttp

DOCS = REPO_ROOT / "docs"
PAGES = [*sorted(DOCS.rglob("*.md")), REPO_ROOT / "README.md"]
RUNNER = REPO_ROOT / "tests" / "support" / "docs_runner.py"
#: Seconds one page may take (the 2-core CI machine is shared; most pages take 2-5 s).
PAGE_TIMEOUT = 180.0
#: Info-string flags that mark a Python block as not runnable here.
SKIP_FLAGS = frozenset({"sdk", "no-run"})
_FENCE = re.compile(r"^(?P<indent> {0,3})(?P<fence>`{3,}|~{3,})(?P<info>[^`]*)$")
_CLI = re.compile(
    r"(?:^|&&|;|\|)\s*(?:python3? -m mcpclient|mcpclient)"
    r"(?P<command>(?:\s+[a-z][\w-]*){1,2})(?=\s|$)"
)


@attrs.frozen
class Block:
    page: Path
    line: int  # 1-based line of the opening fence
    language: str
    flags: tuple[str, ...]
    source: str
    before: str  # the last non-blank line before the fence


def blocks(page: Path) -> list[Block]:
    """The fenced code blocks of ``page``, in order."""
    lines = page.read_text(encoding="utf-8").splitlines()
    found: list[Block] = []
    index = 0
    last_text = ""
    while index < len(lines):
        match = _FENCE.match(lines[index])
        if match is None:
            if lines[index].strip():
                last_text = lines[index].strip()
            index += 1
            continue
        fence, indent = match["fence"], len(match["indent"])
        words = match["info"].split()
        body: list[str] = []
        end = index + 1
        while end < len(lines) and not lines[end].strip().startswith(fence):
            body.append(lines[end][indent:] if lines[end][:indent].isspace() else lines[end])
            end += 1
        assert end < len(lines), f"{page.name}:{index + 1}: unclosed code fence"
        language = words[0].lower() if words else ""
        found.append(
            Block(page, index + 1, language, tuple(words[1:]), "\n".join(body) + "\n", last_text)
        )
        last_text = ""
        index = end + 1
    return found


def runnable(page: Path) -> list[Block]:
    """The Python blocks of ``page`` to run (checking the skipped ones are explained)."""
    out = []
    for block in blocks(page):
        if block.language not in ("python", "py"):
            continue
        unknown = set(block.flags) - SKIP_FLAGS
        assert not unknown, f"{page.name}:{block.line}: unknown flags {sorted(unknown)}"
        if block.flags:
            assert block.before and not block.before.startswith(("#", "```")), (
                f"{page.name}:{block.line}: a block not run needs a sentence before it saying why"
            )
            continue
        out.append(block)
    return out


@pytest.fixture(scope="module")
def testing_url(spawn_shared_http: SpawnHttp) -> str:
    """The testing server in HTTP mode (modern and legacy eras), for pages that need a URL."""
    return spawn_shared_http().url


def _run_page(
    page: Path,
    chosen: list[Block],
    injected: dict[str, str],
    tmp: Path,
    timeout: float = PAGE_TIMEOUT,
) -> None:
    name = page.relative_to(REPO_ROOT).as_posix() if page.is_relative_to(REPO_ROOT) else page.name
    spec = {
        "page": name,
        "blocks": [{"line": b.line, "source": b.source} for b in chosen],
        "globals": injected,
    }
    spec_path = tmp / "blocks.json"
    spec_path.write_text(json.dumps(spec), encoding="utf-8")
    env = {**os.environ, "PYTHONPATH": str(REPO_ROOT)}
    proc = subprocess.Popen(
        [sys.executable, "-W", "error", str(RUNNER), str(spec_path)],
        cwd=REPO_ROOT,  # so a stdio server run with `-m mcpclient...` is this checkout's
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    try:
        out, err = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        out, err = proc.communicate()
        raise AssertionError(f"{page.name} did not finish in {timeout} s\n{out}\n{err}") from None
    assert proc.returncode == 0, f"{page.name} (exit {proc.returncode}):\n{out}\n{err}"


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.relative_to(REPO_ROOT).as_posix())
def test_every_python_block_of_the_page_runs(page: Path, testing_url: str, tmp_path: Path) -> None:
    chosen = runnable(page)
    if not chosen:
        pytest.skip(f"{page.name} has no Python block to run")
    text = "".join(b.source for b in chosen)
    if "npx" in text and shutil.which("npx") is None:
        pytest.skip(f"{page.name} runs a server with npx, which is not on PATH")
    injected = {}
    if "TESTING_URL" in text:
        injected["TESTING_URL"] = testing_url
    _run_page(page, chosen, injected, tmp_path)


def test_a_wrong_api_in_a_page_fails_it(tmp_path: Path) -> None:
    """The runner catches a wrong API, a leak and a hang (and the CLI check a bad command)."""
    page = tmp_path / "broken.md"
    page.write_text(
        "Connect:\n\n```python\nimport mcpclient\nmcpclient.conect\n```\n", encoding="utf-8"
    )
    with pytest.raises(AssertionError, match="AttributeError"):
        _run_page(page.resolve(), runnable(page), {}, tmp_path)
    leaky = tmp_path / "leaky.md"
    leaky.write_text(
        "Leak:\n\n```python\nimport sys, mcpclient\n"
        "c = mcpclient.connect(mcpclient.Definition('leak', mcpclient.StdioTransport("
        "sys.executable, ['-m', 'mcpclient.testing.server'])))\n```\n",
        encoding="utf-8",
    )
    with pytest.raises(AssertionError, match="left behind"):
        _run_page(leaky.resolve(), runnable(leaky), {}, tmp_path)
    assert _help("no-such-command").returncode != 0  # what the shell-block check relies on
    hangs = tmp_path / "hangs.md"
    hangs.write_text("Wait:\n\n```python\nimport time\ntime.sleep(60)\n```\n", encoding="utf-8")
    with pytest.raises(AssertionError, match="did not finish"):
        _run_page(hangs.resolve(), runnable(hangs), {}, tmp_path, timeout=2.0)


def test_skipped_blocks_need_a_known_flag_and_a_reason(tmp_path: Path) -> None:
    page = tmp_path / "flags.md"
    page.write_text("Why:\n\n```python sdk\nx\n```\n\n```python nope\ny\n```\n", encoding="utf-8")
    with pytest.raises(AssertionError, match="unknown flags"):
        runnable(page)
    page.write_text("# Heading\n\n```python no-run\nx\n```\n", encoding="utf-8")
    with pytest.raises(AssertionError, match="needs a sentence"):
        runnable(page)


def _cli_commands() -> list[tuple[str, str]]:
    found = []
    for page in PAGES:
        for block in blocks(page):
            if block.language not in ("", "sh", "shell", "bash", "console"):
                continue
            for line in block.source.splitlines():
                for match in _CLI.finditer(line.removeprefix("$ ")):
                    found.append((f"{page.name}:{block.line}", " ".join(match["command"].split())))
    return found


def _help(command: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "mcpclient", *command.split(), "--help"],
        check=False,
        cwd=REPO_ROOT,
        env={**os.environ, "PYTHONPATH": str(REPO_ROOT)},
        capture_output=True,
        text=True,
        timeout=60,
    )


@pytest.mark.parametrize("command", sorted({c for _, c in _cli_commands()}))
def test_every_cli_command_in_a_shell_block_exists(command: str) -> None:
    """``COMMAND [WORD] --help`` exits 0: an unknown command or subcommand exits 2.

    The second word is a subcommand (``config validate``) or the first
    positional (``list files``); argparse accepts the latter and refuses an
    unknown subcommand.
    """
    where = [w for w, c in _cli_commands() if c == command]
    if command != "demo" and importlib.util.find_spec("mcpclient.cli") is None:
        pytest.skip("the CLI (mcpclient.cli) has not landed: only `demo` exists")
    proc = _help(command)
    assert proc.returncode == 0, f"{where}: `mcpclient {command}` is not a command:\n{proc.stderr}"


def _error_classes() -> list[type[errors.Error]]:
    return [
        cls
        for name in errors.__all__
        if isinstance(cls := getattr(errors, name), type) and issubclass(cls, errors.Error)
    ]


def test_the_error_reference_names_every_class_and_failure_class() -> None:
    text = (DOCS / "errors.md").read_text(encoding="utf-8")
    headings = set(re.findall(r"^#+ .*?`(\w+)`", text, flags=re.M))
    missing = [cls.__name__ for cls in _error_classes() if cls.__name__ not in headings]
    assert not missing, f"docs/errors.md has no heading for {missing}"
    rows = set(re.findall(r"^\| `(\w+)` \|", text, flags=re.M))
    missing = [str(fc) for fc in errors.FailureClass if str(fc) not in rows]
    assert not missing, f"docs/errors.md has no table row for failure classes {missing}"
    assert len(_error_classes()) >= 15 and len(errors.FailureClass) >= 30  # the check looked


def test_mkdocs_lists_every_page() -> None:
    text = (REPO_ROOT / "mkdocs.yml").read_text(encoding="utf-8")
    listed = set(re.findall(r"([\w/-]+\.md)\s*$", text, flags=re.M))
    pages = {p.relative_to(DOCS).as_posix() for p in DOCS.rglob("*.md")}
    assert pages - listed == set(), f"mkdocs.yml does not list {sorted(pages - listed)}"
    assert listed - pages - {"cli.md"} == set(), f"mkdocs.yml lists {sorted(listed - pages)}"


def test_the_site_hook_renders_flagged_blocks_as_python() -> None:
    """``mkdocs_hooks.py`` drops the flags that Python-Markdown's fences do not accept."""
    import mkdocs_hooks  # the repository root, next to mkdocs.yml

    page = "Why:\n\n```python no-run\nx = 1\n```\n\n```python sdk\ny\n```\n\n```python\nz\n```\n"
    assert mkdocs_hooks.on_page_markdown(page) == page.replace(" no-run", "").replace(" sdk", "")
    assert "hooks:\n  - mkdocs_hooks.py" in (REPO_ROOT / "mkdocs.yml").read_text(encoding="utf-8")
