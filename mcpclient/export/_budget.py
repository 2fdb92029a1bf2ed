"""A caller's size limit on each tool result the model reads (:class:`ResultBudget`).

The limit is PER RESULT (one call's result), in characters of what the model
reads: text items, the JSON of structured content when it is sent, and the
base64 of images, audio and blobs that are passed. A token limit is turned
into characters by the usual estimate of 4 characters per token (OpenAI's
rule of thumb, https://help.openai.com/en/articles/4936856). An error text
from the runner (a call that did not run) is short and never cut.

Over budget, the text is cut to its head and tail with a note between them
saying how much was cut and where the rest is: the result's first resource
link, or the caller (``full_results``), or nowhere. Nothing is cut silently.
The work is linear: lengths are summed, and only the kept head and tail are
copied (the structured JSON is encoded once when it must be cut).

Threads / Locks / Shutdown: none; pure functions on immutable values.
"""

from __future__ import annotations

import json
from collections.abc import MutableMapping, Sequence

import attrs

from mcpclient.content import (
    Audio,
    Content,
    EmbeddedResource,
    Image,
    ResourceLink,
    Text,
    ToolResult,
)
from mcpclient.errors import ConfigError
from mcpclient.export._calls import ToolCall
from mcpclient.export._results import Outcome, describe
from mcpclient.export._values import GEMINI

__all__ = ["MEDIA_POLICIES", "ResultBudget", "apply_budget", "check_budget", "fit"]

#: What a budget does with images, audio and binary (blob) resources.
MEDIA_POLICIES = ("pass", "describe", "drop")
#: Characters per estimated token.
CHARS_PER_TOKEN = 4
#: The smallest limit, in characters: room for the note and some text.
MIN_CHARS = 256
_OP = "run_tool_calls"


def _limit(name: str, value: object) -> None:
    if value is None:
        return
    if isinstance(value, bool) or not isinstance(value, int):
        raise ConfigError(f"ResultBudget.{name} must be an int or None", op=_OP)


@attrs.frozen(kw_only=True)
class ResultBudget:
    """How big one tool result may be for the model, and what to do with media.

    Set exactly one of ``max_chars`` or ``max_tokens`` (estimated as
    ``ceil(characters / 4)``); the limit is per result, at least 256
    characters (64 tokens). ``media`` is ``"pass"`` (send images, audio and
    blobs as the provider allows, their base64 counted against the limit; one
    that does not fit is described instead, saying so), ``"describe"`` (a
    one-line description: kind, MIME type, size) or ``"drop"`` (removed, with
    a one-line note).

    Example:
        >>> from mcpclient.export import ResultBudget
        >>> ResultBudget(max_tokens=8000, media="describe").chars
        32000

    Raises:
        ConfigError: neither or both limits, a limit that is not an int or is
            too small, or an unknown ``media`` policy.
    """

    max_chars: int | None = None
    max_tokens: int | None = None
    media: str = "pass"

    def __attrs_post_init__(self) -> None:
        _limit("max_chars", self.max_chars)
        _limit("max_tokens", self.max_tokens)
        if (self.max_chars is None) == (self.max_tokens is None):
            raise ConfigError("ResultBudget takes exactly one of max_chars or max_tokens", op=_OP)
        if self.chars < MIN_CHARS:
            raise ConfigError(
                f"ResultBudget is too small: at least {MIN_CHARS} characters "
                f"({MIN_CHARS // CHARS_PER_TOKEN} tokens)",
                op=_OP,
            )
        if self.media not in MEDIA_POLICIES:
            raise ConfigError(f"ResultBudget.media must be one of {MEDIA_POLICIES}", op=_OP)

    @property
    def chars(self) -> int:
        """The limit in characters (``max_tokens`` times 4 for a token limit)."""
        if self.max_chars is not None:
            return self.max_chars
        return (self.max_tokens or 0) * CHARS_PER_TOKEN


def check_budget(budget: object) -> ResultBudget | None:
    """``budget`` if it is ``None`` or a :class:`ResultBudget`, else ConfigError."""
    if budget is not None and not isinstance(budget, ResultBudget):
        raise ConfigError("budget must be a ResultBudget or None", op=_OP)
    return budget


def _media_bytes(item: Content) -> int:
    """The size of an item's binary payload, 0 for an item without one."""
    if isinstance(item, EmbeddedResource) and item.text:
        return 0
    if isinstance(item, Image | Audio | EmbeddedResource):
        return len(item.data)
    return 0


def _b64_len(item: Content) -> int:
    return 4 * -(-_media_bytes(item) // 3)


def _describe(item: Content, why: str) -> Text:
    return Text(describe(item, why))


def _text_of(item: Content) -> str | None:
    if isinstance(item, Text):
        return item.text
    if isinstance(item, EmbeddedResource) and item.text:
        return item.text
    return None


def _head(pieces: Sequence[str], n: int) -> str:
    """The first ``n`` characters of ``"\\n".join(pieces)``, copying only those."""
    out: list[str] = []
    for index, piece in enumerate(pieces):
        if n <= 0:
            break
        if index:
            out.append("\n")
            n -= 1
        out.append(piece[:n])
        n -= len(piece)
    return "".join(out)


def _tail(pieces: Sequence[str], n: int) -> str:
    """The last ``n`` characters of ``"\\n".join(pieces)``, copying only those."""
    out: list[str] = []
    for index in range(len(pieces) - 1, -1, -1):
        if n <= 0:
            break
        piece = pieces[index]
        out.append(piece[max(0, len(piece) - n) :] if n < len(piece) else piece)
        n -= len(piece)
        if index and n > 0:
            out.append("\n")
            n -= 1
    return "".join(reversed(out))


def fit(
    provider: str, result: ToolResult, budget: ResultBudget, has_keeper: bool
) -> ToolResult | None:
    """``result`` made to fit ``budget``, or ``None`` when it fits as it is.

    ``has_keeper``: the caller keeps the full result (the note says so).
    """
    limit = budget.chars
    structured = result.structured
    texts = [t for t in map(_text_of, result.content) if t is not None]
    json_sent = structured is not None and (provider == GEMINI or not texts)
    if json_sent:
        # Gemini sends the structured object instead of the text items.
        texts = [json.dumps(structured, ensure_ascii=False, sort_keys=True)]
    text_cost = sum(map(len, texts)) + max(0, len(texts) - 1)
    media = [item for item in result.content if _media_bytes(item)]
    media_cost = sum(map(_b64_len, media))
    if budget.media == "pass" and text_cost + media_cost <= limit:
        return None
    if budget.media != "pass" and not media and text_cost <= limit:
        return None
    # Media first: passed items fit greedily in what half the text leaves.
    room = limit - min(text_cost, limit // 2)
    mapped: list[Content] = []  # the content with media decided, in order
    others: list[Content] = []  # the same without the text items
    for item in result.content:
        if _text_of(item) is not None:
            mapped.append(item)
            continue
        kept = item
        if not _media_bytes(item):
            pass
        elif budget.media == "drop":
            kept = _describe(item, "dropped by the result budget")
        elif budget.media == "describe":
            kept = _describe(item, "described, not sent, by the result budget")
        elif _b64_len(item) <= room:
            room -= _b64_len(item)
        else:
            kept = _describe(item, "not sent: over the result budget")
        mapped.append(kept)
        others.append(kept)
    used = sum(_b64_len(i) or len(_text_of(i) or describe(i)) + 1 for i in others)
    text_room = limit - used
    if text_cost <= text_room:
        return attrs.evolve(result, content=tuple(mapped))
    link = next((i for i in result.content if isinstance(i, ResourceLink)), None)
    if link is not None:
        where = f"the full result is at the resource link {link.uri}"
    elif has_keeper:
        where = "the full result is kept by the application: ask the user for it"
    else:
        where = "the rest is not available"
    kind = "JSON (so it is not valid JSON as shown)" if json_sent else "text"

    def note(cut: int, items: int) -> str:
        whole = f", {items} of {len(texts)} text items whole," if items else ""
        return (
            f"\n[... {cut} of {text_cost} characters{whole} of this tool result's {kind} were "
            f"cut here by the client's size budget; {where} ...]\n"
        )

    keep = max(0, text_room - len(note(text_cost, len(texts))))
    head, tail = _head(texts, keep - keep // 2), _tail(texts, keep // 2)
    cut_from, cut_to, start, items = len(head), text_cost - len(tail), 0, 0
    for piece in texts:  # the items wholly inside the cut
        items += cut_from <= start and start + len(piece) <= cut_to
        start += len(piece) + 1
    cut_text = head + note(cut_to - cut_from, items) + tail
    return attrs.evolve(result, content=(Text(cut_text), *others), structured=None)


def apply_budget(
    provider: str,
    calls: Sequence[tuple[ToolCall, Outcome]],
    budget: ResultBudget | None,
    full_results: MutableMapping[str, ToolResult] | None,
) -> list[tuple[ToolCall, Outcome]]:
    """``calls`` with each result fitted to ``budget`` (all as they are without one).

    Each result that was changed is stored whole in ``full_results`` under its
    call id (the tool's name for a Gemini call without an id).
    """
    if budget is None:
        return list(calls)
    out: list[tuple[ToolCall, Outcome]] = []
    for call, outcome in calls:
        fitted = None
        if isinstance(outcome, ToolResult):
            fitted = fit(provider, outcome, budget, full_results is not None)
        if fitted is not None and full_results is not None and isinstance(outcome, ToolResult):
            full_results[call.call_id or call.name] = outcome
        out.append((call, outcome if fitted is None else fitted))
    return out
