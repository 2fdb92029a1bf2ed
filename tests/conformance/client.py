"""The conformance client: mcpclient driven through its public API only.

The official harness (``@modelcontextprotocol/conformance``) starts a mock
server per scenario and runs ``python -m tests.conformance.client <url>``
with ``MCP_CONFORMANCE_SCENARIO`` naming the scenario,
``MCP_CONFORMANCE_PROTOCOL_VERSION`` the wire to speak (``2025-11-25``: the
initialize handshake; ``2026-07-28``: stateless) and, for some scenarios,
``MCP_CONFORMANCE_CONTEXT`` (JSON: credentials, keys, tool-call arguments).
Exit status 0 means the client did what the scenario asks of it; the harness
then judges the wire.

Each handler does what a host would do with the library (connect, look at the
catalog, call, read, close), using only ``mcpclient`` and ``mcpclient.auth``.
"""

from __future__ import annotations

import json
import logging
import os
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any
from urllib.parse import parse_qs, urlsplit

import requests

import mcpclient
from mcpclient import auth

#: The client ID metadata document URL the harness's CIMD scenarios expect.
CIMD_URL = "https://conformance-test.local/client-metadata.json"
#: The redirect URI registered for the headless authorization-code flow.
REDIRECT_URI = "http://localhost:3000/callback"

Handler = Callable[[str], None]
HANDLERS: dict[str, Handler] = {}

log = logging.getLogger("conformance")


def scenario(*names: str) -> Callable[[Handler], Handler]:
    """Register a handler for the scenarios ``names``."""

    def register(handler: Handler) -> Handler:
        for name in names:
            HANDLERS[name] = handler
        return handler

    return register


def protocol() -> str:
    """The wire the harness asks for (a pinned protocol version)."""
    return os.environ.get("MCP_CONFORMANCE_PROTOCOL_VERSION") or "2025-11-25"


def context() -> dict[str, Any]:
    """The scenario's ``MCP_CONFORMANCE_CONTEXT`` (empty when there is none)."""
    raw = os.environ.get("MCP_CONFORMANCE_CONTEXT")
    return json.loads(raw) if raw else {}


def definition(
    url: str,
    *,
    oauth: mcpclient.auth.OAuth | None = None,
    headers: dict[str, str] | None = None,
    capabilities: mcpclient.ClientCapabilities | None = None,
    extensions: tuple[str, ...] = (),
) -> mcpclient.Definition:
    """A binding for the harness's mock server at ``url`` (opting in to ``extensions``)."""
    transport = mcpclient.StreamableHTTPTransport(
        url, auth=oauth, headers=headers, allow_insecure_http=True
    )
    return mcpclient.Definition(
        "conformance",
        transport,
        protocol=protocol(),
        capabilities=capabilities or mcpclient.ClientCapabilities(),
        timeouts=mcpclient.Timeouts(startup=20, request=20, auth=20),
        reconnect=mcpclient.ReconnectPolicy(disabled=True),
        extensions=extensions,
    )


@contextmanager
def connected(
    defn: mcpclient.Definition, handlers: mcpclient.Handlers | None = None
) -> Iterator[mcpclient.Client]:
    """Connect, yield the client, and always close it."""
    with mcpclient.connect(defn, handlers or mcpclient.Handlers(event=_log_event)) as client:
        yield client


def _log_event(event: mcpclient.Event) -> None:
    log.info("event: %r", event)


def first_tool(client: mcpclient.Client) -> mcpclient.ToolSpec | None:
    """The catalog's first tool, or None."""
    tools = client.catalog().tools
    return tools[0] if tools else None


# -- basic ------------------------------------------------------------------


@scenario("initialize", "tools_call")
def basic(url: str) -> None:
    """Connect, list the tools and call the first one with ``{a: 2, b: 3}``."""
    with connected(definition(url)) as client:
        tool = first_tool(client)
        if tool is not None:
            client.call_tool(tool.raw_name, {"a": 2, "b": 3})


@scenario("json-schema-ref-no-deref", "request-metadata")
def list_only(url: str) -> None:
    """Connect and list the tools; nothing else (the mock serves nothing else)."""
    with connected(definition(url)) as client:
        log.info("tools: %s", [t.raw_name for t in client.catalog().tools])


@scenario("json-schema-2020-12-preservation")
def schema_preservation(url: str) -> None:
    """Echo the focal tool's input schema back exactly as it was listed."""
    with connected(definition(url)) as client:
        focal = client.catalog().tool_by_raw_name("json_schema_2020_12_tool")
        if focal is None:
            raise SystemExit("focal tool json_schema_2020_12_tool not listed")
        client.call_tool("json_schema_echo", {"schema": focal.input_schema})


@scenario("sse-retry")
def sse_retry(url: str) -> None:
    """Call the first tool; its answer arrives on a stream the server closes and resumes."""
    with connected(definition(url)) as client:
        tool = first_tool(client)
        if tool is not None:
            client.call_tool(tool.raw_name, {})


# -- server-initiated ---------------------------------------------------------


def _accept_empty(request: mcpclient.ElicitRequest, ctx: mcpclient.HandlerContext) -> Any:
    """Accept every form with no fields filled (defaults fill the rest)."""
    return mcpclient.ElicitResult(mcpclient.ElicitAction.ACCEPT, content={})


def _accept_confirmed(request: mcpclient.ElicitRequest, ctx: mcpclient.HandlerContext) -> Any:
    """Accept every form with ``confirmed: true``."""
    return mcpclient.ElicitResult(mcpclient.ElicitAction.ACCEPT, content={"confirmed": True})


@scenario("elicitation-sep1034-client-defaults", "elicitation-defaults")
def elicitation_defaults(url: str) -> None:
    """Call the defaults tool; the handler answers ``{}`` and the schema's defaults apply."""
    caps = mcpclient.ClientCapabilities(elicitation=True)
    handlers = mcpclient.Handlers(elicitation=_accept_empty, event=_log_event)
    with connected(definition(url, capabilities=caps), handlers) as client:
        client.call_tool("test_client_elicitation_defaults", {})


@scenario("sep-2322-client-request-state")
def request_state(url: str) -> None:
    """Run the multi round-trip tools; each retry carries back exactly its own state."""
    caps = mcpclient.ClientCapabilities(elicitation=True)
    handlers = mcpclient.Handlers(elicitation=_accept_confirmed, event=_log_event)
    with connected(definition(url, capabilities=caps), handlers) as client:
        names = {t.raw_name for t in client.catalog().tools}
        for name in (
            "test_mrtr_echo_state",
            "test_mrtr_unrelated",
            "test_mrtr_no_state",
            "test_mrtr_no_result_type",
        ):
            if name in names:
                client.call_tool(name, {})


# -- HTTP headers (SEP-2243) --------------------------------------------------


@scenario("http-standard-headers")
def standard_headers(url: str) -> None:
    """Exercise every method that carries Mcp-Method / Mcp-Name."""
    with connected(definition(url)) as client:
        catalog = client.catalog()
        for tool in catalog.tools:
            client.call_tool(tool.raw_name, {})
        for resource in catalog.resources:
            client.read_resource(resource.uri)
        for prompt in catalog.prompts:
            client.get_prompt(prompt.name, {})


@scenario("http-custom-headers")
def custom_headers(url: str) -> None:
    """Make the tool calls the context lists; their arguments become Mcp-Param headers."""
    with connected(definition(url)) as client:
        for call in context().get("toolCalls", []):
            client.call_tool(call["name"], call.get("arguments", {}))


@scenario("http-invalid-tool-headers")
def invalid_tool_headers(url: str) -> None:
    """Call every tool the catalog kept; tools with invalid x-mcp-header are not in it."""
    with connected(definition(url)) as client:
        for tool in client.catalog().tools:
            client.call_tool(tool.raw_name, _arguments_for(tool))


def _arguments_for(tool: mcpclient.ToolSpec) -> dict[str, Any]:
    """Plausible arguments: a string for every required string property."""
    schema = tool.input_schema or {}
    props = schema.get("properties", {}) if isinstance(schema, dict) else {}
    samples = {"string": "x", "integer": 1, "number": 1, "boolean": True}
    out: dict[str, Any] = {}
    for name in schema.get("required", []) if isinstance(schema, dict) else []:
        kind = props.get(name, {}).get("type", "string")
        out[name] = samples.get(kind, "x")
    return out


# -- skills (SEP-2640) --------------------------------------------------------

SKILLS = "io.modelcontextprotocol/skills"


@scenario("sep-2640-client-no-prefetch")
def skills_no_prefetch(url: str) -> None:
    """List the skills and load none: the host fetches nothing before it needs a skill."""
    with connected(definition(url, extensions=(SKILLS,))) as client:
        log.info("skills: %s", [entry.name for entry in client.skills()])


@scenario(
    "sep-2640-client-verify-digest",
    "sep-2640-client-verify-size",
    "sep-2640-client-verify-frontmatter",
)
def skills_verify(url: str) -> None:
    """Load each listed skill and read every file it lists; a refused skill stops the run."""
    with connected(definition(url, extensions=(SKILLS,))) as client:
        for entry in client.skills():
            skill = client.load_skill(entry)
            for path in skill.files:
                skill.read(path)


# -- authorization ------------------------------------------------------------


def headless_redirect(authorization_url: str) -> str:
    """Follow the authorization URL once and return where it redirects (with the code)."""
    response = requests.get(authorization_url, allow_redirects=False, timeout=10)
    location = response.headers.get("location")
    if not location:
        raise RuntimeError(f"no redirect from the authorization endpoint ({response.status_code})")
    query = parse_qs(urlsplit(location).query)
    log.info("authorization redirect carries %s", sorted(query))
    return location


def authorization_code(**kwargs: Any) -> auth.OAuth:
    """An OAuth provider with the headless authorization-code grant."""
    grant = auth.AuthorizationCodeGrant(redirect=headless_redirect, redirect_uri=REDIRECT_URI)
    return auth.OAuth(grant=grant, allow_private_networks=True, **kwargs)


def _list_and_call(url: str, oauth: auth.OAuth, *, call: bool = True) -> None:
    with connected(definition(url, oauth=oauth)) as client:
        log.info("tools: %s", [t.raw_name for t in client.catalog().tools])
        if call:
            client.call_tool("test-tool", {})


@scenario(
    "auth/basic-cimd",
    "auth/basic-dcr",
    "auth/metadata-default",
    "auth/metadata-var1",
    "auth/metadata-var2",
    "auth/metadata-var3",
    "auth/2025-03-26-oauth-metadata-backcompat",
    "auth/2025-03-26-oauth-endpoint-fallback",
    "auth/scope-from-www-authenticate",
    "auth/scope-from-scopes-supported",
    "auth/scope-omitted-when-undefined",
    "auth/scope-step-up",
    "auth/scope-retry-limit",
    "auth/token-endpoint-auth-basic",
    "auth/token-endpoint-auth-post",
    "auth/token-endpoint-auth-none",
    "auth/resource-mismatch",
    "auth/offline-access-scope",
    "auth/offline-access-not-supported",
    "auth/iss-supported",
    "auth/iss-not-advertised",
    "auth/iss-supported-missing",
    "auth/iss-wrong-issuer",
    "auth/iss-unexpected",
    "auth/iss-normalized",
    "auth/metadata-issuer-mismatch",
    "auth/authorization-server-migration",
)
def auth_code(url: str) -> None:
    """The authorization-code flow a well-behaved host runs: list, then call."""
    _list_and_call(url, authorization_code(client_metadata_url=CIMD_URL))


@scenario("auth/pre-registration")
def pre_registration(url: str) -> None:
    """A pre-registered client ID and secret; no registration."""
    ctx = context()
    oauth = authorization_code(client_id=ctx["client_id"], client_secret=ctx["client_secret"])
    _list_and_call(url, oauth, call=False)


@scenario("auth/client-credentials-basic")
def client_credentials_basic(url: str) -> None:
    """client_credentials with client_secret_basic."""
    ctx = context()
    oauth = auth.OAuth(
        grant=auth.ClientCredentialsGrant(),
        client_id=ctx["client_id"],
        client_secret=ctx["client_secret"],
        allow_private_networks=True,
    )
    _list_and_call(url, oauth, call=False)


@scenario("auth/client-credentials-jwt")
def client_credentials_jwt(url: str) -> None:
    """client_credentials with private_key_jwt."""
    ctx = context()
    oauth = auth.OAuth(
        grant=auth.ClientCredentialsGrant(),
        client_id=ctx["client_id"],
        client_key=ctx["private_key_pem"],
        token_endpoint_auth_method="private_key_jwt",
        allow_private_networks=True,
    )
    _list_and_call(url, oauth, call=False)


@scenario("auth/wif-jwt-bearer")
def wif_jwt_bearer(url: str) -> None:
    """Workload identity: a JWT assertion exchanged for a token (no registration)."""
    ctx = context()
    jwt = ctx["valid_jwt"]
    oauth = auth.OAuth(
        grant=auth.JWTBearerGrant(lambda: jwt),
        client_id=ctx.get("client_id"),
        token_endpoint_auth_method="none" if ctx.get("client_id") else None,
        allow_private_networks=True,
    )
    _list_and_call(url, oauth, call=False)


@scenario("auth/enterprise-managed-authorization")
def enterprise(url: str) -> None:
    """ID token -> ID-JAG at the IdP -> access token at the authorization server."""
    ctx = context()
    id_token = ctx["idp_id_token"]
    grant = auth.TokenExchangeGrant(
        ctx["idp_token_endpoint"], lambda: id_token, idp_client_id=ctx.get("idp_client_id")
    )
    oauth = auth.OAuth(
        grant=grant,
        client_id=ctx["client_id"],
        client_secret=ctx["client_secret"],
        allow_private_networks=True,
    )
    _list_and_call(url, oauth)


@scenario("auth/dpop", "auth/dpop-nonce")
def dpop(url: str) -> None:
    """The authorization-code flow with DPoP-bound tokens."""
    _list_and_call(url, authorization_code(client_metadata_url=CIMD_URL, dpop=True))


def main(argv: list[str]) -> int:
    """Run the scenario the harness names against the URL it passes last."""
    logging.basicConfig(level=logging.INFO, stream=sys.stderr, format="%(name)s: %(message)s")
    name = os.environ.get("MCP_CONFORMANCE_SCENARIO", "")
    if len(argv) < 2 or not name:
        print("usage: MCP_CONFORMANCE_SCENARIO=<name> client.py <server-url>", file=sys.stderr)
        return 2
    handler = HANDLERS.get(name)
    if handler is None:
        print(f"no handler for scenario {name!r}", file=sys.stderr)
        return 2
    try:
        handler(argv[-1])
    except mcpclient.Error as exc:
        print(f"{type(exc).__name__} [{exc.failure_class}]: {exc}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
