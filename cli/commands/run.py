"""`benchwatch run`: one full cycle — collect every source, analyze, notify."""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING

import scrapers
from cli.main import add_db_argument, add_sources_argument, database_refused, output_refused, store_of
from storage.db import default_path

if TYPE_CHECKING:
    from storage.store import Store


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("run", help="one full cycle: collect every source, analyze, notify",
                       description="Collect every enabled source (live, or from --replay DIR), store new snapshots, "
                                   "recompute saturation and contamination signals (skipped when no input changed), write "
                                   "the HTML report to $BENCHWATCH_REPORT_DIR when set, and deliver alerts (Slack when "
                                   "SLACK_WEBHOOK_URL or SLACK_BOT_TOKEN+SLACK_CHANNEL is set, else the console). "
                                   "One failing source never stops the others. Runs as a Prefect flow in ephemeral "
                                   "mode unless PREFECT_API_URL points at a server, or --no-prefect is given.",
                       epilog="sources: " + ", ".join(scrapers.SOURCES))
    add_sources_argument(p, "comma-separated subset of sources (default: every enabled source)")
    p.add_argument("--replay", metavar="DIR", default=None,
                   help="read responses from DIR/<source>/<file> instead of the network (file = last URL segment)")
    p.add_argument("--collect-only", action="store_true", help="collect and store; skip analyze and notify")
    p.add_argument("--no-prefect", action="store_true", help="run the same steps as plain functions, without Prefect")
    add_db_argument(p)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:

    from jobs.cycle import replay_dir_problem, run_cycle
    problem = replay_dir_problem(args.replay, args.sources)
    if problem:
        print(f"benchwatch run: {problem}", file=sys.stderr)
        return 2
    store = store_of(args)
    if _outputs_refused(args, store):
        return 2
    try:
        if args.no_prefect:
            # the one resolver (environment, then Prefect Secret blocks), handed down
            from flows.secrets import slack_settings, source_secrets
            secrets = None if args.replay is not None else source_secrets(args.sources)
            report = run_cycle(store, args.sources, replay_dir=args.replay, collect_only=args.collect_only,
                               secrets=secrets, slack=slack_settings)
        else:
            from flows.ephemeral import run_pipeline  # returns the report also when the flow run ends Failed
            from flows.secrets import password_to_environment
            # Prefect stores a flow run's parameters: a lake's PostgreSQL password goes to libpq
            # through PGPASSWORD (this process's environment), never into db_path
            db_path = password_to_environment(str(args.db or default_path()))
            report = run_pipeline(db_path=db_path, sources=list(args.sources or []) or None,
                                  replay_dir=None if args.replay is None else str(args.replay),
                                  collect_only=args.collect_only)
    except Exception as exc:  # noqa: BLE001 - only the orchestration's own start-up failure is expected
        if args.no_prefect:
            raise       # no orchestration to blame (and flows.ephemeral would import Prefect)
        from flows.ephemeral import OrchestrationUnavailable
        if not isinstance(exc, OrchestrationUnavailable):
            raise
        print(f"benchwatch run: {exc}", file=sys.stderr)
        return 1
    print(report.text())
    return 0 if report.ok else 1


def _outputs_refused(args: argparse.Namespace, store: Store) -> bool:
    """The database is not inside the --replay folder nor benchwatch's configuration, and the
    report page ($BENCHWATCH_REPORT_DIR/report.html) is none of those nor the database."""
    from jobs.outputs import Input, database_inputs, own_inputs
    from jobs.publish import report_page_from_env
    replay = [Input("the --replay folder", args.replay, folder=True)] if args.replay else []
    if database_refused("run", store, replay):
        return True
    page = report_page_from_env()
    return page is not None and output_refused(
        "run", page, database_inputs(store) + replay + own_inputs())
