-- Model names the database learned from the sources' own data (issue 51): a name no registry
-- entry maps (models.id, after aliases and the naming rules) that a source states facts about in
-- its own model list or beside its scores (model_dates: who made it, a release date, a cutoff, the
-- page it gives for the model).
-- Each fact is the source's, never a guess; `benchwatch status` counts these names apart from
-- the ones nothing states anything about. Not linked across sources: two sources' names of one
-- model are two rows until an alias (registry/aliases.csv) says they are one.
CREATE OR REPLACE VIEW learned_models AS
SELECT model,
       list(DISTINCT model_raw ORDER BY model_raw) AS names,
       list(DISTINCT source ORDER BY source) AS sources,
       list(DISTINCT org ORDER BY org) FILTER (WHERE org IS NOT NULL) AS orgs,
       list(DISTINCT link ORDER BY link) FILTER (WHERE link IS NOT NULL) AS links,
       list(DISTINCT release_date ORDER BY release_date) FILTER (WHERE release_date IS NOT NULL) AS release_dates,
       list(DISTINCT knowledge_cutoff ORDER BY knowledge_cutoff) FILTER (WHERE knowledge_cutoff IS NOT NULL)
           AS knowledge_cutoffs,
       min(observed_at) AS first_observed_at, max(observed_at) AS last_observed_at
FROM model_dates
WHERE source <> 'registry' AND model NOT IN (SELECT id FROM models)
GROUP BY model;

COMMENT ON VIEW learned_models IS 'model name the registry does not know that a source states facts about (organisation, release date, cutoff, the model''s page), with what the sources said; not linked across sources';
COMMENT ON COLUMN learned_models.model IS 'the name as identified (scores.model of its rows): not a registry id';
COMMENT ON COLUMN learned_models.names IS 'the pages'' names of the model where the facts were read';
COMMENT ON COLUMN learned_models.sources IS 'the sources stating facts about it';
COMMENT ON COLUMN learned_models.orgs IS 'the organisations the sources name as its maker or publisher (NULL: none named)';
COMMENT ON COLUMN learned_models.links IS 'the pages the sources give for the model (card, repository, paper, announcement; NULL: none)';
COMMENT ON COLUMN learned_models.release_dates IS 'the release dates the sources state (NULL: none; resolved_cutoffs has the one the analysis used)';
COMMENT ON COLUMN learned_models.knowledge_cutoffs IS 'the knowledge cutoffs the sources state (NULL: none)';
COMMENT ON COLUMN learned_models.first_observed_at IS 'when a statement about it was first seen (UTC)';
COMMENT ON COLUMN learned_models.last_observed_at IS 'when a statement about it was last seen (UTC)';
