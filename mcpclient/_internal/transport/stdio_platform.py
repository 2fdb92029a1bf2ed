"""The platform decisions of the stdio transport, as pure functions (the Windows seam).

Everything that only Windows (or only a platform without ``poll`` on pipes,
process groups or pidfd) can show is decided here from plain inputs, so the
unit tests can check each decision on Linux:

* :func:`backend` picks the stdio backend: ``posix`` (``poll`` on
  non-blocking pipes, a process group, a pidfd where the kernel has one;
  Linux and macOS) or ``portable`` (reader threads on blocking pipes; the
  only one on Windows). ``MCPCLIENT_STDIO_BACKEND=portable`` (or ``posix``)
  forces it: a test switch, so Linux CI runs the stdio tests on the portable
  backend too.
* :func:`resolve_command` finds what Windows would run for ``npx``:
  ``npx.cmd``, through ``PATHEXT``, because ``CreateProcess`` itself only
  appends ``.exe``.
* :func:`windows_command_line` quotes an argv for ``CreateProcess``, and runs
  a batch file (``.cmd``/``.bat``) through ``cmd.exe`` only when no argument
  holds a character ``cmd.exe`` would interpret (the "BatBadBut" class of
  injection): such an argument is refused, never passed on.
* :func:`graceful_signal` says how a polite stop is delivered: ``SIGTERM`` to
  the process group on POSIX, ``CTRL_BREAK_EVENT`` to the child's console
  process group on Windows (the child is started with
  ``CREATE_NEW_PROCESS_GROUP`` so the event reaches only it).
* :func:`exit_watch` says how the POSIX backend learns that the child
  exited: a pidfd (Linux), a kqueue with ``EVFILT_PROC``/``NOTE_EXIT``
  (macOS and the BSDs: no pidfd there), else a probe with backoff.
* :func:`creation_flags` says how a Windows child is created: in a console
  process group of its own, and, when we have no console to share with it
  (``pythonw``, a service), without a window of its own either; a console
  event cannot reach it then, so the polite stop is skipped.

Nothing here starts a thread, takes a lock or holds a resource.
"""

from __future__ import annotations

import ntpath
import os
import subprocess
import sys
from collections.abc import Callable, Mapping, Sequence

from mcpclient.errors import ConfigError

__all__ = [
    "BACKEND_ENV",
    "CREATE_NEW_PROCESS_GROUP",
    "CREATE_NO_WINDOW",
    "DEFAULT_PATHEXT",
    "backend",
    "creation_flags",
    "exit_watch",
    "graceful_signal",
    "is_batch",
    "resolve_command",
    "windows_command_line",
]

#: The environment variable that forces a backend (a test switch; see docs/architecture.md).
BACKEND_ENV = "MCPCLIENT_STDIO_BACKEND"
_BACKENDS = ("posix", "portable")

#: What Windows uses when ``PATHEXT`` is unset.
DEFAULT_PATHEXT = ".COM;.EXE;.BAT;.CMD"
# The creation flags' values (winbase.h); subprocess defines them only on Windows.
CREATE_NEW_PROCESS_GROUP = 0x00000200
CREATE_NO_WINDOW = 0x08000000
# CTRL_BREAK_EVENT (wincon.h); signal defines it only on Windows.
_CTRL_BREAK_EVENT = 1

# Characters cmd.exe interprets inside a command line, quoted or not: %VAR% and
# !VAR! expansion, its escape, quotes, and line breaks. An argument for a batch
# file that holds one is refused rather than escaped: cmd.exe's quoting rules
# differ from the C runtime's, and no escaping is safe for both.
_CMD_UNSAFE = frozenset('%!^"\r\n\0')
# Characters that are safe in a cmd.exe argument only inside double quotes.
_CMD_QUOTE = frozenset(" \t&|<>()@,;=")


def backend(platform: str = sys.platform, environ: Mapping[str, str] = os.environ) -> str:
    """The stdio backend to use: ``"posix"`` or ``"portable"``.

    ``MCPCLIENT_STDIO_BACKEND`` forces one; otherwise Windows gets
    ``portable`` and every other platform ``posix``.

    Raises:
        ConfigError: ``MCPCLIENT_STDIO_BACKEND`` names neither backend, or asks
            for ``posix`` on Windows.
    """
    forced = environ.get(BACKEND_ENV, "").strip().lower()
    windows = platform == "win32"
    if not forced:
        return "portable" if windows else "posix"
    if forced not in _BACKENDS:
        raise ConfigError(f"{BACKEND_ENV} must be one of {', '.join(_BACKENDS)}, not {forced!r}")
    if forced == "posix" and windows:
        raise ConfigError(f"{BACKEND_ENV}=posix is not available on Windows")
    return forced


def resolve_command(
    command: str,
    *,
    path: str | None,
    pathext: str | None,
    cwd: str | None = None,
    is_file: Callable[[str], bool] = os.path.isfile,
) -> str:
    """What Windows runs for ``command``: ``npx`` becomes ``C:\\...\\npx.cmd``.

    A name that already has one of the ``PATHEXT`` extensions, or that no
    candidate matches, is returned unchanged (``CreateProcess`` then tries
    ``.exe`` itself and reports a missing command as it does). A name with a
    directory part is completed in place; a bare name is searched in ``cwd``
    (as ``cmd.exe`` does) and then each ``PATH`` entry, each with every
    extension in ``PATHEXT`` order.
    """
    # Windows paths whatever OS runs this (the unit tests run it on Linux).
    extensions = [e for e in (pathext or DEFAULT_PATHEXT).split(";") if e]
    if ntpath.splitext(command)[1].upper() in {e.upper() for e in extensions}:
        return command
    if "/" in command or "\\" in command:
        folders = [""]
    else:
        folders = [cwd or "", *[p for p in (path or "").split(";") if p]]
    for folder in folders:
        base = ntpath.join(folder, command) if folder else command
        for ext in extensions:
            candidate = base + ext.lower()
            if is_file(candidate):
                return candidate
    return command


def is_batch(command: str) -> bool:
    """Whether Windows runs ``command`` through ``cmd.exe`` (a ``.cmd`` or ``.bat`` file)."""
    return ntpath.splitext(command)[1].lower() in (".cmd", ".bat")


def windows_command_line(argv: Sequence[str], *, comspec: str | None = None) -> str:
    """The ``CreateProcess`` command line for ``argv`` (``argv[0]`` already resolved).

    An ``.exe`` gets the C runtime's quoting (:func:`subprocess.list2cmdline`).
    A batch file runs as ``cmd.exe /d /s /c "<line>"``, each argument quoted
    when it holds a space or a ``cmd.exe`` operator; an argument holding
    ``%``, ``!``, ``^``, ``"`` or a line break is refused.

    Raises:
        ConfigError: a batch file's argument holds a character ``cmd.exe``
            would interpret.
    """
    if not is_batch(argv[0]):
        return subprocess.list2cmdline(list(argv))
    parts = []
    for arg in argv:
        unsafe = sorted(set(arg) & _CMD_UNSAFE)
        if unsafe:
            raise ConfigError(
                f"cannot pass an argument holding {''.join(unsafe)!r} to the batch file"
                f" {ntpath.basename(argv[0])!r}: cmd.exe would interpret it"
            )
        parts.append(f'"{arg}"' if not arg or set(arg) & _CMD_QUOTE else arg)
    shell = comspec or "cmd.exe"
    # /d: no AutoRun commands; /s /c "...": strip exactly the outer quotes.
    return f'{subprocess.list2cmdline([shell])} /d /s /c "{" ".join(parts)}"'


def graceful_signal(sig: int, *, windows: bool) -> int | None:
    """The signal that asks the child to stop for ``sig``; None: terminate instead.

    On POSIX every signal is delivered as it is (to the process group). On
    Windows only a polite stop (SIGTERM, SIGINT) has a counterpart,
    ``CTRL_BREAK_EVENT``; anything else ends the whole Job Object at once.
    """
    if not windows:
        return sig
    if sig in (15, 2):  # SIGTERM, SIGINT: the same numbers on Windows
        return _CTRL_BREAK_EVENT
    return None


def exit_watch(*, has_pidfd: bool, has_kqueue: bool) -> str:
    """How the POSIX backend watches the child's exit: ``pidfd``, ``kqueue`` or ``probe``.

    Both watches give an fd that turns readable when the child exits, polled
    beside its stdout; a pidfd is preferred where the kernel has one (Linux).
    Without either, the child is probed (``waitid``) with backoff.
    """
    if has_pidfd:
        return "pidfd"
    if has_kqueue:
        return "kqueue"
    return "probe"


def creation_flags(*, parent_has_console: bool) -> int:
    """The ``CreateProcess`` flags of a Windows stdio child.

    Always ``CREATE_NEW_PROCESS_GROUP``: ``CTRL_BREAK_EVENT`` then reaches the
    child's group only, never us. ``CREATE_NO_WINDOW`` only when we have no
    console: a console child of a windowless parent would open a window, and
    one of a console parent must share its console to receive the event.
    """
    if parent_has_console:
        return CREATE_NEW_PROCESS_GROUP
    return CREATE_NEW_PROCESS_GROUP | CREATE_NO_WINDOW
