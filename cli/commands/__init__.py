"""CLI subcommands: one module per command, each exposing `register(subparsers)`.

`register` adds its parser and sets `func=run`, where `run(args) -> int` is the exit code.
Adding a command: write cli/commands/<name>.py and add its name here.

A command module imports at its top only what `register` needs, and `run` imports the command's
implementation when it is called: `benchwatch --help` (and a mistyped command) builds every
command's parser, and would otherwise import every implementation, pandas and Prefect included
(tests/integration/test_lazy_imports.py).
"""

COMMANDS: tuple[str, ...] = (
    "ingest",
    "backfill",
    "query",
    "status",
    "run",
    "analyze",
    "report",
    "reparse",
    "saturation",
    "serve",
    "notify",
    "alerts",
    "silence",
    "calibrate",
    "backtest",
    "accept",
    "migrate",
)
