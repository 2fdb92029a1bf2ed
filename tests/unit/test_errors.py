"""The error hierarchy (DESIGN.md §7 "Failure class → exception") and message bounding."""

from __future__ import annotations

import pickle

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mcpclient import (
    AuthError,
    CallDeniedError,
    CatalogError,
    ConfigError,
    ConnectionLostError,
    DeadlineExceededError,
    Error,
    FailureClass,
    ForkedError,
    HookFailedError,
    IndeterminateError,
    InteractionError,
    InvalidArgumentsError,
    LimitExceededError,
    NotProcessedError,
    ProtocolError,
    RequestCancelledError,
    ShutdownError,
    SkillError,
    ToolUnavailableError,
)
from mcpclient._core.limits import (
    ERROR_TRUNCATION_MARKER,
    MAX_MESSAGE_BYTES,
    TRUNCATION_MARKER,
    bound,
    cut_utf8,
    normalize_message,
    truncate,
    utf8_len,
)
from mcpclient.errors import error_for

FC = FailureClass
PROPERTY = settings(max_examples=50, deadline=None, database=None)

# DESIGN.md §7, written out independently of the library's own tables.
TABLE: dict[type[Error], list[FailureClass]] = {
    ConfigError: [FC.INVALID_CONFIG],
    InvalidArgumentsError: [FC.INVALID_ARGUMENTS],
    DeadlineExceededError: [FC.DEADLINE, FC.STARTUP_TIMEOUT],
    RequestCancelledError: [FC.CANCELLED],
    ShutdownError: [FC.SHUTDOWN],
    ForkedError: [FC.FORKED],
    ConnectionLostError: [FC.TRANSPORT_CLOSED, FC.FRAMING],
    IndeterminateError: [FC.INDETERMINATE],
    NotProcessedError: [FC.NOT_PROCESSED],
    HookFailedError: [FC.HOOK_FAILED],
    CallDeniedError: [FC.CALL_DENIED],
    ProtocolError: [FC.SERVER_PROTOCOL, FC.UNSUPPORTED_PROTOCOL, FC.REMOTE_HTTP],
    LimitExceededError: [FC.LIMIT_EXCEEDED, FC.CATALOG_OVER_LIMIT],
    CatalogError: [FC.CATALOG_INVALID, FC.CATALOG_STALE],
    ToolUnavailableError: [FC.TOOL_UNAVAILABLE, FC.TOOL_SCHEMA_CHANGED, FC.NOT_FOUND],
    AuthError: [FC.AUTH_REQUIRED, FC.AUTH_DENIED, FC.AUTH_EXPIRED, FC.AUTH_FAILED],
    InteractionError: [
        FC.ELICITATION_DECLINED,
        FC.ELICITATION_CANCELLED,
        FC.ELICITATION_INVALID,
        FC.ELICITATION_TIMEOUT,
        FC.SAMPLING_DENIED,
        FC.SAMPLING_OVER_BUDGET,
    ],
    SkillError: [FC.SKILL_INVALID],
}
NEVER_RAISED = [FC.REMOTE_TOOL_ERROR]
EXPECTED_CLASS = {fc: cls for cls, fcs in TABLE.items() for fc in fcs}
CLASSES = list(TABLE)


def test_table_covers_every_failure_class_once() -> None:
    listed = [fc for fcs in TABLE.values() for fc in fcs] + NEVER_RAISED
    assert sorted(listed) == sorted(FailureClass)
    assert len(listed) == len(set(listed)) == 35


@pytest.mark.parametrize("fc", list(FailureClass), ids=str)
def test_error_for_builds_the_one_class(fc: FailureClass) -> None:
    err = error_for(fc, "went wrong", binding="srv", op="call_tool")
    expected = EXPECTED_CLASS.get(fc, Error)
    assert type(err) is expected
    assert isinstance(err, Error)
    assert err.failure_class is fc
    assert err.binding == "srv"
    assert err.op == "call_tool"
    assert err.message == "went wrong"


@pytest.mark.parametrize("cls", CLASSES, ids=lambda c: c.__name__)
def test_class_refuses_foreign_failure_classes(cls: type[Error]) -> None:
    for fc in FailureClass:
        if fc in TABLE[cls]:
            assert cls("m", failure_class=fc).failure_class is fc
        else:
            with pytest.raises(TypeError):
                cls("m", failure_class=fc)


@pytest.mark.parametrize("cls", CLASSES, ids=lambda c: c.__name__)
def test_class_default_failure_class(cls: type[Error]) -> None:
    assert cls("m").failure_class in TABLE[cls]
    if len(TABLE[cls]) == 1:
        assert cls("m").failure_class is TABLE[cls][0]


def test_root_error_needs_a_failure_class() -> None:
    with pytest.raises(TypeError):
        Error("m")
    assert Error("m", failure_class=FC.REMOTE_TOOL_ERROR).failure_class is FC.REMOTE_TOOL_ERROR


@pytest.mark.parametrize(
    ("cls", "bases"),
    [
        (ConfigError, (ValueError,)),
        (InvalidArgumentsError, (ValueError,)),
        (DeadlineExceededError, (TimeoutError,)),
        (ConnectionLostError, (ConnectionError,)),
        (IndeterminateError, (ConnectionLostError, ConnectionError)),
        (ForkedError, (ShutdownError,)),
        (LimitExceededError, (ProtocolError,)),
        (ToolUnavailableError, (LookupError,)),
        (AuthError, (PermissionError,)),
        (RequestCancelledError, ()),
        (ShutdownError, ()),
        (ProtocolError, ()),
        (CatalogError, ()),
        (InteractionError, ()),
    ],
    ids=lambda v: getattr(v, "__name__", ""),
)
def test_builtin_bases(cls: type[Error], bases: tuple[type, ...]) -> None:
    assert issubclass(cls, Error)
    assert issubclass(cls, Exception)
    for base in bases:
        assert issubclass(cls, base)
        with pytest.raises(base):
            raise cls("m")
    assert cls.__name__.endswith("Error")


def test_unrelated_families_do_not_overlap() -> None:
    assert not issubclass(ConnectionLostError, ProtocolError)
    assert not issubclass(ProtocolError, ConnectionLostError)
    assert not issubclass(ConfigError, InvalidArgumentsError)
    assert not issubclass(DeadlineExceededError, ConnectionError)
    assert not issubclass(ShutdownError, ConnectionError)


@pytest.mark.parametrize("fc", list(FailureClass), ids=str)
def test_errors_pickle(fc: FailureClass) -> None:
    err = error_for(fc, "line one\nline two " + "é" * 600, binding="srv", op="read_resource")
    back = pickle.loads(pickle.dumps(err))
    assert type(back) is type(err)
    assert back.failure_class is fc
    assert back.binding == "srv"
    assert back.op == "read_resource"
    assert back.message == err.message
    assert str(back) == str(err)
    assert back.args == err.args
    assert back.code is None
    err.code = -32050
    assert pickle.loads(pickle.dumps(err)).code == -32050


def test_code_is_the_json_rpc_code_and_shows_in_repr() -> None:
    err = ProtocolError("the server answered error -32050: busy", op="call_tool", code=-32050)
    assert err.code == -32050
    assert repr(err).endswith("code=-32050)")
    assert "code=" not in repr(ProtocolError("plain"))
    assert ProtocolError("plain").code is None


def test_config_file_error_keeps_its_code_through_pickle() -> None:
    from mcpclient.errors import ConfigFileError

    err = ConfigFileError("bad", problems=("a: b",))
    back = pickle.loads(pickle.dumps(err))
    assert back.problems == ("a: b",) and back.code is None


def test_cause_is_kept_in_cause() -> None:
    cause = OSError("pipe closed")
    try:
        try:
            raise cause
        except OSError as exc:
            raise ConnectionLostError("lost", binding="srv", op="call_tool") from exc
    except ConnectionLostError as err:
        assert err.__cause__ is cause


def test_str_includes_binding_op_and_class() -> None:
    err = DeadlineExceededError("no answer in 60s", binding="srv", op="call_tool")
    text = str(err)
    assert "srv" in text
    assert "call_tool" in text
    assert "deadline" in text
    assert "no answer in 60s" in text
    assert str(ConfigError("bad")).endswith("[invalid_config]")
    shown = repr(err)
    assert "DeadlineExceededError" in shown and "srv" in shown and "call_tool" in shown


@pytest.mark.parametrize(
    ("raw", "normalized"),
    [
        ("plain", "plain"),
        ("line one\nline two", "line one line two"),
        ("a\r\n\r\nb", "a b"),
        ("tab\t\tseparated", "tab separated"),
        ("  padded  ", "padded"),
        ("nul\x00byte", "nul byte"),
        ("bell\x07 esc\x1b[31m", "bell esc [31m"),
        ("del\x7fc1\x85\x9f", "del c1"),
        ("bidi\u202eevil\u202c", "bidi evil"),
        ("zero\u200bwidth\ufeff", "zero width"),
        ("sep\u2028para\u2029", "sep para"),
        ("many     spaces", "many spaces"),
        ("", ""),
        ("é ü 日本", "é ü 日本"),
    ],
)
def test_messages_are_normalized(raw: str, normalized: str) -> None:
    assert ConfigError(raw).message == normalized
    assert error_for(FC.SHUTDOWN, raw).message == normalized


def test_message_bound_exact() -> None:
    fits = "a" * MAX_MESSAGE_BYTES
    assert ConfigError(fits).message == fits
    over = ConfigError("a" * (MAX_MESSAGE_BYTES + 1)).message
    assert over.endswith(ERROR_TRUNCATION_MARKER)
    assert ERROR_TRUNCATION_MARKER == "...[truncated]"
    assert ERROR_TRUNCATION_MARKER.isascii()
    assert utf8_len(over) == MAX_MESSAGE_BYTES == 1024
    assert over == "a" * (MAX_MESSAGE_BYTES - 14) + "...[truncated]"


@pytest.mark.parametrize("char", ["é", "€", "日", "\U0001f600"])
def test_message_truncation_never_splits_a_character(char: str) -> None:
    message = ConfigError("a" + char * 1000).message
    assert message.endswith("...[truncated]")
    body = message.removesuffix("...[truncated]")
    width = len(char.encode())
    kept = (MAX_MESSAGE_BYTES - 14 - 1) // width
    assert body == "a" + char * kept
    assert utf8_len(message) <= MAX_MESSAGE_BYTES
    message.encode("utf-8")  # strict: no lone surrogates either


def test_message_with_lone_surrogate_is_encodable() -> None:
    message = ConfigError("bad \ud800 text").message
    message.encode("utf-8")
    assert message.startswith("bad ")


@PROPERTY
@given(st.text(max_size=2000))
def test_normalize_message_properties(text: str) -> None:
    message = normalize_message(text)
    assert utf8_len(message) <= MAX_MESSAGE_BYTES
    assert message == message.strip()
    assert "  " not in message
    assert not any(ord(ch) < 0x20 or 0x7F <= ord(ch) <= 0x9F for ch in message)
    assert normalize_message(message) == message
    message.encode("utf-8")


# --- _core/limits: truncate and cut_utf8 ---


# Lone surrogates reach the bounding helpers from JSON "\ud800" escapes; utf8_len
# counts each as 3 bytes, so the cutters must keep them like any other character.
TEXT = st.text(
    st.one_of(st.characters(), st.sampled_from(["\ud800", "\udbff", "\udc00", "\udfff"])),
    max_size=200,
)


@PROPERTY
@given(TEXT, st.integers(min_value=0, max_value=300))
def test_cut_utf8_is_the_longest_fitting_prefix(text: str, max_bytes: int) -> None:
    cut = cut_utf8(text, max_bytes)
    assert text.startswith(cut)
    assert utf8_len(cut) <= max_bytes
    if cut != text:
        assert utf8_len(text[: len(cut) + 1]) > max_bytes


@PROPERTY
@given(TEXT, st.integers(min_value=0, max_value=300))
def test_truncate_properties(text: str, max_bytes: int) -> None:
    out, cut = truncate(text, max_bytes)
    if utf8_len(text) <= max_bytes:
        assert (out, cut) == (text, False)
        return
    assert cut
    assert utf8_len(out) <= max_bytes
    marker_bytes = utf8_len(TRUNCATION_MARKER)
    if max_bytes > marker_bytes:
        assert out.endswith(TRUNCATION_MARKER)
        body = out.removesuffix(TRUNCATION_MARKER)
        assert body == cut_utf8(text, max_bytes - marker_bytes)
    else:
        assert out == cut_utf8(text, max_bytes)
    assert bound(text, max_bytes) == out


def test_truncation_markers() -> None:
    assert TRUNCATION_MARKER == "\u2026[truncated]"
    assert utf8_len(TRUNCATION_MARKER) == 14
    assert utf8_len(ERROR_TRUNCATION_MARKER) == 14
    assert truncate("abcdef", 6) == ("abcdef", False)
    assert truncate("x" * 20, 15) == ("x" + TRUNCATION_MARKER, True)
    assert truncate("x" * 20, 14) == ("x" * 14, True)
    assert truncate("x" * 20, 3) == ("xxx", True)
    assert truncate("x" * 20, 0) == ("", True)
    assert truncate("é" * 10, 17, ERROR_TRUNCATION_MARKER) == ("é" + "...[truncated]", True)
    assert truncate("é" * 10, 16, ERROR_TRUNCATION_MARKER) == ("é" + "...[truncated]", True)
    assert truncate("é" * 10, 15, ERROR_TRUNCATION_MARKER) == ("...[truncated]", True)


@pytest.mark.parametrize(
    ("text", "max_bytes", "expected"),
    [
        ("abc", 3, "abc"),
        ("abc", 2, "ab"),
        ("aé", 2, "a"),
        ("aé", 3, "aé"),
        ("a€", 3, "a"),
        ("a\U0001f600", 4, "a"),
        ("a\U0001f600", 5, "a\U0001f600"),
        ("日本語", 7, "日本"),
        ("", 0, ""),
        ("x", 0, ""),
        ("\ud800abc", 4, "\ud800a"),
        ("a\udfff", 3, "a"),
        ("a\udfffb", 4, "a\udfff"),
        ("\ud83d\ude00x", 6, "\ud83d\ude00"),
    ],
)
def test_cut_utf8_examples(text: str, max_bytes: int, expected: str) -> None:
    assert cut_utf8(text, max_bytes) == expected


def test_cut_utf8_keeps_lone_surrogates_it_counts() -> None:
    text = "\ud800" + "a" * 10
    assert utf8_len(text) == 13
    assert cut_utf8(text, 5) == "\ud800aa"
