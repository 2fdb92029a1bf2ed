"""SERVER: what a command connects to.

A SERVER is one of:

* a URL (``http://`` or ``https://``): Streamable HTTP, falling back to the
  old HTTP+SSE transport as the library does;
* ``-- command args...``: a stdio server (everything after ``--``);
* a name from the discovered host configurations (``mcpclient servers``),
  written ``host:name`` when two hosts define the same name; ``--config
  FILE`` limits the names to that file. ``--env`` and ``--header`` add to
  (or replace) the configured ones; a variable the server would send that
  has no value is an error (see :mod:`mcpclient.cli.inputs`).

A name defined by a project file of the current directory (``.mcp.json``,
``.cursor/mcp.json``, ``.vscode/mcp.json``...) resolves to it only with
consent (:mod:`mcpclient.cli.trust`); when one of the user's own files
defines the name too, the user's entry wins unless the project is trusted.
"""

from __future__ import annotations

import os
import warnings
from collections.abc import Mapping, Sequence
from typing import Any
from urllib.parse import urlsplit

import attrs

import mcpclient
from mcpclient.cli.envelope import CliError, usage_error
from mcpclient.cli.exits import ExitCode
from mcpclient.cli.inputs import Asker, check_resolved, prompting, terminal_asker
from mcpclient.cli.optional import config_module
from mcpclient.cli.output import scrub
from mcpclient.cli.trust import ProjectTrust, own_paths, terminal_consent
from mcpclient.errors import ConfigError

__all__ = ["Target", "configured_servers", "load_quietly", "resolve", "split_stdio"]

#: The binding name of a server given as a URL or a command.
BINDING = "cli"


@attrs.frozen
class Target:
    """A resolved SERVER: its definition and how the envelope names it."""

    definition: mcpclient.Definition
    #: ``stdio:<program>``, the URL's origin, or the configured name: never a credential.
    display: str


@attrs.frozen
class Configured:
    """One server of one discovered configuration file."""

    host: str
    scope: str
    path: str
    name: str
    server: Any  # mcpclient.config.ServerConfig
    #: What was loaded (a path or a ConfigFile), to load again with answers.
    source: Any = None
    #: A file of the project directory (``.mcp.json``...), not one of the user's own.
    project: bool = False
    #: Not a project file, or one whose consent is remembered for its current content.
    trusted: bool = True


def split_stdio(argv: Sequence[str]) -> tuple[list[str], list[str] | None]:
    """Split ``argv`` at the first ``--``: (the words before, the stdio command or None)."""
    words = list(argv)
    if "--" not in words:
        return words, None
    at = words.index("--")
    return words[:at], words[at + 1 :]


def _pairs(words: Sequence[str], what: str) -> dict[str, str]:
    out: dict[str, str] = {}
    for word in words:
        key, sep, value = word.partition("=" if what == "--env" else ":")
        if not sep or not key.strip():
            form = "NAME=VALUE" if what == "--env" else "'Name: value'"
            raise usage_error(f"{what} expects {form}, got {word!r}")
        out[key.strip()] = value if what == "--env" else value.strip()
    return out


def stdio_target(command: Sequence[str], env: Sequence[str] = ()) -> Target:
    """A stdio server started from ``command`` (no shell)."""
    if not command:
        raise usage_error("'--' must be followed by the server's command")
    transport = mcpclient.StdioTransport(
        command[0], list(command[1:]), env=_pairs(env, "--env") or None
    )
    return Target(mcpclient.Definition(BINDING, transport), transport.redacted_origin)


def url_target(url: str, headers: Sequence[str] = ()) -> Target:
    """A Streamable HTTP server at ``url``."""
    transport = mcpclient.StreamableHTTPTransport(url, headers=_pairs(headers, "--header") or None)
    return Target(mcpclient.Definition(BINDING, transport), transport.redacted_origin)


def is_url(server: str) -> bool:
    """Whether SERVER names a URL rather than a configured server."""
    return server.startswith(("http://", "https://"))


def load_quietly(
    source: Any, environ: Mapping[str, str], *, strict: bool, **options: Any
) -> tuple[Any, list[str]]:
    """``mcpclient.config.load(source)`` and the warnings it issued (kept, not printed).

    ``options`` (``inputs``, ``references``) go to ``load``.

    Raises:
        ConfigError: the file is invalid.
    """
    config = config_module()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        loaded = config.load(source, env=dict(environ), strict=strict, **options)
    return loaded, [str(w.message) for w in caught]


def configured_servers(
    config_file: str | None,
    environ: Mapping[str, str],
    broken: list[tuple[str, ConfigError]] | None = None,
    answers: Mapping[str, str] | None = None,
    trust: ProjectTrust | None = None,
) -> list[Configured]:
    """Every server of every discovered configuration (or of ``config_file`` alone).

    A discovered file that fails to load is skipped and added to ``broken``.
    Each server of a project file says so (``project``) and whether its
    file's consent is remembered (``trusted``, by ``trust``; default: the
    user's state directory).

    Raises:
        ConfigError: ``config_file`` is invalid.
    """
    if config_file is not None:
        # Present but not a regular file (a FIFO, /dev/zero): load says so, classified.
        if not os.path.lexists(config_file):
            raise CliError(
                f"no configuration file {config_file}",
                error_class="not_found",
                exit_code=ExitCode.NOT_FOUND,
            )
        loaded, _ = load_quietly(config_file, environ, strict=False, inputs=answers)
        return [
            Configured("file", "file", config_file, name, server, config_file)
            for name, server in loaded.items()
        ]
    trust = trust if trust is not None else ProjectTrust(environ)
    found: list[Configured] = []
    entries = config_module().discover()
    own = own_paths(entries)
    for entry in entries:
        project = trust.is_project(entry, own)
        trusted = not project or trust.stored(entry.path)
        try:
            loaded, _ = load_quietly(entry, environ, strict=False, inputs=answers)
        except ConfigError as exc:
            # One host's broken file must not hide the servers of the others;
            # ``broken`` collects it for the caller to report.
            if broken is not None:
                broken.append((f"{entry.host}:{entry.path}", exc))
            continue
        for name, server in loaded.items():
            found.append(
                Configured(
                    entry.host,
                    entry.scope,
                    str(entry.path),
                    name,
                    server,
                    entry,
                    project=project,
                    trusted=trusted,
                )
            )
    return found


def runs(server: Any) -> str:
    """What a configured server starts or reaches, for a consent prompt (no secret).

    The program, not its arguments; the URL's scheme and host, not its
    user info, path or query (any may hold a credential).
    """
    if getattr(server, "transport", "") == "stdio":
        return f"runs {server.command}" + (" ..." if getattr(server, "args", ()) else "")
    url = str(getattr(server, "url", "") or "")
    return f"connects to {display_of_url(url)}" if url else "?"


def display_of_url(url: str) -> str:
    """``scheme://host[:port]`` of ``url``."""
    parts = urlsplit(url)
    host = parts.hostname or ""
    if ":" in host:
        host = f"[{host}]"
    try:
        port = f":{parts.port}" if parts.port else ""
    except ValueError:
        port = ""
    return f"{parts.scheme}://{host}{port}"


def consent_lines(path: str, every: Sequence[Configured]) -> list[str]:
    """One line per server of the file at ``path``: its name and what it runs."""
    return [scrub(f"{c.name}: {runs(c.server)}", one_line=True) for c in every if c.path == path]


def untrusted_error(name: str, path: str) -> CliError:
    """A project server that has no consent: nothing was started."""
    return CliError(
        f"server {name!r} is defined by the project file {path}, which is not trusted;"
        " nothing was started (pass --trust-project to trust it, or run on a terminal to be"
        " asked; the consent is remembered until the file changes)",
        error_class="untrusted_project",
        exit_code=ExitCode.USAGE,
    )


def _answered(
    chosen: Configured, environ: Mapping[str, str], answers: Mapping[str, str], ask: Asker | None
) -> Any:
    """``chosen``'s server, loaded again with the inputs only a person can answer."""
    wanted = {ident for _, kind, ident in chosen.server.unresolved if kind == "input"}
    if not wanted or ask is None:
        return chosen.server
    loaded, _ = load_quietly(
        chosen.source, environ, strict=False, inputs=prompting(answers, wanted, ask)
    )
    return loaded.get(chosen.name, chosen.server)


def _with_overrides(definition: Any, name: str, headers: Sequence[str], env: Sequence[str]) -> Any:
    """``definition`` with ``--env``/``--header`` added to the configured ones."""
    transport = definition.transport
    if env:
        if transport.kind != "stdio":
            raise usage_error(f"--env applies to a stdio server; {name!r} is {transport.kind}")
        merged = {**dict(transport.env or ()), **_pairs(env, "--env")}
        transport = attrs.evolve(transport, env=merged)
    if headers:
        if transport.kind == "stdio":
            raise usage_error(f"--header applies to an HTTP server; {name!r} is stdio")
        merged = {**dict(transport.headers or ()), **_pairs(headers, "--header")}
        transport = attrs.evolve(transport, headers=merged)
    return attrs.evolve(definition, transport=transport)


def named_target(
    name: str,
    config_file: str | None,
    environ: Mapping[str, str],
    *,
    headers: Sequence[str] = (),
    env: Sequence[str] = (),
    answers: Mapping[str, str] | None = None,
    ask: Asker | None = None,
    trust: ProjectTrust | None = None,
) -> Target:
    """The configured server called ``name`` (or ``host:name``).

    ``answers`` (``--input``) and then ``ask`` (a prompt) answer its VS Code
    inputs; ``headers`` and ``env`` are added to its configured ones. A
    project file's server needs ``trust``'s consent; the user's own entry
    of the same name wins unless the project is trusted.

    Raises:
        CliError: ``not_found`` (exit 5) when none is, ``usage`` when several
            hosts define it and ``host:`` does not choose,
            ``untrusted_project`` (exit 1) when it is a project file's and
            there is no consent.
        ConfigError: a variable the server would send has no value.
    """
    host, sep, bare = name.partition(":")
    wanted_host = host if sep else None
    wanted = bare if sep else name
    broken: list[tuple[str, ConfigError]] = []
    trust = trust if trust is not None else ProjectTrust(environ, consent=terminal_consent())
    every = configured_servers(config_file, environ, broken, answers, trust)
    matches = [
        c for c in every if c.name == wanted and (wanted_host is None or c.host == wanted_host)
    ]
    if not trust.flag and any(not c.project for c in matches):
        # The user's own entry wins a clash with a project file not trusted.
        matches = [c for c in matches if c.trusted]
    if not matches:
        unread = f"; unreadable: {', '.join(where for where, _ in broken)}" if broken else ""
        raise CliError(
            f"no configured server named {name!r} (mcpclient servers lists them){unread}",
            error_class="not_found",
            exit_code=ExitCode.NOT_FOUND,
        )
    hosts = list(dict.fromkeys(c.host for c in matches))
    if len(hosts) > 1:
        choices = ", ".join(f"{h}:{wanted}" for h in hosts)
        raise usage_error(f"server {name!r} is defined by several hosts; name one of {choices}")
    chosen = matches[0]
    if getattr(chosen.server, "disabled", False):
        raise usage_error(f"server {name!r} is disabled in {chosen.path}")
    if not chosen.trusted and not trust.grant(chosen.path, consent_lines(chosen.path, every)):
        raise untrusted_error(name, chosen.path)
    server = _answered(chosen, environ, answers or {}, ask)
    check_resolved(name, server)
    definition = _with_overrides(server.definition(), name, headers, env)
    return Target(definition, f"{chosen.host}:{chosen.name}" if sep else chosen.name)


def resolve(
    server: str | None,
    command: Sequence[str] | None,
    *,
    config_file: str | None = None,
    headers: Sequence[str] = (),
    env: Sequence[str] = (),
    environ: Mapping[str, str] | None = None,
    answers: Mapping[str, str] | None = None,
    trust_project: bool = False,
) -> Target:
    """The target of SERVER (or of the ``--`` command).

    A configured server's inputs are answered by ``answers``, then asked for
    on the terminal (when stdin is one); a project file's server needs
    ``trust_project`` (``--trust-project``), a remembered consent, or a yes
    on the terminal.
    """
    if command is not None:
        return stdio_target(command, env)
    if not server:
        raise usage_error("a SERVER is needed: a configured name, a URL, or -- command args...")
    if is_url(server):
        return url_target(server, headers)
    environ = os.environ if environ is None else environ
    return named_target(
        server,
        config_file,
        environ,
        headers=headers,
        env=env,
        answers=answers,
        ask=terminal_asker(),
        trust=ProjectTrust(environ, flag=trust_project, consent=terminal_consent()),
    )
