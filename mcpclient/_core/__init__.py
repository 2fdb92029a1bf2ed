"""The pure helpers under every other layer: bounds, names, canonical JSON and digests,
the one clock and its watcher, strict JSON, retry arithmetic, the on-demand worker
primitive, the skill frontmatter reader, and the value checks of the public modules.

Nothing here imports the client, session, transport or wire layers (tests/unit/test_layers.py).
"""
