"""mcpclient._internal.wire.oauth: the OAuth documents through cattrs, and their bounds.

Every document: a good one, a required field missing, wrong types, oversize
values, extra fields; cattrs' exceptions translated (never escaping, never
echoing a secret); and a hypothesis fuzz (at most 50 examples a property,
DESIGN.md §7) that no input gets anything but an AuthError out of a parser,
and that what comes out respects the bounds.
"""

from __future__ import annotations

from typing import Any

import pytest
from cattrs.errors import ClassValidationError
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from mcpclient._internal.wire import errors as wire_errors
from mcpclient._internal.wire import oauth as wire
from mcpclient._internal.wire.errors import FieldError
from mcpclient._internal.wire.oauth import (
    MAX_CLIENT_ID,
    MAX_EXPIRES_IN,
    MAX_ITEM_CHARS,
    MAX_LIST_ITEMS,
    MAX_VALUE_CHARS,
    TOKEN_TYPE_ID_JAG,
    ErrorReply,
    ProtectedResource,
    ServerMetadata,
)
from mcpclient.errors import AuthError, ConfigError, FailureClass

SECRET = "tok-SECRET-0123456789"
ISSUER = "https://as.example"
WHO = "https://as.example"
WHAT = "token endpoint"

PROPERTY = settings(
    max_examples=50,
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)


def refuse_http(url: str, what: str) -> None:
    """A URL check like the policy's: refuses anything but https (module level: hashable)."""
    if not url.startswith("https://"):
        raise AuthError(f"the {what} URL must be https", failure_class=FailureClass.AUTH_FAILED)


def metadata(**changes: Any) -> dict[str, Any]:
    doc: dict[str, Any] = {
        "issuer": ISSUER,
        "authorization_endpoint": ISSUER + "/authorize",
        "token_endpoint": ISSUER + "/token",
        "registration_endpoint": ISSUER + "/register",
        "scopes_supported": ["read", "write"],
        "code_challenge_methods_supported": ["S256"],
        "token_endpoint_auth_methods_supported": ["none", "private_key_jwt"],
        "token_endpoint_auth_signing_alg_values_supported": ["ES256"],
        "grant_types_supported": ["authorization_code"],
        "authorization_response_iss_parameter_supported": True,
        "client_id_metadata_document_supported": True,
        "dpop_signing_alg_values_supported": ["ES256"],
        "authorization_grant_profiles_supported": ["urn:x"],
    }
    doc.update(changes)
    return {k: v for k, v in doc.items() if v is not ...}


def refused(call: Any) -> AuthError:
    with pytest.raises(AuthError) as caught:
        call()
    assert caught.value.failure_class is FailureClass.AUTH_FAILED
    return caught.value


# --- protected resource metadata (RFC 9728) ---


def test_protected_resource_maps_a_good_document() -> None:
    doc = {
        "resource": "https://mcp.example/mcp",
        "authorization_servers": [ISSUER],
        "scopes_supported": ["a", "b"],
        "bearer_methods_supported": ["header"],  # an extra field: ignored
        "url": "https://elsewhere.example",  # not a document field: the argument wins
    }
    found = wire.protected_resource(doc, url="https://mcp.example/.well-known/x")
    assert found == ProtectedResource(
        resource="https://mcp.example/mcp",
        authorization_servers=(ISSUER,),
        scopes_supported=("a", "b"),
        url="https://mcp.example/.well-known/x",
    )


def test_protected_resource_is_lenient_about_every_field() -> None:
    found = wire.protected_resource({}, url="u")
    assert (found.resource, found.authorization_servers, found.scopes_supported) == ("", (), ())
    doc = {"resource": 5, "authorization_servers": ISSUER, "scopes_supported": [1, "", "ok", None]}
    found = wire.protected_resource(doc, url="u")
    assert (found.resource, found.authorization_servers, found.scopes_supported) == (
        "",
        (),
        ("ok",),
    )
    assert (
        wire.protected_resource({"resource": "x" * (MAX_VALUE_CHARS + 1)}, url="u").resource == ""
    )


def test_protected_resource_lists_are_bounded() -> None:
    many = [f"s{i}" for i in range(MAX_LIST_ITEMS + 10)]
    long = "x" * (MAX_ITEM_CHARS + 1)
    found = wire.protected_resource({"scopes_supported": [long, *many]}, url="u")
    assert found.scopes_supported == tuple(many[:MAX_LIST_ITEMS])


def test_protected_resource_refuses_what_is_not_an_object() -> None:
    assert "not a JSON object" in refused(lambda: wire.protected_resource([], url="u")).message


# --- authorization server metadata (RFC 8414 / OIDC) ---


def test_server_metadata_maps_a_good_document() -> None:
    meta = wire.server_metadata(metadata(), check_url=refuse_http, who=WHO)
    assert meta == ServerMetadata(
        ISSUER,
        ISSUER + "/authorize",
        ISSUER + "/token",
        registration_endpoint=ISSUER + "/register",
        scopes_supported=("read", "write"),
        code_challenge_methods_supported=("S256",),
        token_endpoint_auth_methods_supported=("none", "private_key_jwt"),
        token_endpoint_auth_signing_alg_values_supported=("ES256",),
        grant_types_supported=("authorization_code",),
        authorization_response_iss_parameter_supported=True,
        client_id_metadata_document_supported=True,
        dpop_signing_alg_values_supported=("ES256",),
        authorization_grant_profiles_supported=("urn:x",),
    )


def test_server_metadata_absent_fields_and_extra_fields() -> None:
    doc = {"issuer": ISSUER, "token_endpoint": ISSUER + "/t", "legacy_defaults": True, "x": [1]}
    meta = wire.server_metadata(doc, check_url=refuse_http, who=WHO)
    assert meta == ServerMetadata(ISSUER, None, ISSUER + "/t")
    assert meta.legacy_defaults is False  # never read from a document
    assert meta.code_challenge_methods_supported is None  # absent: a distinct case


def test_server_metadata_wrong_types_are_lenient_outside_endpoints() -> None:
    doc = metadata(
        scopes_supported="read write",
        code_challenge_methods_supported="S256",
        grant_types_supported=[1, None, "ok"],
        authorization_response_iss_parameter_supported="true",
        client_id_metadata_document_supported=1,
        registration_endpoint=None,
    )
    meta = wire.server_metadata(doc, check_url=refuse_http, who=WHO)
    assert meta.scopes_supported == ()
    assert meta.code_challenge_methods_supported == ()  # present but unusable
    assert meta.grant_types_supported == ("ok",)
    assert meta.authorization_response_iss_parameter_supported is False
    assert meta.client_id_metadata_document_supported is False
    assert meta.registration_endpoint is None


def test_server_metadata_lists_are_bounded() -> None:
    many = ["m" * MAX_ITEM_CHARS] * (MAX_LIST_ITEMS * 3) + ["x" * (MAX_ITEM_CHARS + 1)]
    meta = wire.server_metadata(metadata(scopes_supported=many), check_url=refuse_http, who=WHO)
    assert len(meta.scopes_supported) == MAX_LIST_ITEMS


@pytest.mark.parametrize(
    ("changes", "expected"),
    [
        (
            {"token_endpoint": ...},
            f"the authorization server metadata of {WHO} has no token_endpoint",
        ),
        (
            {"token_endpoint": None},
            f"the authorization server metadata of {WHO} has no token_endpoint",
        ),
        (
            {"token_endpoint": 42},
            "the authorization server metadata has a token_endpoint that is not a string",
        ),
        (
            {"authorization_endpoint": ["x"]},
            "the authorization server metadata has a authorization_endpoint that is not a string",
        ),
        ({"registration_endpoint": "http://as.example/r"}, "the registration endpoint URL must be"),
        ({"token_endpoint": "http://as.example/t"}, "the token endpoint URL must be https"),
        ({"issuer": ...}, f"the authorization server metadata of {WHO} names no issuer"),
        ({"issuer": 7}, f"the authorization server metadata of {WHO} names no issuer"),
    ],
)
def test_server_metadata_refusals(changes: dict[str, Any], expected: str) -> None:
    error = refused(
        lambda: wire.server_metadata(metadata(**changes), check_url=refuse_http, who=WHO)
    )
    assert error.message == expected or error.message.startswith(expected)


def test_server_metadata_refuses_what_is_not_an_object() -> None:
    error = refused(lambda: wire.server_metadata("{}", check_url=refuse_http, who=WHO))
    assert "not a JSON object" in error.message


def test_document_issuer() -> None:
    assert wire.document_issuer({"issuer": ISSUER}) == ISSUER
    assert wire.document_issuer({"issuer": 5}) is None
    assert wire.document_issuer([ISSUER]) is None


def test_the_metadata_converter_is_built_once_per_url_policy() -> None:
    from mcpclient.auth._net import URLPolicy
    from mcpclient.auth.discovery import _URLRule

    assert wire._metadata(refuse_http) is wire._metadata(refuse_http)
    # discovery's check is a value: equal policies share one converter.
    first = _URLRule(URLPolicy(allow_loopback=True))
    second = _URLRule(URLPolicy(allow_loopback=True))
    assert first is not second
    assert wire._metadata(first) is wire._metadata(second)
    assert wire._metadata(first) is not wire._metadata(_URLRule(URLPolicy(allow_loopback=False)))


# --- dynamic client registration (RFC 7591) ---


def test_registration_maps_a_good_reply() -> None:
    doc = {
        "client_id": "c-1",
        "client_secret": SECRET,
        "token_endpoint_auth_method": "client_secret_post",
        "client_id_issued_at": 1,  # extra: ignored
        "redirect_uris": ["http://127.0.0.1/cb"],
    }
    granted = wire.registration(doc, who=WHO)
    assert (granted.client_id, granted.client_secret) == ("c-1", SECRET)
    assert granted.token_endpoint_auth_method == "client_secret_post"
    assert SECRET not in repr(granted)


def test_registration_is_lenient_about_the_optional_fields() -> None:
    granted = wire.registration(
        {"client_id": "c", "client_secret": "", "token_endpoint_auth_method": 5}, who=WHO
    )
    assert (granted.client_secret, granted.token_endpoint_auth_method) == (None, None)
    granted = wire.registration({"client_id": "c", "client_secret": 7}, who=WHO)
    assert granted.client_secret is None


@pytest.mark.parametrize(
    ("doc", "expected"),
    [
        ({}, f"client registration at {WHO} returned no client_id"),
        ({"client_id": None}, f"client registration at {WHO} returned no client_id"),
        ({"client_id": 7}, f"client registration at {WHO} returned no client_id"),
        ({"client_id": ""}, f"client registration at {WHO} returned no client_id"),
        ("<html>", f"client registration at {WHO} returned no client_id"),
        ({"client_id": "c\x00d"}, f"the registration at {WHO} is unusable: a malformed client_id"),
        (
            {"client_id": "c" * (MAX_CLIENT_ID + 1)},
            f"the registration at {WHO} is unusable: a malformed client_id",
        ),
    ],
)
def test_registration_refusals(doc: object, expected: str) -> None:
    assert refused(lambda: wire.registration(doc, who=WHO)).message == expected


def test_registration_client_id_bound_is_inclusive() -> None:
    assert wire.registration({"client_id": "c" * MAX_CLIENT_ID}, who=WHO).client_id


# --- token responses (RFC 6749 §5.1) ---


def test_token_reply_maps_a_good_reply() -> None:
    body = {
        "access_token": SECRET,
        "token_type": "DPoP",
        "refresh_token": "r e f",  # a form value: spaces allowed
        "expires_in": 3600,
        "scope": "read  write",
        "id_token": "x",  # extra: ignored
    }
    granted = wire.token_reply(body, what=WHAT)
    assert (granted.access_token, granted.token_type, granted.refresh_token) == (
        SECRET,
        "DPoP",
        "r e f",
    )
    assert (granted.expires_in, granted.scope) == (3600.0, ("read", "write"))
    assert SECRET not in repr(granted)


def test_token_reply_absent_fields() -> None:
    granted = wire.token_reply({"access_token": "a", "refresh_token": ""}, what=WHAT)
    assert granted.token_type == "Bearer"
    assert (granted.refresh_token, granted.expires_in, granted.scope) == (None, None, None)


@pytest.mark.parametrize(
    ("value", "seconds"),
    [("120", 120.0), (" 7 ", 7.0), (0, 0.0), (1.5, 1.5), (10**12, float(MAX_EXPIRES_IN))],
)
def test_token_reply_expires_in(value: object, seconds: float) -> None:
    assert wire.token_reply({"access_token": "a", "expires_in": value}, what=WHAT).expires_in == (
        seconds
    )


@pytest.mark.parametrize("value", [10**400, "9" * 5000])
def test_token_reply_expires_in_beyond_any_float_is_a_year(value: object) -> None:
    # float(10**400) overflows and int("9" * 5000) exceeds Python's digit limit.
    granted = wire.token_reply({"access_token": "a", "expires_in": value}, what=WHAT)
    assert granted.expires_in == float(MAX_EXPIRES_IN)


@pytest.mark.parametrize(
    ("fields", "expected"),
    [
        ({"access_token": ...}, "the token endpoint reply has no access_token"),
        ({"access_token": None}, "the token endpoint reply has no access_token"),
        ({"access_token": ""}, "the token endpoint reply's access_token is not a non-empty string"),
        ({"access_token": 5}, "the token endpoint reply's access_token is not a non-empty string"),
        (
            {"access_token": "a" * (MAX_VALUE_CHARS + 1)},
            f"the token endpoint reply's access_token is longer than {MAX_VALUE_CHARS} characters",
        ),
        (
            {"access_token": "has space"},
            "the token endpoint reply's access_token holds characters a token may not hold",
        ),
        (
            {"refresh_token": "r\n"},
            "the token endpoint reply's refresh_token holds characters a token may not hold",
        ),
        (
            {"refresh_token": 7},
            "the token endpoint reply's refresh_token is not a non-empty string",
        ),
        ({"token_type": 7}, "the token endpoint issued an unsupported token type 'int'"),
        ({"token_type": None}, "the token endpoint issued an unsupported token type 'NoneType'"),
        ({"expires_in": -1}, "the token endpoint reply's expires_in is negative"),
        ({"expires_in": "soon"}, "the token endpoint reply's expires_in is not a number"),
        ({"expires_in": "-5"}, "the token endpoint reply's expires_in is not a number"),
        ({"expires_in": "\u00b2"}, "the token endpoint reply's expires_in is not a number"),
        ({"expires_in": True}, "the token endpoint reply's expires_in is not a number"),
        ({"expires_in": float("nan")}, "the token endpoint reply's expires_in is not a number"),
        ({"expires_in": [60]}, "the token endpoint reply's expires_in is not a number"),
        ({"scope": ["a"]}, "the token endpoint reply's scope is not a string"),
    ],
)
def test_token_reply_refusals(fields: dict[str, Any], expected: str) -> None:
    body = {"access_token": "a", **fields}
    body = {k: v for k, v in body.items() if v is not ...}
    assert refused(lambda: wire.token_reply(body, what=WHAT)).message == expected


def test_token_reply_refuses_what_is_not_an_object() -> None:
    error = refused(lambda: wire.token_reply("access_token=a", what=WHAT))
    assert error.message == "the token endpoint answered HTTP 200 without a JSON object"


def test_the_first_problem_in_field_order_decides() -> None:
    body = {"access_token": 5, "scope": 5, "expires_in": "x"}
    assert "access_token" in refused(lambda: wire.token_reply(body, what=WHAT)).message


# --- token exchange (RFC 8693) and error replies ---


def test_exchange_reply() -> None:
    body = {"issued_token_type": TOKEN_TYPE_ID_JAG, "access_token": SECRET, "token_type": 5}
    assert wire.exchange_reply(body, what="idp").access_token == SECRET
    no_jag = "the idp did not issue an ID-JAG (issued_token_type differs)"
    for bad in ({"access_token": SECRET}, {"issued_token_type": "x", "access_token": 5}):
        assert refused(lambda bad=bad: wire.exchange_reply(bad, what="idp")).message == no_jag
    missing = {"issued_token_type": TOKEN_TYPE_ID_JAG}
    message = refused(lambda: wire.exchange_reply(missing, what="idp")).message
    assert message == "the idp reply has no access_token"


def test_error_reply_never_refuses() -> None:
    assert wire.error_reply({"error": "invalid_grant", "error_description": "why"}) == ErrorReply(
        "invalid_grant", "why"
    )
    assert wire.error_reply({"error": "", "error_description": 5}) == ErrorReply()
    assert wire.error_reply({"error": 5}) == ErrorReply()
    assert wire.error_reply(["error"]) == ErrorReply()
    long = wire.error_reply({"error_description": "d" * 100_000}).error_description
    assert long is not None and len(long) == 64 * 1024


# --- translation: nothing of cattrs escapes, no secret in a message ---


@pytest.mark.parametrize(
    "call",
    [
        lambda: wire.token_reply({"access_token": SECRET + " x"}, what=WHAT),
        lambda: wire.token_reply({"access_token": SECRET * 2000}, what=WHAT),
        lambda: wire.token_reply({"access_token": "a", "refresh_token": SECRET + "\n"}, what=WHAT),
        lambda: wire.token_reply({"access_token": "a", "token_type": [SECRET]}, what=WHAT),
        lambda: wire.token_reply({"access_token": "a", "expires_in": SECRET}, what=WHAT),
        lambda: wire.token_reply({"access_token": "a", "scope": {SECRET: 1}}, what=WHAT),
        lambda: wire.exchange_reply({"issued_token_type": SECRET}, what="idp"),
        lambda: wire.registration({"client_id": SECRET + "\x00", "client_secret": SECRET}, who=WHO),
        lambda: wire.server_metadata(
            metadata(token_endpoint="http://" + SECRET), check_url=refuse_http, who=WHO
        ),
    ],
)
def test_no_refusal_echoes_a_value(call: Any) -> None:
    error = refused(call)
    assert SECRET not in f"{error} {error!r} {error.message}"


def test_auth_error_translates_cattrs_exceptions_without_their_text() -> None:
    # cattrs' own messages quote the value ("could not convert string to float: '...'").
    group = ClassValidationError(
        "Structuring class X",
        [_noted(ValueError(f"could not convert {SECRET!r}"), "expires_at")],
        object,
    )
    messages = wire_errors.Messages("not an object", "the {kind}'s {field} is malformed")
    error = wire_errors.auth_error(group, messages, {"kind": "thing"})
    assert error.message == "the thing's expires_at is malformed"
    assert SECRET not in repr(error)
    missing = ClassValidationError("x", [_noted(KeyError("client_id"), "client_id")], object)
    messages = wire_errors.Messages("o", "m", {"*": "{who} sent no {field}"})
    assert (
        wire_errors.auth_error(missing, messages, {"who": WHO}).message
        == f"{WHO} sent no client_id"
    )
    problem = wire_errors.auth_error(
        FieldError("{what} said {kind!r}", kind="int"), messages, {"what": "it"}
    )
    assert problem.message == "it said 'int'"
    # A validator's ConfigError names the field, never the value: its message is kept.
    config = ClassValidationError("x", [ConfigError("X.secret must be short")], object)
    messages = wire_errors.Messages("o", "m", refused="stored {kind}: {problem}")
    assert (
        wire_errors.auth_error(config, messages, {"kind": "k"}).message
        == "stored k: X.secret must be short"
    )


def _noted(exc: Exception, name: str) -> Exception:
    from cattrs.errors import AttributeValidationNote

    exc.__notes__ = [AttributeValidationNote(f"Structuring @ attribute {name}", name, object)]
    return exc


# --- fuzz ---

_scalars = (
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=12)
)
json_values = st.recursive(
    _scalars,
    lambda children: (
        st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=8), children, max_size=4)
    ),
    max_leaves=20,
)
_FIELDS = [
    "issuer",
    "resource",
    "authorization_servers",
    "scopes_supported",
    "token_endpoint",
    "authorization_endpoint",
    "registration_endpoint",
    "code_challenge_methods_supported",
    "client_id_metadata_document_supported",
    "client_id",
    "client_secret",
    "token_endpoint_auth_method",
    "access_token",
    "refresh_token",
    "token_type",
    "expires_in",
    "scope",
    "issued_token_type",
    "error",
    "error_description",
]
_field_values = (
    json_values
    | st.text(alphabet=st.characters(codec="utf-8"), max_size=40)
    | st.just("https://as.example/x")
    | st.just(TOKEN_TYPE_ID_JAG)
    | st.lists(st.text(max_size=300), max_size=80)
)
documents = json_values | st.dictionaries(st.sampled_from(_FIELDS), _field_values, max_size=12)


def _check_strings(values: tuple[str, ...] | None) -> None:
    if values is not None:
        assert len(values) <= MAX_LIST_ITEMS
        assert all(isinstance(v, str) and 0 < len(v) <= MAX_ITEM_CHARS for v in values)


@PROPERTY
@given(documents)
@example({"access_token": "a", "expires_in": "\u0663"})
@example({"client_id": "c", "token_endpoint": "https://as.example/x", "issuer": "i"})
def test_no_document_gets_anything_but_an_auth_error_out(doc: object) -> None:
    for parse in (
        lambda: wire.protected_resource(doc, url="u"),
        lambda: wire.server_metadata(doc, check_url=refuse_http, who=WHO),
        lambda: wire.registration(doc, who=WHO),
        lambda: wire.token_reply(doc, what=WHAT),
        lambda: wire.exchange_reply(doc, what=WHAT),
        lambda: wire.error_reply(doc),
    ):
        try:
            value = parse()
        except AuthError as exc:
            assert exc.failure_class is FailureClass.AUTH_FAILED
            assert exc.message
            continue
        _check_bounds(value)


def _check_bounds(value: object) -> None:
    if isinstance(value, ProtectedResource):
        _check_strings(value.authorization_servers)
        _check_strings(value.scopes_supported)
        assert isinstance(value.resource, str)
    elif isinstance(value, ServerMetadata):
        assert value.token_endpoint.startswith("https://")
        for endpoint in (value.authorization_endpoint, value.registration_endpoint):
            assert endpoint is None or endpoint.startswith("https://")
        _check_strings(value.scopes_supported)
        _check_strings(value.code_challenge_methods_supported)
        assert value.legacy_defaults is False
    elif isinstance(value, wire.Registration):
        assert 0 < len(value.client_id) <= MAX_CLIENT_ID and value.client_id.isprintable()
        assert value.client_secret is None or value.client_secret
    elif isinstance(value, wire.TokenReply):
        assert 0 < len(value.access_token) <= MAX_VALUE_CHARS
        assert all(0x21 <= ord(c) <= 0x7E for c in value.access_token)
        assert value.expires_in is None or 0 <= value.expires_in <= MAX_EXPIRES_IN
        assert value.scope is None or all(
            s and not any(c.isspace() for c in s) for s in value.scope
        )
    elif isinstance(value, wire.ExchangeReply):
        assert value.issued_token_type == TOKEN_TYPE_ID_JAG
    else:
        assert isinstance(value, ErrorReply)
        for text in (value.error, value.error_description):
            assert text is None or (isinstance(text, str) and len(text) <= 64 * 1024)


def test_server_metadata_keeps_the_device_authorization_endpoint() -> None:
    # RFC 8628 §4: the endpoint of the device authorization grant, URL-checked like the others.
    doc = metadata(device_authorization_endpoint=ISSUER + "/device_authorization")
    meta = wire.server_metadata(doc, check_url=refuse_http, who=WHO)
    assert meta.device_authorization_endpoint == ISSUER + "/device_authorization"
    assert (
        wire.server_metadata(
            metadata(), check_url=refuse_http, who=WHO
        ).device_authorization_endpoint
        is None
    )
    error = refused(
        lambda: wire.server_metadata(
            metadata(device_authorization_endpoint="http://as.example/device"),
            check_url=refuse_http,
            who=WHO,
        )
    )
    assert "device authorization endpoint" in error.message
