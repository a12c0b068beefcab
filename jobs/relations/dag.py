"""The derived relations of `benchwatch analyze`, in the order they read each other: the tables'
catalogue and latest saturation first (the trajectory and the trends read the catalogue's metric
and question-set size), the trajectory before the frontier and the trends (which read only the
primary population of the history it reads whole), the levels after every saturation row of the
day is written, the contamination run last."""

from __future__ import annotations

from jobs.relations import catalogue, contamination, frontier, levels, post_cutoff, saturation, trajectory, trends
from jobs.relations.base import Relation

SATURATION: tuple[Relation, ...] = (catalogue.RELATION, saturation.RELATION, trajectory.RELATION, frontier.RELATION,
                                    trends.RELATION, post_cutoff.RELATION, levels.RELATION)
RELATIONS: tuple[Relation, ...] = (*SATURATION, contamination.RELATION)
