"""`python -m repoctx` and the `repoctx` command: `--version` answers before anything
else is imported; everything else goes to the CLI."""

import sys


def main() -> int:
    if sys.argv[1:] == ["--version"]:
        from repoctx import __version__

        print(f"repoctx {__version__}")
        return 0
    from repoctx.views.cli import main as cli_main

    return cli_main()


if __name__ == "__main__":
    raise SystemExit(main())
