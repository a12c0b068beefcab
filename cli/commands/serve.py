"""`benchwatch serve`: run the flows on their schedules from this one process, without a worker.

The single-machine alternative to `prefect.yaml` + a work pool: the same four deployments
with the same schedules (constants in flows/pipeline.py), registered on the Prefect server
and executed as subprocesses of this command, one at a time. Stop it with Ctrl-C; its
schedules are paused on shutdown. Needs a Prefect server (PREFECT_API_URL), because the
temporary server of ephemeral mode does not create scheduled runs.
"""

from __future__ import annotations

import argparse
import sys

import scrapers
from cli.main import add_db_argument, add_sources_argument


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("serve", help="run the flows on their schedules from this process (no worker needed)",
                       description="Register the pipeline (daily), collect (hourly), analyze and notify "
                                   "deployments on the Prefect server at PREFECT_API_URL and run their flow runs "
                                   "here, one at a time, until interrupted. Use this or a worker with "
                                   "prefect.yaml, not both: they use the same deployment names.",
                       epilog="sources: " + ", ".join(scrapers.SOURCES))
    add_sources_argument(p, "comma-separated subset of sources (default: every enabled source)")
    add_db_argument(p)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from prefect import serve
    from prefect.deployments.runner import EntrypointType
    from prefect.schedules import Cron
    from prefect.settings import get_current_settings

    from flows import pipeline as p

    if get_current_settings().api.url is None:
        print("benchwatch: serve needs a Prefect server: start one (`prefect server start`) and set "
              "PREFECT_API_URL, e.g. export PREFECT_API_URL=http://127.0.0.1:4200/api", file=sys.stderr)
        return 2
    sources = args.sources
    # Deployments store their parameters on the server: a lake's PostgreSQL password goes to
    # PGPASSWORD of this process instead, which the flow runs (its subprocesses) inherit.
    from flows.secrets import password_to_environment
    db_path = None if args.db is None else password_to_environment(str(args.db))
    collect_params = {"db_path": db_path, "sources": sources, "replay_dir": None}

    def deployment(flow, name: str, parameters: dict, cron: str | None = None):
        """The same options for every deployment (typed keywords, not a ** of a mixed dict)."""
        return flow.to_deployment(name=name, parameters=parameters,
                                  schedules=[Cron(cron, timezone=p.TIMEZONE)] if cron else None,
                                  entrypoint_type=EntrypointType.MODULE_PATH, concurrency_limit=1,
                                  tags=["benchwatch"])

    serve(
        deployment(p.pipeline, p.PIPELINE_DEPLOYMENT, {**collect_params, "collect_only": False}, p.PIPELINE_CRON),
        deployment(p.collect, p.COLLECT_DEPLOYMENT, collect_params, p.COLLECT_CRON),
        deployment(p.analyze, p.MANUAL_DEPLOYMENT, {"db_path": db_path}),
        deployment(p.notify, p.MANUAL_DEPLOYMENT, {"db_path": db_path}),
        limit=1,
    )
    return 0
