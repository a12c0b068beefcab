-- 080: a backtest interval that widens with the rise a forecast expects (issue 53;
-- analysis/backtest.py, pooled_quantiles). A live forecast's interval is forecast + q_low +
-- q_low_per_rise (forecast - frontier) .. forecast + q_high + q_high_per_rise (forecast -
-- frontier). Rows stored before have NULL here (read as 0: the former constant interval); the
-- next `benchwatch backtest` replaces them.
ALTER TABLE forecast_backtest_summary ADD COLUMN IF NOT EXISTS q_low_per_rise DOUBLE;
ALTER TABLE forecast_backtest_summary ADD COLUMN IF NOT EXISTS q_high_per_rise DOUBLE;
