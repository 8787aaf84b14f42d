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

        return hook_main(sys.argv[2:])
    from repoctx.views.cli import main as cli_main

    return cli_main()


if __name__ == "__main__":
    raise SystemExit(main())
