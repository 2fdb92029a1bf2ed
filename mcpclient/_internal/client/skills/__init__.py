"""The Skills extension: skills/list, verified loading, listed-only reads."""
