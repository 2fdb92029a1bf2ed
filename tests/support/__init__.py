"""Helpers shared by every test module: one event recorder, one wait, one family of servers.

``from tests.support import Events, wait_until, soon`` instead of a per-file copy:

* :mod:`.events`: :class:`Events`, the thread-safe recorder of the library's events
  (and progress reports), with ``wait(kind, count)``, and :func:`delivered`, a barrier
  through a binding's event lane (for "and nothing else was delivered" checks);
* :mod:`.waiting`: :func:`wait_until` (poll a predicate), :func:`threads_ended` (a named
  library thread is gone) and :func:`soon` (a deadline);
* :mod:`.servers`: the testing server and any stdio peer as definitions, and the
  :class:`Recording` a server writes with ``--record``;
* :mod:`.http_servers`: a server process on a loopback port (its own process group,
  restartable on a fixed port), the scriptable testing server over HTTP and its
  recorded requests;
* :mod:`.scripted_http`: :class:`RouteServer`, the one in-process HTTP(S) server
  (routes of :class:`Answer` values or callables, every request :class:`Recorded`,
  :class:`Script` for a queue of answers); no test module subclasses the stdlib
  server machinery itself (tests/unit/test_test_support.py);
* :mod:`.processes`: child processes as /proc shows them (reaped, dead, children,
  process groups);
* :mod:`.spawning`: :class:`Spawner`, the one ``spawn`` fixture: start servers or
  children with a factory, close every one when the scope ends;
* :mod:`.stdio`: :class:`StdioChildren`, the library's stdio transport on small
  ``python -c`` children (the ``spawn_stdio`` fixture).

The fixtures that start servers (``spawn_http``, ``spawn_shared_http``,
``everything_http``, ``spawn_stdio``) live in tests/integration/conftest.py.
"""

from __future__ import annotations

from .events import Events, delivered
from .processes import children_of, dead, reaped, server_pid
from .scripted_http import Answer, Recorded, RouteServer, Script, json_answer
from .servers import Recording, definition, make_definition, server_transport
from .waiting import soon, threads_ended, wait_until

__all__ = [
    "Answer",
    "Events",
    "Recorded",
    "Recording",
    "RouteServer",
    "Script",
    "children_of",
    "dead",
    "definition",
    "delivered",
    "json_answer",
    "make_definition",
    "reaped",
    "server_pid",
    "server_transport",
    "soon",
    "threads_ended",
    "wait_until",
]
