"""`python -m cli ...` is `benchwatch ...`."""

from cli.main import main

raise SystemExit(main())
