"""Configured secrets are redacted wherever server text is quoted (issue 27, item 11)."""

from __future__ import annotations

import gc
import secrets
from urllib.parse import quote, quote_plus

import mcpclient
from mcpclient._core import redaction
from mcpclient._core.limits import clean_text
from mcpclient._internal.client.auth.secrets import redactor_for, url_secrets
from mcpclient.errors import ProtocolError


def _secret(prefix: str) -> str:
    return prefix + secrets.token_hex(10)


def test_a_registered_secret_is_redacted_from_error_messages_while_it_lives() -> None:
    key = _secret("k")
    redactor = redaction.register(redaction.Redactor([key]))
    quoted = f"the server said: bad key {key} (encoded: {key.upper()})"
    error = ProtocolError(quoted)
    assert key not in error.message and "[redacted]" in error.message
    assert key not in clean_text(quoted, 200)
    del redactor
    gc.collect()
    assert key in ProtocolError(quoted).message  # forgotten with its owner


def test_url_encoded_and_whitespace_forms_are_redacted() -> None:
    key = "a b+c/" + secrets.token_hex(6)
    keep = redaction.register(redaction.Redactor([key]))
    for form in (key, quote(key, safe=""), quote_plus(key, safe="")):
        assert form not in ProtocolError(f"echo {form} end").message
    assert keep


def test_short_values_are_left_alone() -> None:
    keep = redaction.register(redaction.Redactor(["1", "true"]))
    assert ProtocolError("1 is true").message == "1 is true"
    assert not keep


def test_noted_credentials_are_redacted_and_bounded() -> None:
    token = _secret("t")
    redaction.note(token)
    assert token not in ProtocolError(f"Authorization: Bearer {token}").message
    for _ in range(redaction.MAX_NOTED):
        redaction.note(_secret("n"))
    assert token in ProtocolError(f"Bearer {token}").message  # the oldest is dropped


def test_a_secret_cut_at_the_message_bound_is_redacted_before_the_cut() -> None:
    key = _secret("long")
    keep = redaction.register(redaction.Redactor([key]))
    text = "x" * 1010 + key
    assert key[:8] not in ProtocolError(text).message
    assert keep


def test_the_definitions_secrets() -> None:
    path_key = "sk-" + secrets.token_hex(12)
    transport = mcpclient.StreamableHTTPTransport(
        f"https://mcp.example.com/mcp/{path_key}/v1?api_key=q1w2e3r4&x=1",
        headers={"Authorization": "Basic dXNlcjpwYXNz", "X-Team": "team-42a"},
    )
    found = redactor_for(mcpclient.Definition("s", transport)).secrets
    for secret in (path_key, "q1w2e3r4", "Basic dXNlcjpwYXNz", "dXNlcjpwYXNz"):
        assert secret in found, secret
    for public in ("mcp", "v1", "mcp.example.com", "1", "team-42a"):
        assert public not in found, public  # an ordinary header's value is no secret
    assert "pa55word" in set(url_secrets("http://user:pa55word@proxy.example:3128"))
    stdio = mcpclient.StdioTransport(
        "server", env={"API_KEY": "env-secret-1", "LOG_LEVEL": "debug-level"}
    )
    found = redactor_for(mcpclient.Definition("s", stdio)).secrets
    assert "env-secret-1" in found and "debug-level" not in found


def test_url_secrets_of_a_malformed_url_are_none() -> None:
    assert list(url_secrets("http://[::1")) == []


def test_an_oauth_providers_client_secret_is_redacted_while_it_lives() -> None:
    from mcpclient.auth import OAuth  # the oauth extra: imported where it is used

    secret = _secret("client-secret-")
    provider = OAuth(client_id="app", client_secret=secret)
    error = ProtocolError(f"invalid_client: the secret {secret} is wrong")
    assert secret not in error.message and "[redacted]" in error.message
    assert provider is not None
