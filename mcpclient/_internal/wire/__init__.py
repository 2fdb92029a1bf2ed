"""The wire: MCP's JSON messages ↔ this library's values, through one cattrs converter.

This package is the only place that knows the protocol's camelCase field
names (``tests/unit/test_wire_names.py`` enforces it). Each module has one
job:

* :mod:`.converter`: the cattrs converter, built once per set of bounds of a
  ``Limits`` value and cached, carrying every topic's hooks;
* :mod:`.state`: the per-call state the hooks share (binary-item budget,
  warnings, memoized digests) and the leniency rule;
* :mod:`.errors`: cattrs' exceptions translated into ours, in one place;
* :mod:`.content`, :mod:`.fast`: content items and results (and the fast
  path for plain text results);
* :mod:`.catalog`: tool, prompt, resource and template specs, list pages;
* :mod:`.session`: era negotiation, server identity and capabilities,
  client capabilities;
* :mod:`.interactions`: sampling, elicitation, roots, completion,
  progress, logging and the modern era's input requests;
* :mod:`.oauth`, :mod:`.records`: OAuth server and resource metadata and
  the token store's records (their own structuring, imported by
  ``mcpclient.auth`` directly).

The entry points most callers need are re-exported here; importing the
package imports (and so registers the hooks of) every topic module.
"""

from __future__ import annotations

from mcpclient._internal.wire import catalog, interactions, session
from mcpclient._internal.wire.content import (
    decoded_size,
    to_content,
    to_prompt,
    to_resource,
    to_tool_result,
)
from mcpclient._internal.wire.converter import converter_for
from mcpclient._internal.wire.errors import ConversionError
from mcpclient._internal.wire.state import json_depth

__all__ = [
    "ConversionError",
    "catalog",
    "converter_for",
    "decoded_size",
    "interactions",
    "json_depth",
    "session",
    "to_content",
    "to_prompt",
    "to_resource",
    "to_tool_result",
]
