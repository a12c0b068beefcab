"""The `benchwatch` command line: argument parsing, one module per command in `cli/commands/`."""
