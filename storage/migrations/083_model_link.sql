-- 083: the page a source gives for a model (issue 51).
--
-- A leaderboard's row that links its model's card, repository, paper or announcement (EvalPlus,
-- AlpacaEval, BFCL) states which model the name means: model_dates keeps the link beside the
-- organisation and dates a source states, and a name with one is learned (view learned_models,
-- `benchwatch status`). NULL: the row gave none.
ALTER TABLE model_dates ADD COLUMN IF NOT EXISTS link VARCHAR;
