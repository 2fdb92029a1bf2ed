"""A scriptable, deliberately misbehaving-on-demand MCP server over stdio.

Use it to test an MCP host or client against the eras, edge cases and hostile
behavior a real server may show. It speaks newline-delimited JSON-RPC on
stdin/stdout (one UTF-8 JSON value per line), uses only the standard library,
and never imports the official SDK or the rest of mcpclient::

    python -m mcpclient.testing.server --era modern|legacy|dual [knobs]

Eras (``--era``, default ``dual``)
----------------------------------
``legacy``
    ``initialize`` handshake (protocol versions 2024-11-05, 2025-03-26,
    2025-06-18, 2025-11-25; an unknown requested version is answered with the
    latest). Requests other than ``ping`` before ``initialize`` get -32600;
    ``server/discover`` gets -32601. Batches (arrays) are accepted only when
    2025-03-26 was negotiated and are answered with an array. ``ping`` answers
    ``{}``; ``logging/setLevel`` sets the threshold for ``notifications/message``.
    ``resources/subscribe``/``unsubscribe`` are supported; ``mutate_catalog``
    sends unsolicited ``notifications/<family>/list_changed`` and
    ``notifications/resources/updated``. Resource-not-found is -32002.
``modern`` (2026-07-28)
    No handshake: ``initialize``, ``ping`` and ``logging/setLevel`` are -32601.
    Every request needs ``params._meta["io.modelcontextprotocol/protocolVersion"]``
    and ``params._meta["io.modelcontextprotocol/clientCapabilities"]`` (missing:
    -32602); a version outside ``--modern-versions`` gets -32022 with
    ``data: {"supported": [...], "requested": v}``. ``server/discover`` answers
    ``{supportedVersions, capabilities, instructions?, ttlMs, cacheScope}``.
    Every result carries ``resultType: "complete"`` and
    ``_meta["io.modelcontextprotocol/serverInfo"]``; list results and
    ``resources/read`` carry ``ttlMs``/``cacheScope``. Log notifications are sent
    only when a request's ``_meta["io.modelcontextprotocol/logLevel"]`` allows.
    ``subscriptions/listen`` is acknowledged with
    ``notifications/subscriptions/acknowledged`` (capability-filtered) and stays
    open until cancelled; ``mutate_catalog`` notifies the matching listen streams.
    Resource-not-found is -32602.
``dual``
    Legacy semantics for ``initialize`` and for requests without the modern
    ``_meta`` protocol version; modern semantics for requests carrying it (and
    always for ``server/discover`` and ``subscriptions/listen``).

Catalog
-------
Tools: ``echo`` {message}, ``add`` {a, b} (outputSchema + structuredContent
``{"sum": ...}``, both omitted before 2025-06-18), ``slow`` {seconds},
``progress`` {steps=3, interval=0.05} (``notifications/progress`` only when the
request has ``_meta.progressToken``), ``fail`` {message?} (``isError: true``),
``log`` {message, level="info", logger?} (one ``notifications/message``, subject
to the log level), ``hostile`` {action, ...} (below), ``mutate_catalog`` {...}
(runtime catalog and list controls, below). Built-in arguments are checked
against their input schema; a mismatch is an ``isError`` result. An unlisted
tool is -32602. Prompt ``greet`` (argument ``name``, required); resource
``test://static/hello``; template ``test://items/{id}``; ``completion/complete``
completes ``greet``'s ``name`` and the template's ``id``.

The four list methods, ``tools/list``, ``prompts/list``, ``resources/list`` and
``resources/templates/list``, are the families ``tools``, ``prompts``,
``resources`` and ``resourceTemplates`` (a FAMILY argument also accepts
``templates`` or ``resources/templates`` for the last). Every list knob below
works in every era; modern list results always carry ``ttlMs``/``cacheScope``,
whatever the knob.

Generated items (``--item-count``, ``--endless-pages``), numbered from 0 with
at least four digits: tools ``t0000``… (input schema ``{"type":
"object"}``, calls echo their arguments like any non-built-in tool), prompts
``p0000``… (no arguments), resources ``test://gen/0000``… (named ``r0000``…,
text ``Contents of <uri>``), templates ``test://gen/0000/{id}``… (named
``rt0000``…).

Flags
-----
``--era {modern,legacy,dual}``
    Protocol era (default ``dual``).
``--capabilities LIST``
    Comma-separated subset of ``tools,prompts,resources,logging,completions`` to
    advertise (default all; empty string for none). Methods of an unadvertised
    capability answer -32601.
``--server-version V``
    ``serverInfo.version`` (default ``1.0.0``; the name is ``mcpclient-testing``).
``--instructions TEXT``
    Include ``instructions`` in the initialize/discover result.
``--legacy-versions LIST`` / ``--modern-versions LIST``
    Comma-separated protocol versions the server accepts in each era (defaults:
    the four legacy versions; ``2026-07-28``).
``--page-size N``
    Split every list into pages of N with opaque cursors (0 = one page). A cursor
    the server did not issue gets -32602.
``--item-count FAMILY=N``
    Append N generated items (above) to FAMILY's listing, after the defaults or
    the ``--catalog`` entries (so the built-in tools, ``mutate_catalog`` among
    them, stay listed; for exactly N items give the family as ``[]`` in a
    ``--catalog`` file). Paged by ``--page-size`` like any listing. Repeatable,
    one family each (the last count for a family wins).
``--cursor-loop FAMILY``
    FAMILY's pagination never ends: the first page (``--page-size`` items, or
    the whole listing with page size 0) always carries a ``nextCursor`` C, and a
    request with C answers the second page (the next ``--page-size`` items;
    empty with page size 0) with ``nextCursor`` C again, however often it is
    asked: a repeated cursor.
``--endless-pages FAMILY``
    FAMILY pages one item at a time (``--page-size`` ignored), forever: page k
    (from 0) holds the listing's item k, then, past the listing, generated item k;
    every page carries a fresh ``nextCursor``. Names stay unique (unless a
    ``--catalog`` listing uses generated names). Generated items past the
    listing can be called/got/read too. Takes precedence over ``--cursor-loop``.
``--huge-cursor FAMILY``
    The first page's ``nextCursor`` is exactly 5000 bytes (a valid cursor: it
    leads to the second page, which is empty, ending the list, when the listing
    fits on the first page). Combined with ``--cursor-loop``, the loop repeats
    that 5000-byte cursor.
    These three flags are repeatable and take comma-separated families
    (``--cursor-loop tools,prompts``).
``--list-delay SECONDS``
    Every list request waits SECONDS before it is answered (default 0), on its
    own thread, so other requests, ``mutate_catalog`` notifications and
    ``notifications/cancelled`` (which drops the answer) are handled meanwhile.
    The page is computed after the wait. Settable at runtime (``list_delay``).
``--catalog FILE``
    JSON object with any of ``tools``, ``prompts``, ``resources``,
    ``resourceTemplates`` (lists of raw definitions, passed through verbatim);
    each present key replaces that family's default listing. A ``tools`` entry
    may be the bare name of a built-in tool. Listed tools that are not built-in
    answer with a text echo of their arguments (JSON, sorted keys).
``--ttl-ms N``
    ``ttlMs`` on modern discover and read results and on every page of every
    modern list result (default 0; ``cacheScope`` is always ``public``).
``--log-level LEVEL``
    Legacy log threshold until ``logging/setLevel`` (default ``debug``).
``--exit-on-discover``
    Exit (status 1) upon receiving ``server/discover``.
``--silent-discover``
    Never answer ``server/discover``.
``--no-initialize-answer``
    Never answer ``initialize`` (the server stays uninitialized).
``--exit-after-initialize``
    Exit (status 0) right after answering ``initialize``.
``--startup-delay SECONDS``
    Sleep before reading stdin.
``--stderr-flood BYTES``
    Write BYTES of text to stderr at startup, before reading stdin (blocks if
    the client does not drain stderr).
``--ignore-stdin-eof``
    Ignore SIGTERM and keep running after stdin closes (only SIGKILL ends it).
``--spawn-grandchild``
    Start ``sleep 300`` in the server's process group, inheriting its stdio, and
    print ``grandchild-pid: N`` on stderr.
``--record FILE``
    Append every inbound message to FILE as one JSON line (undecodable frames as
    ``{"_invalid": "<text>"}``, a batch as one array), flushed before the message
    is handled. Every request is recorded, list requests included (also those
    that fail, are delayed or are cancelled), so a test can count a client's
    list requests per method and see the cursors it sent.

Runtime controls (``tools/call`` of ``mutate_catalog``)
-------------------------------------------------------
Arguments, all optional and combinable; the result is a JSON text report of what
was done (``isError`` and no change at all when ``set_tools`` or ``storm`` is
invalid). They apply in this order, so a list failure or delay scripted in the
same call is already in force when the client reacts to the notifications:

``fail_lists`` {integer >= -1}
    The next N list requests (any family, any era) answer the JSON-RPC error
    ``{"code": -32603, "message": "induced failure"}`` instead of a page; -1
    makes every list request fail until a later ``fail_lists: 0`` (0 resets).
    Counted when a request arrives; a failing request still waits the list
    delay.
``list_delay`` {seconds >= 0}
    Replace the ``--list-delay`` for later list requests.
``set_tools`` [tool, ...]
    Replace the whole tool listing with these raw objects, kept verbatim however
    malformed (a bare string names a built-in tool, as in ``--catalog``; an
    unknown name is an ``isError`` result). Include ``"mutate_catalog"`` to keep
    these controls callable. Always notifies tools list_changed.
``add`` {name} / ``remove`` {name}
    List a tool (the built-in definition if ``name`` is one, otherwise an echo
    tool with schema ``{"type": "object"}``) / unlist it; tools list_changed is
    notified once for ``set_tools``/``add``/``remove`` when something changed.
``touch`` {uri}
    Send ``notifications/resources/updated`` for ``uri`` to its subscribers.
``notify`` {"tools"|"prompts"|"resources"}
    Send that family's list_changed notification, with no change.
``storm`` {family: "tools"|"prompts"|"resources", count=100}
    Send ``count`` list_changed notifications of ``family`` back to back.

A list_changed notification goes, in legacy, as a plain notification once
initialized (only when the family is advertised); in modern, to every open
``subscriptions/listen`` stream that asked for ``<family>ListChanged``
(with that stream's subscription id); in ``dual``, both.

Hostile actions (``tools/call`` of ``hostile`` with ``{"action": ..., ...}``)
---------------------------------------------------------------------------
``oversized_line`` {bytes=17825792}
    Write one line of exactly ``bytes`` bytes (plus the newline) that starts
    like this call's JSON response but is cut off; the real answer is never sent.
``garbage_line``
    Write ``this is not json``, then answer.
``invalid_utf8``
    Write a ``notifications/message`` line with invalid UTF-8 inside a JSON
    string, then answer.
``deep_json`` {depth=100000}
    Write ``[[[…]]]`` nested ``depth`` deep, then answer.
``exit`` {code=1}
    Exit the process at once, mid-call.
``never_answer``
    Never answer this request.
``ignore_cancel`` {seconds=1}
    Sleep, ignoring ``notifications/cancelled``, then answer anyway.
``progress_forever`` {interval=0.1}
    Every ``interval``: ``notifications/progress`` (with the request's token) or,
    without a token, an unfiltered ``notifications/message``; never answers;
    stops when cancelled.
``duplicate_response``
    Send the response twice.
``unknown_id`` {id=987654321}
    Send a response with an id nobody asked for, then the real answer.
``stderr_flood`` {bytes=1048576}
    Write ``bytes`` of text to stderr, then answer.
``close_stdout``
    Close stdout; the process lives on until stdin closes.
``notification_flood`` {count=1000, kind="log"|"progress"|"list_changed"}
    Send ``count`` notifications back to back on the call's channel (progress
    uses the request's token, or ``"flood"``; logs are unfiltered; list_changed
    is the tools one, unsolicited and without a subscription id: for
    era-correct list_changed storms use ``mutate_catalog``'s ``storm``), then
    answer.
``server_request`` {method, params?, timeout?}
    Send a server-to-client request (ids 1, 2, ... of the server's own
    sequence; any era, though only legacy clients should accept one) and answer
    with the client's response as JSON text ``{"result": ...}`` or
    ``{"error": ...}`` (``isError`` for an error; also on timeout).
``result`` {result}
    Answer this call with exactly ``result`` as the JSON-RPC ``result`` member
    (any JSON value, kept verbatim: no ``resultType`` or ``serverInfo`` is added
    in the modern era), e.g. a content list that is not a list, oversized or
    unknown content items, or ``structuredContent`` that fails the tool's
    output schema (list ``hostile`` with an ``outputSchema`` via ``--catalog``).
``script_result`` {method, result}
    Queue ``result``: the next request of ``method`` (any method dispatched to a
    handler, in either era; not ``initialize`` nor the legacy ``ping``) is
    answered with exactly that JSON-RPC ``result``, verbatim, instead of being
    handled. Several scripts for one method are used in order. Answers at once.

Cancellation: ``notifications/cancelled`` {requestId} stops a running tool and
suppresses its answer (except ``ignore_cancel``). Unknown methods get -32601,
malformed messages -32600, undecodable lines -32700; the server never dies of
bad input. On stdin EOF it gives requests still running up to 0.5 s to answer,
then exits with status 0 (unless ``--ignore-stdin-eof``).
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
from typing import Any, BinaryIO, NoReturn

from .catalog import FAMILIES, LOG_LEVELS, CatalogFileError, load_catalog_file
from .core import (
    CAPABILITY_NAMES,
    ERAS,
    LEGACY_VERSIONS,
    MODERN_VERSIONS,
    ServerConfig,
    ServerCore,
)
from .tools import flood_stderr

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


def _item_count(value: str) -> tuple[str, int]:
    family, sep, count = value.partition("=")
    if not sep:
        raise argparse.ArgumentTypeError("expected FAMILY=N")
    return _family(family), _non_negative_int(count)


def build_parser() -> argparse.ArgumentParser:
    """Return the command-line parser (the flags are documented in this module)."""
    p = argparse.ArgumentParser(
        prog="python -m mcpclient.testing.server",
        description="Scriptable MCP test server over stdio (see the module docstring).",
    )
    p.add_argument("--era", choices=ERAS, default="dual")
    p.add_argument("--capabilities", type=_csv, default=CAPABILITY_NAMES)
    p.add_argument("--server-version", default="1.0.0")
    p.add_argument("--instructions", default=None)
    p.add_argument("--legacy-versions", type=_csv, default=LEGACY_VERSIONS)
    p.add_argument("--modern-versions", type=_csv, default=MODERN_VERSIONS)
    p.add_argument("--page-size", type=_non_negative_int, default=0)
    p.add_argument("--catalog", metavar="FILE", default=None)
    p.add_argument("--ttl-ms", type=_non_negative_int, default=0)
    p.add_argument("--log-level", choices=LOG_LEVELS, default="debug")
    p.add_argument("--exit-on-discover", action="store_true")
    p.add_argument("--silent-discover", action="store_true")
    p.add_argument("--no-initialize-answer", action="store_true")
    p.add_argument("--exit-after-initialize", action="store_true")
    p.add_argument("--startup-delay", type=_non_negative_float, default=0.0, metavar="SECONDS")
    p.add_argument("--stderr-flood", type=_non_negative_int, default=0, metavar="BYTES")
    p.add_argument("--ignore-stdin-eof", action="store_true")
    p.add_argument("--spawn-grandchild", action="store_true")
    p.add_argument("--record", metavar="FILE", default=None)
    for flag in ("--cursor-loop", "--endless-pages", "--huge-cursor"):
        p.add_argument(flag, type=_families, action="extend", default=[], metavar="FAMILY")
    p.add_argument(
        "--item-count", type=_item_count, action="append", default=[], metavar="FAMILY=N"
    )
    p.add_argument("--list-delay", type=_non_negative_float, default=0.0, metavar="SECONDS")
    return p


def _config(args: argparse.Namespace, parser: argparse.ArgumentParser) -> ServerConfig:
    catalog = None
    if args.catalog is not None:
        try:
            catalog = load_catalog_file(args.catalog)
        except CatalogFileError as exc:
            parser.error(str(exc))
    try:
        return ServerConfig(
            era=args.era,
            capabilities=tuple(args.capabilities),
            server_version=args.server_version,
            instructions=args.instructions,
            legacy_versions=tuple(args.legacy_versions),
            modern_versions=tuple(args.modern_versions),
            page_size=args.page_size,
            catalog=catalog,
            ttl_ms=args.ttl_ms,
            log_level=args.log_level,
            exit_on_discover=args.exit_on_discover,
            silent_discover=args.silent_discover,
            no_initialize_answer=args.no_initialize_answer,
            exit_after_initialize=args.exit_after_initialize,
            record_path=args.record,
            item_counts=dict(args.item_count),
            cursor_loop=tuple(args.cursor_loop),
            endless_pages=tuple(args.endless_pages),
            huge_cursor=tuple(args.huge_cursor),
            list_delay=args.list_delay,
        )
    except ValueError as exc:
        parser.error(str(exc))


def serve(core: ServerCore, stdin: BinaryIO) -> None:
    """Feed ``stdin``'s lines to ``core`` until EOF (the reader loop)."""
    for line in iter(stdin.readline, b""):
        core.handle_bytes(line)


def main(argv: Sequence[str] | None = None) -> NoReturn:
    """Run the server: parse flags, apply the startup knobs, serve stdin, exit."""
    parser = build_parser()
    args = parser.parse_args(argv)
    config = _config(args, parser)
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
