"""Pin the private internals of ``concurrent.futures`` that :class:`Pending` relies on.

``mcpclient._internal.session.request_table.Pending`` subclasses
``concurrent.futures.Future`` without calling ``Future.__init__``: it sets the
Future's private fields itself and is its own (duck-typed) condition, while
``result``, ``exception``, ``add_done_callback``, ``wait`` and
``as_completed`` stay the standard library's code. That is sound only while
that code touches exactly the private names below, and calls exactly these
methods on ``_condition``. These tests compare the standard library of the
running Python with that record (identical on CPython 3.11, 3.12 and 3.13), so
a Python whose ``concurrent.futures`` differs fails here, loudly, naming what
changed, instead of deadlocking or corrupting a request somewhere else.
"""

from __future__ import annotations

import concurrent.futures
import concurrent.futures._base as base
import inspect
import re
import types

import pytest

from mcpclient._internal.session import request_table
from mcpclient._internal.session.request_table import Pending

# The Future's private fields, as Future.__init__ sets them and Pending.__init__ mirrors.
FIELDS = {"_condition", "_done_callbacks", "_exception", "_result", "_state", "_waiters"}

# Every private name each piece of standard-library code reads, exactly.
PRIVATE_NAMES: dict[str, set[str]] = {
    "Future._Future__get_result": {"_exception", "_result"},
    "Future.__init__": FIELDS,
    "Future.__repr__": {
        "_STATE_TO_DESCRIPTION_MAP",
        "_condition",
        "_exception",
        "_result",
        "_state",
    },
    "Future._invoke_callbacks": {"_done_callbacks"},
    "Future.add_done_callback": {"_condition", "_done_callbacks", "_state"},
    "Future.cancel": {"_condition", "_invoke_callbacks", "_state"},
    "Future.cancelled": {"_condition", "_state"},
    "Future.done": {"_condition", "_state"},
    "Future.exception": {"_condition", "_exception", "_state"},
    "Future.result": {"_Future__get_result", "_condition", "_state"},
    "Future.running": {"_condition", "_state"},
    "Future.set_exception": {"_condition", "_exception", "_invoke_callbacks", "_state", "_waiters"},
    "Future.set_result": {"_condition", "_invoke_callbacks", "_result", "_state", "_waiters"},
    "Future.set_running_or_notify_cancel": {"_condition", "_state", "_waiters"},
    "_AcquireFutures": {"_condition"},
    "_create_and_install_waiters": {
        "_AS_COMPLETED",
        "_AllCompletedWaiter",
        "_AsCompletedWaiter",
        "_FirstCompletedWaiter",
        "_state",
        "_waiters",
    },
    "_yield_finished_futures": {"_condition", "_waiters"},
    "as_completed": {
        "_AS_COMPLETED",
        "_AcquireFutures",
        "_condition",
        "_create_and_install_waiters",
        "_state",
        "_waiters",
        "_yield_finished_futures",
    },
    "wait": {"_AcquireFutures", "_condition", "_create_and_install_waiters", "_state", "_waiters"},
}

# The Condition methods standard-library code calls on a Future's ``_condition``.
CONDITION_CALLS = {"acquire", "notify_all", "release", "wait"}
# The states Pending imports and sets.
STATES = {
    "PENDING": "PENDING",
    "RUNNING": "RUNNING",
    "CANCELLED": "CANCELLED",
    "CANCELLED_AND_NOTIFIED": "CANCELLED_AND_NOTIFIED",
    "FINISHED": "FINISHED",
}
# What waiters (concurrent.futures.wait / as_completed) get from a completion.
WAITER_METHODS = {"add_cancelled", "add_exception", "add_result"}


def _names(code: types.CodeType) -> set[str]:
    found = set(code.co_names)
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            found |= _names(const)
    return found


def _private(names: set[str]) -> set[str]:
    return {n for n in names if n.startswith("_") and not n.startswith("__")} | {
        n for n in names if n.startswith("_Future__")
    }


def _functions(obj: object) -> list[types.FunctionType]:
    if isinstance(obj, types.FunctionType):
        return [obj]
    return [v for v in vars(obj).values() if isinstance(v, types.FunctionType)]


def _stdlib_private_names() -> dict[str, set[str]]:
    found = {
        f"Future.{name}": _private(_names(fn.__code__))
        for name, fn in vars(base.Future).items()
        if isinstance(fn, types.FunctionType)
    }
    for name in (
        "wait",
        "as_completed",
        "_AcquireFutures",
        "_create_and_install_waiters",
        "_yield_finished_futures",
    ):
        assert hasattr(base, name), f"concurrent.futures._base.{name} is gone"
        names: set[str] = set()
        for fn in _functions(getattr(base, name)):
            names |= _names(fn.__code__)
        found[name] = _private(names)
    return found


def test_the_future_s_private_fields_are_those_pending_sets() -> None:
    assert set(vars(concurrent.futures.Future())) == FIELDS
    assert set(Pending.__slots__) | {"_condition"} >= FIELDS
    assert isinstance(inspect.getattr_static(Pending, "_condition"), property)


def test_the_standard_library_reads_exactly_the_pinned_private_names() -> None:
    found = _stdlib_private_names()
    differences = {
        name: (sorted(found.get(name, set())), sorted(PRIVATE_NAMES.get(name, set())))
        for name in sorted(found.keys() | PRIVATE_NAMES.keys())
        if found.get(name) != PRIVATE_NAMES.get(name)
    }
    assert not differences, (
        "concurrent.futures' private internals differ from what Pending relies on"
        f" (request_table.py); name: (now, pinned): {differences}"
    )


def test_only_the_pinned_condition_methods_are_called() -> None:
    calls: set[str] = set()
    for fn in [
        *_functions(base.Future),
        *_functions(base._AcquireFutures),
        base.wait,
        base.as_completed,
        base._yield_finished_futures,
    ]:
        calls |= set(re.findall(r"_condition\.(\w+)\(", inspect.getsource(fn)))
    assert calls == CONDITION_CALLS
    for method in CONDITION_CALLS:
        assert callable(getattr(Pending, method)), f"Pending has no condition method {method}"


def test_the_states_and_waiter_protocol_are_as_pinned() -> None:
    for name, value in STATES.items():
        assert getattr(base, name) == value, f"concurrent.futures._base.{name} changed"
    for name in ("PENDING", "CANCELLED", "CANCELLED_AND_NOTIFIED", "FINISHED"):
        assert getattr(request_table, name) is getattr(base, name)
    assert {n for n in vars(base._Waiter) if n.startswith("add_")} == WAITER_METHODS


@pytest.mark.parametrize("name", sorted(PRIVATE_NAMES))
def test_a_difference_would_be_reported(name: str) -> None:
    # The record is not vacuous: every pinned entry names something that exists.
    owner, _, attr = name.partition(".")
    target = getattr(base, owner)
    assert attr == "" or attr in vars(target)
