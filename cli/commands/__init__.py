"""CLI subcommands: one module per command, each exposing `register(subparsers)`.

`register` adds its parser and sets `func=run`, where `run(args) -> int` is the exit code.
Adding a command: write cli/commands/<name>.py and add its name here.
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
