"""Start, loss and reconnect, close, interpreter exit and fork; the live connection."""
