"""The derived relations of `benchwatch analyze`, one module each, and the one step that keeps or
recomputes them by input fingerprint (issue 52).

A relation (`base.Relation`) reads its inputs (through storage, shared per run by `base.Inputs`),
computes (pure analysis/) and writes its rows through storage; it declares its unit (the key its
rows are replaced by) and, where it has some, how its day-relative columns move. `step.materialize`
is the one keep-or-recompute step: per relation, the units whose fingerprint changed are
recomputed and written, the others are kept and only their day-relative columns move to `now`.
A full analysis is the case "every unit changed", a new day without new data the case "no unit
changed" (`step.Plan`). The contamination run carries the tests of two relations, its item sets'
and A1/A2's link, whose kept units' stored tests enter the new run (`Relation.keep`).
`dag.RELATIONS` lists them in the order they read each other.
"""
