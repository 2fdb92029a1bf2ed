"""Building a frozen public value from fields a hook has already checked.

A value's attrs ``__init__`` runs its validators (and JSON converters) on
every field; a value the wire hooks built from bounded, type-checked parts
does not need them again. :func:`trusted` makes, for one attrs class, a
builder that sets every field directly (missing ones to their defaults), in
code generated once per class, so the hot paths (a 10,000-tool catalog, a
plain text result) do not pay for checking twice.

Only the wire package uses it, and only with fields of the declared types:
JSON fields take :class:`~mcpclient._core.checks.JSONText` (or ``None``).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

import attrs

__all__ = ["trusted"]

T = TypeVar("T")


def trusted(cls: type[T]) -> Callable[..., T]:
    """A keyword-only builder of ``cls`` that skips its validators and converters.

    Keywords are the fields' ``__init__`` names (``meta`` for ``_meta``).
    """
    fields = attrs.fields(cls)  # type: ignore[arg-type]
    args: list[str] = []
    body = ["  inst = _new(_cls)"]
    namespace: dict[str, Any] = {"_new": object.__new__, "_cls": cls, "_set": object.__setattr__}
    for index, field in enumerate(fields):
        if not field.init:  # pragma: no cover - no trusted class has one
            raise TypeError(f"trusted() cannot build {cls.__name__}: {field.name} is init=False")
        default = field.default
        if isinstance(default, attrs.Factory):  # type: ignore[arg-type]
            namespace[f"_f{index}"] = default.factory
            args.append(f"{field.alias}=_NOTHING")
            body.append(f"  if {field.alias} is _NOTHING: {field.alias} = _f{index}()")
            namespace["_NOTHING"] = attrs.NOTHING
        elif default is attrs.NOTHING:
            args.append(field.alias)
        else:
            namespace[f"_d{index}"] = default
            args.append(f"{field.alias}=_d{index}")
        body.append(f"  _set(inst, {field.name!r}, {field.alias})")
    if getattr(cls, "__attrs_post_init__", None) is not None:
        body.append("  inst.__attrs_post_init__()")
    body.append("  return inst")
    source = f"def build(*, {', '.join(args)}):\n" + "\n".join(body) + "\n"
    exec(compile(source, f"<trusted {cls.__qualname__}>", "exec"), namespace)
    builder: Callable[..., T] = namespace["build"]
    return builder
