"""The parts of one binding, assembled (``mcpclient.Client`` is their facade).

Each part has one job and is given, at construction, the parts it uses;
none reaches back up into the client:

- :class:`BindingState` (``state``): the state machine, the one live
  connection, the recorded failure, the event lane and the catalogs;
- :class:`AuthRecovery` (``auth.recovery``): authorizing and resending what
  the server refused with 401/403;
- :class:`CallPath` (``calls.callpath``): admission, exchange and conversion of a
  call, and the gates it queues in;
- :class:`CatalogRefresh` (``catalog.catalog_refresh``): discovery, refresh passes
  and TTL hints;
- :class:`Inbound` (``inbound.inbound``): notifications, server requests, the listen
  stream and subscriptions;
- :class:`Lifecycle` (``lifecycle.lifecycle``): start, loss and reconnect, close,
  interpreter exit and fork.

Threads, locks and shutdown: see each part's module.
"""

from __future__ import annotations

from typing import NamedTuple

from mcpclient._internal.client.auth.recovery import AuthRecovery
from mcpclient._internal.client.calls.callpath import CallPath
from mcpclient._internal.client.catalog.catalog_refresh import CatalogRefresh
from mcpclient._internal.client.inbound.inbound import Inbound
from mcpclient._internal.client.inbound.interactions import Interactions
from mcpclient._internal.client.lifecycle.lifecycle import Lifecycle
from mcpclient._internal.client.state import BindingState
from mcpclient.definition import Definition
from mcpclient.handlers import Handlers

__all__ = ["Parts", "assemble"]


class Parts(NamedTuple):
    """The parts the facade talks to (the others are reached through them)."""

    state: BindingState
    calls: CallPath
    inbound: Inbound
    life: Lifecycle


def assemble(definition: Definition, handlers: Handlers) -> Parts:
    """Build one binding's parts, wired together; nothing is started."""
    state = BindingState(definition, handlers)
    interactions = Interactions(
        state.binding,
        handlers,
        definition.limits,
        definition.timeouts,
        state.emit,
        version=lambda: state.protocol.version if state.protocol is not None else None,
    )
    auth = AuthRecovery(state)
    calls = CallPath(state, auth, interactions)
    refresh = CatalogRefresh(state, auth, calls.slots)
    inbound = Inbound(state, interactions, refresh)
    inbound.on_task_status = calls.tasks.on_status  # a status push wakes a task's poller
    life = Lifecycle(
        state,
        auth=auth,
        calls=calls,
        refresh=refresh,
        inbound=inbound,
        interactions=interactions,
    )
    return Parts(state, calls, inbound, life)
