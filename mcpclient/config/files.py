"""Reading the files a configuration names, and bounding what they hold.

Every file the config layer reads (a configuration file, an ``envFile``, a
Windsurf ``${file:}``, ``~/.claude.json`` while discovering) goes through
:func:`read_regular`: it opens without blocking (a FIFO with no writer would
block ``open``), refuses anything but a regular file (``/dev/zero``, a FIFO,
a directory, a socket), and reads at most the bound, so a hostile path can
neither hang a load nor exhaust memory. :func:`depth_exceeds` walks a parsed
document without recursion, so no nesting reaches a recursive walker (a
``json.dumps``, a validator) deeper than the parsers allow (it is
:func:`mcpclient._core.limits.depth_exceeds`, re-exported).
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

from mcpclient._core.limits import depth_exceeds

__all__ = ["MAX_DEPTH", "FileReadError", "depth_exceeds", "read_regular"]

#: The deepest nesting of arrays/objects (tables) accepted in a configuration.
MAX_DEPTH = 64

# O_NONBLOCK: opening a FIFO for reading would otherwise wait for a writer.
# It changes nothing for a regular file, the only kind read past fstat.
_FLAGS = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0)
_FLAGS |= getattr(os, "O_BINARY", 0)
_CHUNK = 64 * 1024


class FileReadError(ValueError):
    """A file cannot be read as configuration; ``reason`` says why (no content quoted).

    ``too_large`` tells a file over the bound from one that is not readable at all.
    """

    def __init__(self, reason: str, *, too_large: bool = False) -> None:
        super().__init__(reason)
        self.reason = reason
        self.too_large = too_large


def _kind(mode: int) -> str:
    if stat.S_ISDIR(mode):
        return "a directory"
    if stat.S_ISFIFO(mode):
        return "a FIFO"
    if stat.S_ISCHR(mode):
        return "a character device"
    if stat.S_ISBLK(mode):
        return "a block device"
    if stat.S_ISSOCK(mode):
        return "a socket"
    return "not a regular file"


def read_regular(path: str | os.PathLike[str], limit: int) -> bytes:
    """The bytes of the regular file at ``path``, at most ``limit`` of them.

    Raises:
        FileNotFoundError: there is no such file.
        FileReadError: it is not a regular file, it is larger than
            ``limit`` bytes, or it cannot be read (the reason names the
            ``OSError``).
    """
    try:
        fd = os.open(Path(path), _FLAGS)
    except FileNotFoundError:
        raise
    except IsADirectoryError:
        raise FileReadError("not a regular file (a directory)") from None
    except OSError as exc:
        raise FileReadError(f"cannot open it ({type(exc).__name__})") from None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise FileReadError(f"not a regular file ({_kind(info.st_mode)})")
        if info.st_size > limit:
            raise FileReadError(f"larger than {limit} bytes", too_large=True)
        chunks: list[bytes] = []
        size = 0
        # Read to the bound even if the file grew after fstat.
        while size <= limit:
            chunk = os.read(fd, min(_CHUNK, limit + 1 - size))
            if not chunk:
                break
            chunks.append(chunk)
            size += len(chunk)
    except OSError as exc:
        raise FileReadError(f"cannot read it ({type(exc).__name__})") from None
    finally:
        os.close(fd)
    if size > limit:
        raise FileReadError(f"larger than {limit} bytes", too_large=True)
    return b"".join(chunks)
