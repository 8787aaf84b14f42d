"""`python -m repoctx` and the `repoctx` command: `--version` answers before anything
else is imported, and `prompt-hook` (run on every prompt) without the CLI's parser;
everything else goes to the CLI."""

import sys


def main() -> int:
    if sys.argv[1:] == ["--version"]:
        from repoctx import __version__

        print(f"repoctx {__version__}")
        return 0
    if sys.argv[1:2] == ["prompt-hook"]:
        from repoctx.views.prompt_hook import main as hook_main

        _leave(hook_main(sys.argv[2:]))
    from repoctx.views.cli import main as cli_main

    return cli_main()


def _leave(code: int) -> None:
    """Ends a one-shot process without the interpreter's teardown: freeing the task index it
    loaded costs a hook on ruff ~25 ms, spent after its answer is out. The index's save (a thread)
    is waited for first, and the output flushed."""
    import os
    import threading

    for thread in threading.enumerate():
        if thread is not threading.current_thread() and not thread.daemon:
            thread.join()
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)


if __name__ == "__main__":
    raise SystemExit(main())
