"""A transport's failure report is typed (issue 26): what became of the request, read once.

``http_errors.request_failure`` turns the HTTP layer's own error classes into a
``RequestFailure`` with a ``Disposition``, ``aborted`` and ``challenge``; the
session reads those fields and never probes an error's attributes.
"""

from __future__ import annotations

import ast
from pathlib import Path

import mcpclient
from mcpclient._internal.transport.base import Disposition, RequestFailure
from mcpclient._internal.transport.http_errors import HTTPAuthError, HTTPSendError, request_failure
from mcpclient.errors import ProtocolError
from mcpclient.transports import AuthChallenge


def test_a_send_error_says_whether_the_request_reached_the_wire() -> None:
    refused = request_failure(3, HTTPSendError("refused", sent=False))
    assert refused.disposition is Disposition.NOT_SENT and not refused.aborted
    cut = request_failure(3, HTTPSendError("reset", sent=True))
    assert cut.disposition is Disposition.MAYBE_SENT
    ours = request_failure(3, HTTPSendError("aborted", sent=True, aborted=True))
    assert ours.aborted


def test_a_resumptions_failure_is_delivered_whatever_its_error() -> None:
    failure = request_failure(3, HTTPSendError("refused", sent=False), delivered=True)
    assert failure.disposition is Disposition.DELIVERED


def test_an_auth_rejection_carries_its_challenge() -> None:
    challenge = AuthChallenge(
        status=401, www_authenticate=None, dpop_nonce=None, method="POST", url="https://x/mcp"
    )
    failure = request_failure(3, HTTPAuthError("no", status=401, challenge=challenge))
    assert failure.challenge is challenge
    assert request_failure(3, ProtocolError("bad")).challenge is None
    assert RequestFailure(3, ProtocolError("bad")).disposition is Disposition.MAYBE_SENT


def test_the_session_never_probes_an_errors_attributes() -> None:
    failures = Path(mcpclient.__file__).resolve().parent / "_internal" / "session" / "failures.py"
    calls = [
        node
        for node in ast.walk(ast.parse(failures.read_text(encoding="utf-8")))
        if isinstance(node, ast.Call) and getattr(node.func, "id", None) == "getattr"
    ]
    assert calls == []
