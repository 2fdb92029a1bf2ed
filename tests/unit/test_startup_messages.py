"""Errors that say what happened (issue 28): the legacy-SSE hint and the CLI's warnings."""

from __future__ import annotations

import io
import logging

from mcpclient import PROFILE_LEGACY, Definition, StreamableHTTPTransport
from mcpclient._internal.client.lifecycle.hints import explained
from mcpclient.cli.output import Output, library_warnings
from mcpclient.errors import FailureClass, error_for


class _StatusError(Exception):
    status = 405


def refused(url: str, compat: object = None) -> tuple[Definition, str]:
    kwargs = {} if compat is None else {"compat": compat}
    definition = Definition("s", StreamableHTTPTransport(url), **kwargs)  # type: ignore[arg-type]
    error = error_for(FailureClass.REMOTE_HTTP, "HTTP 405 and no JSON-RPC message", op="connect")
    error.__cause__ = _StatusError()
    return definition, explained(definition, error).message


def test_a_refused_post_to_an_sse_url_names_the_profile() -> None:
    _, message = refused("https://legacy.example/sse")
    assert message.startswith("HTTP 405 and no JSON-RPC message. The URL looks like a legacy")
    assert "profile default/v2 does not permit" in message
    assert "compat=PROFILE_LEGACY" in message


def test_no_hint_where_it_would_not_help() -> None:
    assert refused("https://x.example/mcp")[1] == "HTTP 405 and no JSON-RPC message"
    assert refused("https://x.example/sse", PROFILE_LEGACY)[1] == (
        "HTTP 405 and no JSON-RPC message"
    )


def test_the_cli_shows_the_librarys_warnings() -> None:
    err = io.StringIO()
    out = Output(io.StringIO(), err, environ={})
    with library_warnings(out):
        logging.getLogger("mcpclient._internal.session.reader").warning(
            "binding %s: dropped a malformed frame: %s", "s", "not JSON\x1b[2J"
        )
    logging.getLogger("mcpclient.x").warning("after the command: not shown")
    assert err.getvalue() == "warning: binding s: dropped a malformed frame: not JSON\\x1b[2J\n"
