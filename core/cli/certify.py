"""`graphctx certify ADAPTER`: certify an adapter against the contract suite and write a certificate.

Core never imports the contract suite (the layering contract forbids it): this command runs
`python -m graphctx.contracts certify` as a subprocess, which itself runs pytest under its own
control, and passes its exit status on (0 PASS, 1 FAIL, 2 a wrong command). Imported at the end of
graphctx.cli, whose app this command joins."""

import importlib.util
import subprocess
import sys
from pathlib import Path
from typing import Annotated

import typer

from graphctx.cli import app, err

PORTS = ("graph", "lexical", "vector")


@app.command()
def certify(
    adapter: Annotated[str, typer.Argument(help="Entry-point name (sqlite, tantivy) or module:callable.")],
    port: Annotated[
        list[str] | None,
        typer.Option(help="A port the adapter implements: graph, lexical or vector (repeat for more)."),
    ] = None,
    out_dir: Annotated[Path, typer.Option("--out", help="Directory for the certificate.")] = Path(
        "graphctx-certificate"
    ),
    opt_out: Annotated[
        list[str] | None, typer.Option(help="TEST=REASON: a contract test that cannot apply (listed).")
    ] = None,
    known_broken: Annotated[
        list[str] | None, typer.Option(help="TEST=REASON: a contract test known to fail (must fail).")
    ] = None,
    timeout: Annotated[float, typer.Option(help="Seconds before the run is stopped.")] = 1800.0,
) -> None:
    """Run every contract class of the adapter's ports in a subprocess the suite controls and write
    certificate.json + certificate.md with the verdict. Exit 0 on PASS, 1 on FAIL."""
    if importlib.util.find_spec("pytest") is None:
        err.print("certify needs the contract suite's test runner: pip install 'graphctx[contracts]'")
        raise typer.Exit(2)
    bad = [p for p in port or () if p not in PORTS]
    if bad:
        err.print(f"unknown port(s) {', '.join(bad)}; the ports are {', '.join(PORTS)}", markup=False)
        raise typer.Exit(2)
    argv = [sys.executable, "-m", "graphctx.contracts", "certify", adapter, "--out", str(out_dir)]
    argv += [f"--port={p}" for p in port or ()]
    argv += [f"--opt-out={o}" for o in opt_out or ()]
    argv += [f"--known-broken={k}" for k in known_broken or ()]
    argv += ["--timeout", str(timeout)]
    raise typer.Exit(subprocess.run(argv, check=False).returncode)
