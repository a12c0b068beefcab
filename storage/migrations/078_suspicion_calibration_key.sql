-- 078: the item-set calibration a suspicion is judged by (issue 50). A suspicion takes its set's
-- calibration key (contamination_set_calibrations.input_key, 077) when it is first flagged and
-- whenever its own evidence changes (new item results of the model or of its references); an
-- analysis that brings no new evidence for it keeps the key, so its verdict (confirmed, or shown
-- unconfirmed because its set's calibration fails) never flips on data that are not its own.
-- NULL: a signal calibrated as a whole (`benchwatch calibrate`), or a suspicion stored before.
ALTER TABLE contamination_suspicions ADD COLUMN IF NOT EXISTS calibration_key VARCHAR;
