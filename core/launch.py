"""The `graphctx` console script: `graphctx --version` answers before the CLI (typer, rich and the
command table) is imported; everything else runs graphctx.cli."""

from __future__ import annotations

import sys


def main() -> None:
    if sys.argv[1:] == ["--version"]:
        from graphctx import __version__

        sys.stdout.write(f"graphctx {__version__}\n")
        return
    from graphctx.cli import main as cli

    cli()
