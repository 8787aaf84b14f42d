"""What a handler that answers whatever happens catches (a tool call of the server, the CLI's
last resort, the prompt hook, the relay and the warm-up threads): every Exception, and a panic
of the core. A Rust panic reaches Python as the core's PanicException, a BaseException as
KeyboardInterrupt is, so `except Exception` let it through: it ended the stdio server, killed
the relay's thread (hooks then waited out their timeout) and lost the hook's prompt.

The core's own type, exported by name, rather than BaseException less the ones that must go
through (KeyboardInterrupt, SystemExit, GeneratorExit, asyncio's CancelledError, and whatever
other cancellation a library adds): that list is safe only while complete.
"""

from __future__ import annotations


def failures() -> tuple[type[BaseException], ...]:
    """For `except failures() as exc:`, evaluated only when something was raised, so a handler
    costs no import of the core before (the prompt hook's silent answer imports none)."""
    from repoctx._core import PanicException

    return (Exception, PanicException)
