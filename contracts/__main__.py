"""`python -m graphctx.contracts certify ...`: see graphctx.contracts.certify (and `graphctx certify`)."""

from __future__ import annotations

import sys

USAGE = "usage: python -m graphctx.contracts certify ADAPTER [--port PORT ...] [--out DIR] (--help for more)"


def main(argv: list[str]) -> int:
    if not argv or argv[0] != "certify":
        print(USAGE, file=sys.stderr)
        return 2
    from graphctx.contracts.certify import main as certify

    return certify(argv[1:])


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
