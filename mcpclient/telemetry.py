"""The process-wide OpenTelemetry switch.

With the ``otel`` extra installed (``opentelemetry-api``), every binding whose
``Definition.telemetry`` is on (the default) records a CLIENT span per call
and the ``mcp.client.operation.duration`` and ``mcp.client.session.duration``
histograms, following the MCP semantic conventions, and injects the W3C trace
context into each request's ``params._meta``. Without the extra nothing is
imported or recorded.

Example:
    >>> import mcpclient
    >>> mcpclient.telemetry.disable()  # nothing is recorded from here on
    >>> mcpclient.telemetry.enable()

Thread safety: any thread; a call already started finishes its span.
"""

from __future__ import annotations

from mcpclient._internal.telemetry import disable, enable, enabled

__all__ = ["disable", "enable", "enabled"]
