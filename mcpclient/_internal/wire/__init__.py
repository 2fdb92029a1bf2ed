"""The wire: every mapping between protocol JSON and mcpclient's values."""
