"""The cattrs converter: built once per :class:`~mcpclient.Limits` bounds, cached.

Each topic module (content, catalog, session, interactions) registers its
hooks with :func:`hooks`; :func:`converter_for` builds a converter carrying
all of them, with the limits-dependent bounds closed over, the first time
those bounds are seen (:class:`Bounds`, frozen: the cache key), and returns
the same converter afterwards.

The converter runs without detailed validation: the hooks check everything
themselves and raise our own errors, and the generated structure functions
are then plain field-by-field code (no per-field try/except).

Thread safety: a built converter is only read after it is built; the cache
is thread-safe (two threads may race to build the same converter, and one
of the two identical results is kept).
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

import attrs
import cattrs
from cattrs.gen import make_dict_structure_fn

from mcpclient.definition import Limits

__all__ = ["Bounds", "Registrar", "converter_for", "hooks", "record"]


@attrs.frozen
class Bounds:
    """The limits the hooks close over: what keys the converter cache.

    The other limits (the binary-item budget, say) are read per call from
    the call's own :class:`~mcpclient._internal.wire.state.Call`, so two
    ``Limits`` values that differ only there share one converter. A hook
    that reads a limit not listed here fails at once (no such attribute).
    """

    max_text_result_bytes: int
    max_app_view_bytes: int
    max_structured_bytes: int
    max_schema_bytes: int
    max_schema_depth: int


#: ``register(converter, bounds)``: adds one topic's hooks.
Registrar = Callable[[cattrs.Converter, Bounds], None]

_REGISTRARS: list[Registrar] = []


def hooks(register: Registrar) -> Registrar:
    """Decorator: ``register`` adds its hooks to every converter built from now on."""
    _REGISTRARS.append(register)
    _built.cache_clear()
    return register


def converter_for(limits: Limits) -> cattrs.Converter:
    """The converter for ``limits`` (built on first use, then shared)."""
    return _built(
        Bounds(
            limits.max_text_result_bytes,
            limits.max_app_view_bytes,
            limits.max_structured_bytes,
            limits.max_schema_bytes,
            limits.max_schema_depth,
        )
    )


@functools.lru_cache(maxsize=16)
def _built(bounds: Bounds) -> cattrs.Converter:
    converter = cattrs.Converter(detailed_validation=False, forbid_extra_keys=False)
    for register in _REGISTRARS:
        register(converter, bounds)
    return converter


def record(converter: cattrs.Converter, cls: type, **fields: Any) -> Any:
    """Register (and return) the dict structure function of the wire record ``cls``.

    ``fields`` name each field's wire key (``override(rename=...)``) and its
    bounding hook (``override(struct_hook=...)``). A key that is absent
    leaves the field's default; the hooks see every key that is present,
    raw, before any value is built.
    """
    structure: Any = make_dict_structure_fn(cls, converter, **fields)
    converter.register_structure_hook(cls, structure)
    return structure
