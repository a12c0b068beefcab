"""Small pure helpers every layer shares (the bottom layer of docs/architecture.md).

One definition each, so that two packages can never drift apart on what "UTC", "a percent
cell", "a JSON-safe value", "a secret" or "a list of reference benchmarks" means:

- `common.time`: UTC conversions (aware datetimes, naive-UTC timestamps and frame columns);
- `common.units`: metric kinds (ranges, directions), missing cells, numbers, percent vs
  proportion, leaderboard dates;
- `common.jsonsafe`: numpy/pandas values as plain JSON types;
- `common.redact`: the one redaction of secrets (Slack webhooks and tokens, bearer headers,
  credential query values) for log records, stored errors and CLI output;
- `common.refs`: the `reference_benchmarks` list of registry/benchmarks.csv.

Nothing here imports another benchwatch package, does I/O or reads the clock except
`time.utcnow`.
"""
