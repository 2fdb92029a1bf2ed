"""The ``mcpclient`` command's pure parts: parsing, coercion, envelope, exit codes, output.

End-to-end runs against real servers are in tests/integration/test_cli.py.
"""

from __future__ import annotations

import io
import json
import re
from pathlib import Path
from typing import Any

import jsonschema
import pytest

import mcpclient
from mcpclient.cli import main
from mcpclient.cli.coerce import coerce, merge_arguments, parse_json_object, parse_pairs
from mcpclient.cli.envelope import CliError, failure, failure_of, render, success
from mcpclient.cli.exits import ExitCode, describe, exit_code_for
from mcpclient.cli.output import Output, progress_bar, progress_line, scrub, wants_color
from mcpclient.cli.parser import STDIO, parse, subcommand_index
from mcpclient.cli.target import split_stdio
from mcpclient.errors import FailureClass

ROOT = Path(__file__).resolve().parents[2]
SCHEMA = json.loads((ROOT / "tests" / "fixtures" / "cli_envelope.schema.json").read_text())
VALIDATOR = jsonschema.Draft202012Validator(SCHEMA)

TOOL_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "n": {"type": "integer"},
        "x": {"type": "number"},
        "flag": {"type": "boolean"},
        "tags": {"type": "array", "items": {"type": "string"}},
        "opts": {"type": "object"},
        "name": {"type": "string"},
        "either": {"type": ["string", "number"]},
        "maybe": {"anyOf": [{"type": "integer"}, {"type": "null"}]},
        "mode": {"enum": [1, 2, 3]},
        "free": {},
    },
}


# --- coercion -----------------------------------------------------------------


@pytest.mark.parametrize(
    ("key", "text", "value"),
    [
        ("n", "3", 3),
        ("n", "-7", -7),
        ("n", "3.0", 3),
        ("x", "2.5", 2.5),
        ("x", "4", 4),
        ("flag", "true", True),
        ("flag", "false", False),
        ("tags", '["a", "b"]', ["a", "b"]),
        ("opts", '{"deep": {"k": 1}}', {"deep": {"k": 1}}),
        ("name", "42", "42"),
        ("name", "true", "true"),
        ("name", "", ""),
        ("either", "12", "12"),
        ("maybe", "null", None),
        ("maybe", "5", 5),
        ("mode", "2", 2),
        ("free", "17", "17"),
        ("unlisted", '{"a": 1}', '{"a": 1}'),
    ],
)
def test_values_are_coerced_by_the_schema(key: str, text: str, value: Any) -> None:
    got = coerce(TOOL_SCHEMA, key, text)
    assert got == value and type(got) is type(value)


@pytest.mark.parametrize(
    ("key", "text"),
    [
        ("n", "abc"),
        ("n", "2.5"),
        ("n", "true"),
        ("x", "NaN"),
        ("x", "Infinity"),
        ("flag", "yes"),
        ("flag", "1"),
        ("tags", '{"a": 1}'),
        ("tags", "a,b"),
        ("opts", "[1]"),
    ],
)
def test_a_value_that_does_not_fit_is_invalid_arguments(key: str, text: str) -> None:
    with pytest.raises(CliError) as caught:
        coerce(TOOL_SCHEMA, key, text)
    assert caught.value.exit_code == ExitCode.INVALID_ARGUMENTS
    assert caught.value.error_class == "invalid_arguments"
    assert repr(key) in caught.value.message


def test_without_a_schema_values_are_strings() -> None:
    assert coerce(None, "a", "1") == "1"
    assert coerce({"type": "object"}, "a", "[1]") == "[1]"
    assert coerce({"properties": "nonsense"}, "a", "1") == "1"


def test_pairs_split_at_the_first_equals_sign() -> None:
    assert parse_pairs(["a=1", "b=x=y", "c="]) == [("a", "1"), ("b", "x=y"), ("c", "")]
    for bad in (["novalue"], ["=1"], ["a=1", "a=2"]):
        with pytest.raises(CliError) as caught:
            parse_pairs(bad)
        assert caught.value.exit_code == ExitCode.USAGE


def test_pairs_are_laid_over_args_json() -> None:
    base = parse_json_object('{"n": 1, "name": "kept"}', "--args")
    assert merge_arguments(TOOL_SCHEMA, base, [("n", "2")]) == {"n": 2, "name": "kept"}
    for text in ("[1]", "not json", "NaN"):
        with pytest.raises(CliError) as caught:
            parse_json_object(text, "--args")
        assert caught.value.exit_code == ExitCode.INVALID_ARGUMENTS


# --- parsing ------------------------------------------------------------------


def test_the_stdio_command_is_everything_after_the_first_double_dash() -> None:
    assert split_stdio(["call", "echo", "--", "python", "-m", "x", "--", "y"]) == (
        ["call", "echo"],
        ["python", "-m", "x", "--", "y"],
    )
    assert split_stdio(["list", "srv"]) == (["list", "srv"], None)


def test_a_stdio_server_keeps_the_other_positionals_in_place() -> None:
    args = parse(["call", "echo", "message=hi"], ["python", "-m", "server"])
    assert args.server is None
    assert args.tool == "echo"
    assert args.pairs == ["message=hi"]
    args = parse(["--json", "--timeout", "3", "call", "add", "a=1"], ["srv"])
    assert (args.json, args.timeout, args.tool, args.pairs) == (True, 3.0, "add", ["a=1"])
    args = parse(["export", "other", "--provider", "openai_chat"], ["srv"])
    assert args.servers == [None, "other"]
    assert STDIO not in vars(args).values()


def test_common_options_work_before_and_after_the_command() -> None:
    before = parse(["--json", "--timeout", "2.5", "list", "srv"], None)
    after = parse(["list", "srv", "--json", "--timeout", "2.5"], None)
    assert (before.json, before.timeout) == (after.json, after.timeout) == (True, 2.5)
    plain = parse(["list", "srv"], None)
    assert (plain.json, plain.timeout, plain.quiet) == (False, None, False)
    assert parse(["--header", "A: b", "list", "u"], None).header == ["A: b"]


def test_subcommand_index_skips_option_values() -> None:
    assert subcommand_index(["--timeout", "5", "list", "x"]) == 2
    assert subcommand_index(["--json", "call"]) == 1
    assert subcommand_index(["--json"]) is None


@pytest.mark.parametrize(
    "words",
    [
        ["bogus"],
        [],
        ["call", "srv"],
        ["list"],
        ["list", "srv", "--timeout", "0"],
        ["list", "srv", "--timeout", "soon"],
        ["export", "srv"],
        ["export", "srv", "--provider", "nobody"],
        ["config"],
        ["config", "convert", "file.json"],
    ],
)
def test_usage_errors_raise_usage(words: list[str]) -> None:
    with pytest.raises(CliError) as caught:
        parse(words, None)
    assert caught.value.exit_code == ExitCode.USAGE


def test_double_dash_is_refused_for_commands_without_a_server() -> None:
    for words in (["servers"], ["demo"], ["config", "validate"]):
        with pytest.raises(CliError) as caught:
            parse(words, ["python"])
        assert caught.value.exit_code == ExitCode.USAGE


def test_main_reports_a_usage_error_as_exit_1_and_an_envelope() -> None:
    stdout, stderr = io.StringIO(), io.StringIO()
    assert main(["--json", "call", "srv"], stdout=stdout, stderr=stderr, environ={}) == 1
    doc = json.loads(stdout.getvalue())
    VALIDATOR.validate(doc)
    assert doc["ok"] is False and doc["exit_code"] == 1 and doc["command"] == "call"
    assert doc["error"]["class"] == "usage"
    stdout, stderr = io.StringIO(), io.StringIO()
    assert main(["bogus"], stdout=stdout, stderr=stderr, environ={}) == 1
    assert stdout.getvalue() == ""
    assert "invalid choice: 'bogus'" in stderr.getvalue()


def test_help_documents_the_exit_codes_and_the_envelope(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--help"]) == 0
    text = capsys.readouterr().out
    for code in ExitCode:
        assert re.search(rf"^\s+{int(code)}\s+\S", text, re.M), code
    assert '"ok": true' in text and '"error": {"class"' in text and "docs/cli.md" in text
    assert main(["call", "--help"]) == 0
    text = capsys.readouterr().out
    assert "key=value" in text and "exit codes:" in text


# --- exit codes and envelope --------------------------------------------------


def test_every_failure_class_has_its_exit_code() -> None:
    expected = {
        FailureClass.INVALID_CONFIG: 1,
        FailureClass.REMOTE_TOOL_ERROR: 2,
        FailureClass.AUTH_REQUIRED: 3,
        FailureClass.AUTH_DENIED: 3,
        FailureClass.AUTH_EXPIRED: 3,
        FailureClass.AUTH_FAILED: 3,
        FailureClass.TRANSPORT_CLOSED: 4,
        FailureClass.REMOTE_HTTP: 4,
        FailureClass.STARTUP_TIMEOUT: 4,
        FailureClass.DEADLINE: 4,
        FailureClass.INDETERMINATE: 4,
        FailureClass.NOT_PROCESSED: 4,
        FailureClass.SHUTDOWN: 4,
        FailureClass.NOT_FOUND: 5,
        FailureClass.TOOL_UNAVAILABLE: 5,
        FailureClass.TOOL_SCHEMA_CHANGED: 5,
        FailureClass.INVALID_ARGUMENTS: 6,
        FailureClass.CANCELLED: 130,
    }
    for fc in FailureClass:
        assert exit_code_for(fc) == expected.get(fc, 7), fc
    assert "remote_tool_error" in describe()


def test_failure_of_classifies_library_errors() -> None:
    err = mcpclient.DeadlineExceededError("too slow", op="call_tool")
    assert failure_of(err) == ("deadline", "too slow", ExitCode.UNREACHABLE)
    assert failure_of(KeyboardInterrupt())[2] == ExitCode.INTERRUPTED
    cli = CliError("nope", error_class="not_found", exit_code=ExitCode.NOT_FOUND)
    assert failure_of(cli) == ("not_found", "nope", ExitCode.NOT_FOUND)


def test_envelopes_match_the_documented_schema() -> None:
    ok = success("read", "stdio:python", {"contents": [], "warnings": []})
    VALIDATOR.validate(ok)
    bad = failure("call", "http://127.0.0.1:1", "deadline", "late", ExitCode.UNREACHABLE)
    VALIDATOR.validate(bad)
    assert "result" not in bad
    tool_error = failure(
        "call",
        None,
        "remote_tool_error",
        "boom",
        ExitCode.TOOL_ERROR,
        result={"is_error": True, "text": "", "content": [], "structured": None, "warnings": []},
    )
    VALIDATOR.validate(tool_error)
    # The schema holds the envelope to its rules: these are all wrong.
    wrong = [
        {**ok, "exit_code": 4},
        {**ok, "error": {"class": "x", "message": ""}},
        {**bad, "exit_code": 0},
        {k: v for k, v in bad.items() if k != "error"},
        {**ok, "result": {"contents": "no"}},
        {**tool_error, "error": {"class": "deadline", "message": ""}},
        {**ok, "extra": 1},
    ]
    for doc in wrong:
        assert list(VALIDATOR.iter_errors(doc)), doc


def test_render_is_one_ascii_line() -> None:
    text = render(success("call", "s", {"text": "é\x1b[31m\nnext\u202e"}))
    assert "\n" not in text and text.isascii()
    assert json.loads(text)["result"]["text"] == "é\x1b[31m\nnext\u202e"


def test_the_documented_schema_is_the_fixture() -> None:
    doc = (ROOT / "docs" / "cli.md").read_text(encoding="utf-8")
    blocks = re.findall(r"```json\n(.*?)```", doc, re.S)
    schemas = [json.loads(b) for b in blocks if '"$schema"' in b]
    assert schemas == [SCHEMA]


# --- output -------------------------------------------------------------------


class _Tty(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_scrub_shows_control_characters() -> None:
    assert scrub("a\x1b[2Jb\x07\u202ec") == "a\\x1b[2Jb\\x07\\x202ec"
    assert scrub("one\ntwo\tthree") == "one\ntwo\tthree"
    assert scrub("one\ntwo", one_line=True) == "one\\x0atwo"
    assert scrub("\x9b") == "\\x9b"


def test_color_needs_a_terminal_and_no_no_color() -> None:
    assert wants_color(_Tty(), {}) is True
    assert wants_color(_Tty(), {"NO_COLOR": "1"}) is False
    assert wants_color(_Tty(), {"NO_COLOR": ""}) is True
    assert wants_color(_Tty(), {"TERM": "dumb"}) is False
    assert wants_color(io.StringIO(), {}) is False


def test_piped_output_is_plain() -> None:
    stdout, stderr = io.StringIO(), io.StringIO()
    out = Output(stdout, stderr, environ={})
    assert out.paint("x", "red") == "x"
    out.progress(1, 3, "step\x1b")
    out.line("result")
    assert stderr.getvalue() == "progress 1/3 step\\x1b\n"
    assert stdout.getvalue() == "result\n"
    with out.spinner("connecting"):
        pass
    assert not re.search(r"[\x00-\x09\x0b-\x1f]", stderr.getvalue() + stdout.getvalue())


def test_json_mode_writes_no_progress_lines() -> None:
    stdout, stderr = io.StringIO(), io.StringIO()
    Output(stdout, stderr, environ={}, json_mode=True).progress(1, 2, "x")
    assert stderr.getvalue() == ""


def test_a_terminal_gets_a_bar_that_is_cleared_before_the_next_line() -> None:
    stdout, stderr = _Tty(), _Tty()
    out = Output(stdout, stderr, environ={})
    assert out.paint("x", "red") == "\x1b[31mx\x1b[0m"
    out.progress(2, 4, "half")
    assert stderr.getvalue() == "\r\x1b[2K" + progress_bar(2, 4, "half")
    out.line("done")
    assert stderr.getvalue().endswith("\r\x1b[2K")
    assert stdout.getvalue() == "done\n"
    assert Output(_Tty(), _Tty(), environ={"NO_COLOR": "1"}).paint("x", "red") == "x"


def test_the_spinner_draws_and_clears() -> None:
    stderr = _Tty()
    out = Output(_Tty(), stderr, environ={})
    with out.spinner("connecting to srv"):
        pass
    text = stderr.getvalue()
    assert "connecting to srv" in text and text.endswith("\r\x1b[2K")


def test_progress_forms() -> None:
    assert progress_line(2, 3, "m") == "progress 2/3 m"
    assert progress_line(5, 0, "") == "progress 5"
    assert progress_bar(1, 2, "m").startswith("[" + "#" * 12 + "-" * 12 + "]  50%")
    assert progress_bar(9, 4, "").startswith("[" + "#" * 24 + "] 100%")
    assert progress_bar(3, 0, "m") == "[???] 3 m"


# --- values and watch lines ---------------------------------------------------


def test_event_lines_scrub_server_text() -> None:
    from mcpclient.cli.commands.watch import event_line
    from mcpclient.cli.values import event_json

    log = mcpclient.ServerLog(
        binding="cli",
        level=mcpclient.LogLevel.WARNING,
        logger="db\x1b]0;x",
        text="slow\x1b[2J query",
        data={"ms": 900},
        at=0.0,
    )
    line = event_line(log)
    assert re.fullmatch(r"\d\d:\d\d:\d\d log warning \[db\\x1b\]0;x\] slow\\x1b\[2J query", line)
    assert event_json(log) == {
        "type": "ServerLog",
        "binding": "cli",
        "level": "warning",
        "logger": "db\x1b]0;x",
        "text": "slow\x1b[2J query",
        "data": {"ms": 900},
        "at": 0.0,
    }
    progress = mcpclient.RequestProgress(binding="cli", progress=2, total=5, message="m", at=0.0)
    assert event_line(progress).endswith(" progress 2/5 m")
    lost = mcpclient.ConnectionLost(
        binding="cli",
        failure_class=FailureClass.TRANSPORT_CLOSED,
        message="gone",
        adopted=1,
        retrying=True,
        at=0.0,
    )
    assert event_line(lost).endswith(
        " ConnectionLost failure_class=transport_closed message=gone adopted=1 retrying=True"
    )
    doc = success("watch", "s", event_json(lost))
    VALIDATOR.validate(doc)


def test_content_items_as_json() -> None:
    from mcpclient.cli.commands.calls import describe
    from mcpclient.cli.values import tool_result_json

    result = mcpclient.ToolResult(
        content=(
            mcpclient.Text("hi"),
            mcpclient.Image(b"\x89PNG", mime_type="image/png"),
            mcpclient.EmbeddedResource("test://r", mime_type="text/plain", text="body"),
            mcpclient.ResourceLink("test://l", name="link"),
            mcpclient.Unsupported(mcpclient.KIND_AUDIO, bytes=10),
        ),
        structured={"a": 1},
    )
    doc = success("call", "s", tool_result_json(result))
    VALIDATOR.validate(doc)
    items = doc["result"]["content"]
    assert items[1] == {"type": "image", "mime_type": "image/png", "data": "iVBORw=="}
    assert items[2]["text"] == "body" and items[4] == {
        "type": "unsupported",
        "kind": "audio",
        "bytes": 10,
    }
    assert [describe(item) for item in result.content] == [
        "hi",
        "[image, image/png, 4 bytes]",
        "body",
        "[resource link test://l (link)]",
        "[unsupported audio, 10 bytes]",
    ]


def test_the_console_script_is_mcpclient_cli_main() -> None:
    import configparser

    parser = configparser.ConfigParser()
    parser.read(ROOT / "setup.cfg")
    scripts = parser["options.entry_points"]["console_scripts"].split("\n")
    assert "mcpclient = mcpclient.cli:main" in [line.strip() for line in scripts]
    import mcpclient.__main__ as dunder_main

    assert dunder_main.main is main


def test_deep_json_arguments_are_invalid_arguments_not_a_traceback() -> None:
    # issue 27, item 10: json.loads recursed into RecursionError.
    from mcpclient.cli.coerce import coerce, parse_json_object

    deep = '{"a": ' + "[" * 5000 + "]" * 5000 + "}"
    with pytest.raises(CliError, match="nested deeper than 64 levels") as info:
        parse_json_object(deep, "--args")
    assert info.value.error_class == "invalid_arguments"
    schema = {"type": "object", "properties": {"a": {"type": "array"}}}
    with pytest.raises(CliError, match="expected array"):
        coerce(schema, "a", "[" * 5000 + "]" * 5000)
    assert coerce(schema, "a", "[[1]]") == [[1]]
