-- 075: a stored forecast never contradicts its status (issue 53). Only status 'ok' has a
-- forecast_date (and its interval); 'reached' keeps the date the frontier was observed at the
-- threshold under its own name, reached_at. Rows written before: the reached date moves to
-- reached_at, and the dates of statuses without one (insufficient_data carried the Theil-Sen
-- line's crossing) are cleared. The next analyze rewrites every row the same way.
ALTER TABLE trends ADD COLUMN IF NOT EXISTS reached_at TIMESTAMPTZ;
UPDATE trends SET reached_at = forecast_date WHERE forecast_status = 'reached';
UPDATE trends SET forecast_date = NULL, forecast_ci_low = NULL, forecast_ci_high = NULL
WHERE forecast_status IS DISTINCT FROM 'ok';
