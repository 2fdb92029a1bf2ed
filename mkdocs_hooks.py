"""MkDocs hooks for the documentation site (``hooks:`` in ``mkdocs.yml``; no plugin needed).

The pages mark code blocks the documentation's test does not run with a flag
after the language (```` ```python sdk ````, ```` ```python no-run ````;
see ``tests/integration/test_docs.py``). GitHub renders those by the first
word; Python-Markdown's ``fenced_code`` does not recognise such a fence at all,
so the flag is dropped here before the page is rendered.
"""

from __future__ import annotations

import re
from typing import Any

_FLAGGED_FENCE = re.compile(r"^(?P<fence> {0,3}(?:`{3,}|~{3,})[\w#.+-]+)[ \t]+[\w -]+$", re.M)


def strip_fence_flags(markdown: str) -> str:
    """```` ```python no-run ```` → ```` ```python ````; other lines unchanged."""
    return _FLAGGED_FENCE.sub(lambda m: m["fence"], markdown)


def on_page_markdown(markdown: str, **kwargs: Any) -> str:
    """The MkDocs event: each page's Markdown before it is rendered."""
    return strip_fence_flags(markdown)
