"""A scriptable, deliberately misbehaving-on-demand MCP server over stdio or HTTP.

Use it to test an MCP host or client against the eras, edge cases and hostile
behavior a real server may show. By default it speaks newline-delimited
JSON-RPC on stdin/stdout; ``--transport http`` serves Streamable HTTP and the
old HTTP+SSE transport instead. It uses only the standard library (DPoP checks
also need PyJWT) and never imports the official SDK or the rest of mcpclient::

    python -m mcpclient.testing.server --era modern|legacy|dual [knobs]
    python -m mcpclient.testing.server --transport http --port 0 [--host H] [knobs]

The reference is ``docs/testing-server.md`` in the repository: the eras, the
catalog, every flag, the runtime controls (``mutate_catalog``), every
``hostile`` action, the HTTP mode and its record format, and the OAuth
protection. ``--help`` lists every flag in brief.

This module is the stdio front end and the command line; the protocol logic is
:mod:`mcpclient.testing.core`, the HTTP front end :mod:`mcpclient.testing.http_server`.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Any, BinaryIO, NoReturn

from .catalog import FAMILIES, LOG_LEVELS, CatalogFileError, load_catalog_file
from .core import (
    CAPABILITY_NAMES,
    ERAS,
    LEGACY_VERSIONS,
    MODERN_VERSIONS,
    ServerConfig,
    ServerCore,
)
from .oauth_common import PRM_MODES
from .tools_hostile import flood_stderr

if TYPE_CHECKING:  # the HTTP front and its OAuth guard are imported only in HTTP mode
    from .oauth_guard import GuardConfig

__all__ = ["StdioChannel", "build_parser", "main", "serve"]

#: How long in-flight requests may still answer after stdin EOF.
EOF_GRACE_SECONDS = 0.5

# Held so the grandchild's Popen is never collected (it must outlive us unreaped).
_GRANDCHILDREN: list[subprocess.Popen[bytes]] = []


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        written = os.write(fd, view)
        view = view[written:]


class StdioChannel:
    """The stdio front end's :class:`~mcpclient.testing.core.Channel`.

    Thread safety: every method may be called from any thread; one lock keeps
    each frame contiguous on stdout.
    """

    def __init__(self, out_fd: int = 1, err_fd: int = 2) -> None:
        """Write frames to ``out_fd`` and diagnostics to ``err_fd``."""
        self._out_fd = out_fd
        self._err_fd = err_fd
        self._lock = threading.Lock()
        self._err_lock = threading.Lock()
        self._closed = False

    def send(self, message: Any) -> None:
        """Write ``message`` as one compact JSON line."""
        try:
            text = json.dumps(message, separators=(",", ":"), ensure_ascii=False)
            data = text.encode("utf-8")
        except UnicodeEncodeError:  # lone surrogates echoed back: escape them instead
            data = json.dumps(message, separators=(",", ":")).encode("ascii")
        self.send_raw((data, b"\n"))

    def send_raw(self, chunks: Iterable[bytes]) -> None:
        """Write ``chunks`` contiguously; dropped once stdout is closed or broken."""
        with self._lock:
            if self._closed:
                return
            try:
                for chunk in chunks:
                    _write_all(self._out_fd, chunk)
            except OSError:
                self._closed = True

    def close_output(self) -> None:
        """Close stdout (the peer sees EOF); fd 1 then points at /dev/null."""
        with self._lock:
            if self._closed:
                return
            self._closed = True
            devnull = os.open(os.devnull, os.O_WRONLY)
            # dup2 closes the pipe end atomically and keeps fd 1 from being reused.
            os.dup2(devnull, self._out_fd)
            os.close(devnull)

    def write_stderr(self, data: bytes) -> None:
        """Write ``data`` to stderr, ignoring a closed pipe."""
        with self._err_lock, contextlib.suppress(OSError):
            _write_all(self._err_fd, data)

    def exit_process(self, code: int) -> NoReturn:
        """End the process at once; nothing else is flushed."""
        os._exit(code)


def _csv(value: str) -> tuple[str, ...]:
    return tuple(part.strip() for part in value.split(",") if part.strip())


def _non_negative_float(value: str) -> float:
    number = float(value)
    if number < 0:
        raise argparse.ArgumentTypeError("must be >= 0")
    return number


def _non_negative_int(value: str) -> int:
    number = int(value)
    if number < 0:
        raise argparse.ArgumentTypeError("must be >= 0")
    return number


def _port(value: str) -> int:
    number = int(value)
    if not 0 <= number <= 65535:
        raise argparse.ArgumentTypeError("must be within 0..65535")
    return number


#: Extra spellings accepted for a FAMILY argument.
_FAMILY_ALIASES = {"templates": "resourceTemplates", "resources/templates": "resourceTemplates"}


def _family(value: str) -> str:
    family = _FAMILY_ALIASES.get(value.strip(), value.strip())
    if family not in FAMILIES:
        choices = ", ".join([*FAMILIES, *_FAMILY_ALIASES])
        raise argparse.ArgumentTypeError(f"unknown family {value!r} (choose from {choices})")
    return family


def _families(value: str) -> list[str]:
    return [_family(part) for part in value.split(",") if part.strip()]


def _read_hint(value: str) -> tuple[str, tuple[int, str]]:
    uri, sep, hint = value.rpartition("=")
    ttl, _, scope = hint.partition(":")
    scope = scope or "public"
    if not sep or not uri or scope not in {"public", "private"}:
        raise argparse.ArgumentTypeError(f"expected URI=TTL_MS[:public|private], got {value!r}")
    return uri, (_non_negative_int(ttl), scope)


def _item_count(value: str) -> tuple[str, int]:
    family, sep, count = value.partition("=")
    if not sep:
        raise argparse.ArgumentTypeError("expected FAMILY=N")
    return _family(family), _non_negative_int(count)


def build_parser() -> argparse.ArgumentParser:
    """Return the command-line parser (the flags are documented in docs/testing-server.md)."""
    p = argparse.ArgumentParser(
        prog="python -m mcpclient.testing.server",
        description="Scriptable MCP test server over stdio or HTTP.",
        epilog="Every flag, knob and hostile action is described in docs/testing-server.md.",
    )
    p.add_argument("--transport", choices=("stdio", "http"), default="stdio", help="stdio or HTTP")
    p.add_argument("--host", default="127.0.0.1", help="HTTP: the address to listen on")
    p.add_argument("--port", type=_port, default=0, help="HTTP: the port (0: a free one)")
    p.add_argument(
        "--session-404-storm",
        type=_non_negative_int,
        default=0,
        metavar="N",
        help="HTTP: answer the first N requests 404 (session not found)",
    )
    p.add_argument("--redirect-to", metavar="URL", default=None, help="HTTP: every POST is a 307")
    p.add_argument(
        "--endpoint-url", metavar="URL", default=None, help="HTTP+SSE: the endpoint event's URL"
    )
    p.add_argument(
        "--get-status", type=int, metavar="CODE", default=None, help="HTTP: every GET /mcp is CODE"
    )
    p.add_argument(
        "--no-session-id", action="store_true", help="HTTP legacy: sessions without a session id"
    )
    p.add_argument("--era", choices=ERAS, default="dual", help="protocol era (default dual)")
    p.add_argument(
        "--capabilities", type=_csv, default=CAPABILITY_NAMES, help="capabilities to advertise"
    )
    p.add_argument("--server-version", default="1.0.0", help="serverInfo.version")
    p.add_argument(
        "--server-version-file", metavar="PATH", default=None, help="read serverInfo.version"
    )
    p.add_argument(
        "--exit-at-startup-file",
        metavar="PATH",
        default=None,
        help="if PATH exists, log the start there and exit 1",
    )
    p.add_argument("--instructions", default=None, help="instructions of initialize/discover")
    p.add_argument(
        "--legacy-versions", type=_csv, default=LEGACY_VERSIONS, help="accepted legacy versions"
    )
    p.add_argument(
        "--modern-versions", type=_csv, default=MODERN_VERSIONS, help="accepted modern versions"
    )
    p.add_argument("--page-size", type=_non_negative_int, default=0, help="list page size")
    p.add_argument("--catalog", metavar="FILE", default=None, help="JSON catalog replacing lists")
    p.add_argument("--ttl-ms", type=_non_negative_int, default=0, help="modern ttlMs")
    p.add_argument("--log-level", choices=LOG_LEVELS, default="debug", help="legacy log threshold")
    p.add_argument("--exit-on-discover", action="store_true", help="exit 1 on server/discover")
    p.add_argument("--silent-discover", action="store_true", help="never answer server/discover")
    p.add_argument("--ignore-pings", action="store_true", help="never answer ping")
    p.add_argument(
        "--lock-era", action="store_true", help="lock to the era of the first request (dual)"
    )
    p.add_argument(
        "--locked-era",
        choices=("modern", "legacy"),
        help="start locked to ERA, as if a client of it came first (implies --lock-era)",
    )
    p.add_argument(
        "--discover-delay",
        type=_non_negative_float,
        default=0.0,
        metavar="SECONDS",
        help="answer server/discover this much later",
    )
    p.add_argument(
        "--discover-versions",
        type=_csv,
        default=None,
        metavar="LIST",
        help="supportedVersions of the discover result",
    )
    p.add_argument(
        "--die-after-discover",
        action="store_true",
        help="never answer server/discover; exit 1 at the next message",
    )
    p.add_argument("--no-initialize-answer", action="store_true", help="never answer initialize")
    p.add_argument(
        "--exit-after-initialize", action="store_true", help="exit 0 after answering initialize"
    )
    p.add_argument(
        "--startup-delay",
        type=_non_negative_float,
        default=0.0,
        metavar="SECONDS",
        help="sleep before serving",
    )
    p.add_argument(
        "--stderr-flood",
        type=_non_negative_int,
        default=0,
        metavar="BYTES",
        help="write BYTES to stderr at startup",
    )
    p.add_argument("--ignore-stdin-eof", action="store_true", help="ignore SIGTERM and stdin EOF")
    p.add_argument(
        "--spawn-grandchild", action="store_true", help="start a sleeping grandchild process"
    )
    p.add_argument("--record", metavar="FILE", default=None, help="append every inbound message")
    for flag, text in (
        ("--cursor-loop", "FAMILY's pagination repeats a cursor forever"),
        ("--endless-pages", "FAMILY pages one item at a time, forever"),
        ("--huge-cursor", "FAMILY's first nextCursor is 5000 bytes"),
    ):
        p.add_argument(
            flag, type=_families, action="extend", default=[], metavar="FAMILY", help=text
        )
    p.add_argument(
        "--read-hint",
        type=_read_hint,
        action="append",
        default=[],
        metavar="URI=TTL_MS[:SCOPE]",
        help="modern resources/read of URI carries this ttlMs and cacheScope (public)",
    )
    p.add_argument(
        "--item-count",
        type=_item_count,
        action="append",
        default=[],
        metavar="FAMILY=N",
        help="append N generated items to FAMILY",
    )
    p.add_argument(
        "--list-delay",
        type=_non_negative_float,
        default=0.0,
        metavar="SECONDS",
        help="delay every list answer",
    )
    p.add_argument(
        "--missing-list",
        type=_families,
        action="extend",
        default=[],
        metavar="FAMILY",
        help="FAMILY's list method answers -32601",
    )
    p.add_argument(
        "--reject-versions",
        type=_non_negative_int,
        default=0,
        metavar="N",
        help="refuse the first N version-naming requests",
    )
    p.add_argument("--mrtr", action="store_true", help="list the ask tool, prompt and resource")
    p.add_argument("--skills", action="store_true", help="serve good and tampered skills")
    p.add_argument("--apps", action="store_true", help="list MCP Apps tools and ui:// views")
    p.add_argument(
        "--extension",
        action="append",
        default=[],
        metavar="ID",
        help="declare the extension ID in capabilities.extensions (repeatable)",
    )
    _add_oauth_flags(p)
    return p


def _scope_list(value: str) -> tuple[str, ...]:
    return tuple(value.replace(",", " ").split())


def _tool_scope(value: str) -> tuple[str, tuple[str, ...]]:
    name, sep, scopes = value.partition("=")
    if not sep or not name:
        raise argparse.ArgumentTypeError("expected NAME=SCOPES")
    return name, _scope_list(scopes)


def _add_oauth_flags(p: argparse.ArgumentParser) -> None:
    """The ``--oauth-*`` flags (HTTP mode; see "OAuth protection")."""
    p.add_argument(
        "--oauth-issuer", metavar="URL", default=None, help="HTTP: require tokens of this issuer"
    )
    p.add_argument("--oauth-secret", metavar="HEX", default=None, help="the tokens' HS256 key")
    p.add_argument(
        "--oauth-prm", choices=PRM_MODES, default="path", help="where the resource metadata is"
    )
    p.add_argument(
        "--oauth-prm-resource", metavar="URL", default=None, help="the metadata's resource"
    )
    p.add_argument(
        "--oauth-prm-scopes",
        type=_scope_list,
        metavar="LIST",
        default=None,
        help="the metadata's scopes_supported",
    )
    p.add_argument(
        "--oauth-scopes",
        type=_scope_list,
        metavar="LIST",
        default=(),
        help="scopes every request needs",
    )
    p.add_argument(
        "--oauth-challenge-scope",
        type=_scope_list,
        metavar="LIST",
        default=None,
        help="the scope of 401 challenges",
    )
    p.add_argument(
        "--oauth-tool-scope",
        type=_tool_scope,
        action="append",
        default=[],
        metavar="NAME=LIST",
        help="scopes a tools/call of NAME also needs",
    )
    p.add_argument("--oauth-dpop", action="store_true", help="require DPoP-bound tokens")
    p.add_argument("--oauth-dpop-nonce", action="store_true", help="require the DPoP nonce")
    p.add_argument(
        "--oauth-legacy-as",
        metavar="URL",
        default=None,
        help="forward the 2025-03-26 authorization paths to URL",
    )


def _oauth_config(args: argparse.Namespace, parser: argparse.ArgumentParser) -> GuardConfig | None:
    """The protection the ``--oauth-*`` flags ask for (None without ``--oauth-issuer``)."""
    if args.oauth_issuer is None:
        return None
    if args.transport != "http":
        parser.error("--oauth-issuer needs --transport http")
    if args.oauth_secret is None:
        parser.error("--oauth-issuer needs --oauth-secret")
    from .oauth_guard import GuardConfig  # noqa: PLC0415 - HTTP mode only

    try:
        return GuardConfig(
            issuer=args.oauth_issuer,
            secret=bytes.fromhex(args.oauth_secret),
            prm=args.oauth_prm,
            prm_resource=args.oauth_prm_resource,
            prm_scopes=args.oauth_prm_scopes,
            scopes=args.oauth_scopes,
            challenge_scope=args.oauth_challenge_scope,
            tool_scopes=dict(args.oauth_tool_scope),
            dpop=args.oauth_dpop,
            dpop_nonce=args.oauth_dpop_nonce,
            legacy_as=args.oauth_legacy_as,
        )
    except ValueError as exc:
        parser.error(f"--oauth-*: {exc}")


def _config(args: argparse.Namespace, parser: argparse.ArgumentParser) -> ServerConfig:
    catalog = None
    if args.catalog is not None:
        try:
            catalog = load_catalog_file(args.catalog)
        except CatalogFileError as exc:
            parser.error(str(exc))
    server_version = args.server_version
    if args.server_version_file is not None:
        try:
            with open(args.server_version_file, encoding="utf-8") as handle:
                server_version = handle.read().strip()
        except (OSError, UnicodeDecodeError) as exc:
            parser.error(f"--server-version-file: {exc}")
    try:
        return ServerConfig(
            era=args.era,
            capabilities=tuple(args.capabilities),
            server_version=server_version,
            instructions=args.instructions,
            legacy_versions=tuple(args.legacy_versions),
            modern_versions=tuple(args.modern_versions),
            page_size=args.page_size,
            catalog=catalog,
            ttl_ms=args.ttl_ms,
            read_hints=dict(args.read_hint),
            log_level=args.log_level,
            exit_on_discover=args.exit_on_discover,
            silent_discover=args.silent_discover,
            ignore_pings=args.ignore_pings,
            lock_era=args.lock_era or args.locked_era is not None,
            locked_era=args.locked_era,
            discover_delay=args.discover_delay,
            discover_versions=args.discover_versions,
            die_after_discover=args.die_after_discover,
            no_initialize_answer=args.no_initialize_answer,
            exit_after_initialize=args.exit_after_initialize,
            record_path=args.record,
            item_counts=dict(args.item_count),
            cursor_loop=tuple(args.cursor_loop),
            endless_pages=tuple(args.endless_pages),
            huge_cursor=tuple(args.huge_cursor),
            list_delay=args.list_delay,
            mrtr=args.mrtr,
            missing_lists=tuple(args.missing_list),
            reject_versions=args.reject_versions,
            extensions=tuple(args.extension),
            skills=args.skills,
            apps=args.apps,
        )
    except ValueError as exc:
        parser.error(str(exc))


def serve(core: ServerCore, stdin: BinaryIO) -> None:
    """Feed ``stdin``'s lines to ``core`` until EOF (the reader loop)."""
    for line in iter(stdin.readline, b""):
        core.handle_bytes(line)


def _exit_if_present(path: str) -> None:
    """``--exit-at-startup-file``: note this start in ``path`` and exit, if it exists."""
    try:
        fd = os.open(path, os.O_WRONLY | os.O_APPEND)  # never re-creates a removed file
    except FileNotFoundError:
        return
    except OSError:
        pass  # present but not writable: still exit
    else:
        with contextlib.suppress(OSError):
            _write_all(fd, f"exited {os.getpid()}\n".encode())
        os.close(fd)
    _write_all(2, b"exiting at startup: --exit-at-startup-file exists\n")
    os._exit(1)


def main(argv: Sequence[str] | None = None) -> NoReturn:
    """Run the server: parse flags, apply the startup knobs, serve stdin, exit."""
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.exit_at_startup_file is not None:
        _exit_if_present(args.exit_at_startup_file)
    config = _config(args, parser)
    oauth = _oauth_config(args, parser)
    channel = StdioChannel()
    if args.ignore_stdin_eof:
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
    if args.spawn_grandchild:
        child = subprocess.Popen(["sleep", "300"])
        _GRANDCHILDREN.append(child)
        channel.write_stderr(f"grandchild-pid: {child.pid}\n".encode())
    if args.stderr_flood:
        flood_stderr(channel.write_stderr, args.stderr_flood)
    if args.startup_delay:
        time.sleep(args.startup_delay)
    if args.transport == "http":
        from .http_server import HttpOptions, serve_http  # noqa: PLC0415 - HTTP mode only

        options = HttpOptions(
            host=args.host,
            port=args.port,
            session_404_storm=args.session_404_storm,
            redirect_to=args.redirect_to,
            endpoint_url=args.endpoint_url,
            oauth=oauth,
            get_status=args.get_status,
            no_session_id=args.no_session_id,
        )
        serve_http(config, options, handle_sigterm=not args.ignore_stdin_eof)
    core = ServerCore(config, channel)
    serve(core, sys.stdin.buffer)
    if args.ignore_stdin_eof:
        while True:
            time.sleep(3600)
    # Let calls already running answer (a piped script ends with EOF), but not for long.
    core.wait_idle(EOF_GRACE_SECONDS)
    core.close()
    # os._exit: a tool thread may be blocked writing to a full pipe; do not wait for it.
    os._exit(0)


if __name__ == "__main__":
    main()
