"""The derived relations of `benchwatch analyze`, in the order they read each other: the tables'
catalogue and latest saturation first (the trajectory and the trends read the catalogue's metric
and question-set size), the trajectory before the frontier and the trends (which read only the
primary population of the history it reads whole), the levels after every saturation row of the
day is written, the sources' disagreements (which read the scores alone), and the contamination run
last, after the item sets' and A1/A2's tests it carries (item sets first: they draw from the run's
one random stream before A1/A2, as the signals' registry orders them)."""

from __future__ import annotations

from jobs.relations import (catalogue, contamination, disagreements, frontier, item_tests, levels, link_tests,
                           post_cutoff, saturation, trajectory, trends)
from jobs.relations.base import Relation

SATURATION: tuple[Relation, ...] = (catalogue.RELATION, saturation.RELATION, trajectory.RELATION, frontier.RELATION,
                                    trends.RELATION, post_cutoff.RELATION, levels.RELATION)
RELATIONS: tuple[Relation, ...] = (*SATURATION, disagreements.RELATION, item_tests.RELATION, link_tests.RELATION,
                                   contamination.RELATION)
