"""Every statistical threshold and default of benchwatch, in one place.

Each constant names where it comes from (a docs/statistics.md section, or the paper).
"""

# --- Saturation index (Akhtar, Reuel et al. 2026, §2.2; docs/statistics.md, "Saturation index") ---------------------
SATURATION_K = 5                 # top-k models compared (paper: top-5)
SATURATION_ALPHA = 0.5           # n_eff = n ** alpha (paper default: sqrt(n))
SATURATION_Z = 1.96              # "statistically similar": s1 - sk <= z * SE_delta
# Bin edges on S_index: very low < 0.01 <= low < 0.3 <= moderate < 0.7 <= high < 0.9 <= very high
SATURATION_BIN_EDGES = (0.01, 0.3, 0.7, 0.9)
SATURATION_BINS = ("very low", "low", "moderate", "high", "very high")
SATURATED_BINS = ("high", "very high")   # docs/statistics.md: saturated = high or very high
# SE_delta is 0 only when s1 and sk are both in {0, 1} (the analyzer sets SE(0) = SE(1) = 0).
# R_norm = (s1 - sk) / max(SE_delta, eps): 0 when s1 == sk (as the analyzer), huge when 1 vs 0.
SE_DELTA_EPSILON = 1e-12
# Stagnation (paper: top models indistinguishable far below the ceiling): saturated and the
# frontier still at least this share of the chance-to-ceiling range away from the ceiling.
STAGNATION_MIN_HEADROOM = 0.2
# Bin stability of S_index (docs/statistics.md "How firm is the bin"): each model's score is
# redrawn with the real sampling noise of one re-evaluation (Binomial(n, s)/n at the benchmark's
# n items, or N(s, published SE) where S uses published SEs), the top k re-selected from all
# models, S recomputed with the paper's convention; the share of draws per bin is stored.
SATURATION_RESAMPLE_DRAWS = 2000  # Monte Carlo error of a probability <= 0.5/sqrt(2000) = 0.011
# Only models that can reach a draw's top k are redrawn: a model is left out when its own upper
# tail and the top k's lower tail, each at this probability, do not overlap (Hoeffding for
# Binomial(n, s)/n, the Gaussian tail for N(s, SE)). The draws' top k then differ from a redraw of
# every model with probability <= models * 1e-12 per draw: at 2,000 models x 2,000 draws a
# benchmark's draws are all unchanged except with probability 4e-6, and a bin probability moves
# by at most 2e-9 in expectation, far below its Monte Carlo error (0.011).
SATURATION_RESAMPLE_PRUNE_EPSILON = 1e-12
# A published CI is taken as a 95% normal interval: SE = (ci_high - ci_low) / (2 * 1.96).
PUBLISHED_CI_Z = 1.96
# Metric kinds that get no saturation index, and why (docs/statistics.md, "Metric kinds without an
# index"): S asks whether the top k are apart by more than their sampling noise on a score scale;
# these are not scores with sampling noise on such a scale. The reason is stored with the table.
NO_INDEX_METRICS = {
    "minutes": "no index: a time horizon in minutes is a task length (METR's, with an asymmetric "
               "interval on a log scale), not a score over a test set",
    "cost_usd": "no index: a cost, not a score with sampling noise",
}


# --- Trends and forecasts (docs/statistics.md, "Trends and forecasts") --------------------------------------
TREND_WINDOW_DAYS = 365          # slope of the frontier over the year ending at the benchmark's last result
TREND_MIN_DATES = 2              # fewer distinct model dates in that window: "no data in window" (NULL slope)
TREND_MIN_POINTS = 6             # fewer distinct frontier points (changes + window ends): slope without a CI
                                 # (from 3-5 points Theil-Sen's 95% CI is the range of the pairwise slopes)
TREND_CONFIDENCE = 0.95          # CI level of the Theil-Sen slope
STALLED_MIN_DAYS = 180           # "stalled": no rise shown and last record older than this at the trend's end
PLATEAU_ALPHA = 0.05             # "plateau": F-test of L = threshold against a lower L rejects at this level
CV_WINDOW_DAYS = 90              # rolling mean window of the top-k coefficient of variation
DAYS_PER_MONTH = 365.25 / 12
DAYS_PER_YEAR = 365.25
FORECAST_MIN_RECORDS = 5         # fewer record-setting points: logistic fit is insufficient data
FORECAST_PROGRESS = 0.9          # default threshold: floor + 0.9 * (ceiling - floor)
FORECAST_MAX_CI_MONTHS = 24      # a wider forecast CI is insufficient data
FORECAST_CI_Z = 1.96             # delta-method CI of the forecast date
FORECAST_HORIZON_YEARS = 10      # a forecast later than this after the last observation: beyond_horizon, no date
LOGISTIC_MAX_RATE = 50.0         # upper bound on the logistic rate k (per year)
LOGISTIC_T0_SPAN_YEARS = 30.0    # t0 bounded to [first record - span, last record + span]
LOGISTIC_L_BOUND_TOL = 1e-6      # L within this share of (ceiling - floor) of max F: pinned at its bound


# --- The series a saturation level belongs to ---------------------------------------------------------------------------
# The one key of a level series (analysis.hysteresis.series_levels; storage.levels; the alert rule):
# the stored level, its hysteresis state and the alert fingerprint are per value of these columns
# (and per k, alpha): one leaderboard table (registry.tables, issue 20), scope and population.
SERIES_KEY: tuple[str, ...] = ("table_id", "scope", "population")


# --- Bin hysteresis (docs/statistics.md, "Bin changes without flapping") ------------------------------------------------
HYSTERESIS_MIN_MARGIN = 0.05     # h: S must clear an edge by 0.05 (capped per edge, below)
# A proposed move counts only when at least this share of the re-evaluation draws of S (see
# SATURATION_RESAMPLE_DRAWS) lies beyond the crossed edge on the side of the move (a move the
# sampling noise alone could undo is not committed). No draws: the margin alone decides.
HYSTERESIS_MIN_SUPPORT = 0.8
# A one-bin move is committed once every snapshot since the one that first proposed it has kept
# proposing it for this many days (evidence that the new S stays, whether the source publishes
# daily or is frozen), never by counting snapshots: an identical re-publication adds no evidence.
LEVEL_DWELL_DAYS = 7
# A level never sits this many bins or more from the bin of its own S: such a move commits at
# once (to the bin the margin and support allow, at most one bin short of S's own).
LEVEL_MAX_LAG_BINS = 2
# The margin at an edge is at most this share of the narrower bin it separates: with h = 0.05
# the very-low bin [0, 0.01) could otherwise never be entered from above (x <= 0.01 - 0.05).
HYSTERESIS_EDGE_CAP = 0.5


# --- Post-cutoff slices and contamination (docs/statistics.md, "Model dates and post-cutoff slices", "Contamination-suspect signals") -------------------------
GUARD_BAND_DAYS = 30             # g: margin around cutoffs (staged rollouts, post-training data)
UNKNOWN_CUTOFF_LOOKBACK_MONTHS = 12   # unknown cutoff: c_lo = release - 12 months, c_hi = release
DATE_CONFLICT_DAYS = 31          # two claims further apart than this are a visible conflict
# A source's date claim that moves by at most this between its snapshots is jitter (the same
# instant read in two time zones, a re-serialised file; dates are stored by day, so an instant that
# moves by less than a day can show as two dates a day apart), not a revision: the first value seen
# is kept (analysis.cutoffs.first_of_jitter), so it cannot move a test's windows.
DATE_JITTER_MAX = "1D"
# Which claim about a model's dates wins (docs/statistics.md, "Trust of a cutoff claim"): most authoritative first.
# 'registry' = a curated registry row without a finer provenance. Unknown provenances rank last.
PROVENANCE_PRIORITY = ("vendor_doc", "model_card", "registry", "leaderboard", "listing", "inferred")
# Tie-break between sources of equal provenance; sources not listed follow, alphabetically.
DATE_SOURCE_PRIORITY = ("registry", "knowledge_cutoffs", "epoch", "lmarena", "livecodebench", "artificial_analysis",
                        "tau2_bench", "arc_agi", "openrouter")
# Placeholder cutoffs (docs/statistics.md "Trust of a cutoff claim"): one source's date that at least
# this many of its models share is a default, not a claim, when it is a year boundary (Jan 1 / Dec 31)
# or precedes those models' release dates by more than PLACEHOLDER_MIN_LAG_DAYS (median), unless
# another source states the same date (within DATE_CONFLICT_DAYS) for that model.
PLACEHOLDER_MIN_MODELS = 3
PLACEHOLDER_MIN_LAG_DAYS = 365
# Cutoff trust levels that may make a model a clean A3 reference ('placeholder' never does).
CUTOFF_TRUST_LEVELS = ("stated", "inferred", "placeholder")
REFERENCE_TRUST = ("stated", "inferred")
LOW_N_ITEMS = 100                # LCB's "We recommend a larger time-window" threshold (B2)
MIN_EFFECT = 0.05                # practical significance: effect >= 5 pp ...
MIN_EFFECT_SE = 2.0              # ... and >= 2 standard errors of the effect
FDR_Q = 0.05                     # Benjamini-Hochberg level over every test of a run
# The status of a contamination test, strongest first (families.finalize); the alert rule checks
# against it without importing the signals (and scipy).
CONTAMINATION_STATUSES = ("corroborated", "persisted", "suspect", "not_flagged")
# A flagged test is a suspicion with a stored state (analysis/contamination/suspicions.py):
# pending until its first notification is due, confirmed (the alert fires), resolved (new data
# for that test no longer flag it). The first notification is due when the test was flagged on
# two analyses of distinct data, or corroborated by another signal or source, or at once when
# its BH q is at most SUSPICION_CONFIRM_Q (a fifth of FDR_Q).
SUSPICION_STATES = ("pending", "confirmed", "resolved")
# Signals that are computed and stored as evidence but never deliver a confirmed alert nor corroborate
# another signal, with the reason (issue 50; docs/statistics.md, "A1 is retired from alerting"). A1:
# on real data its prediction scale (the references' leave-one-out residuals of real models) leaves a
# minimum detectable effect of several times MIN_EFFECT; its placebo never reaches the nominal rate.
RETIRED_SIGNALS = {"A1": "A1 is retired from alerting: on real data the spread of clean models around the "
                         "cross-benchmark link (its prediction scale) leaves it no power at the effects it "
                         "could flag (docs/statistics.md, A1 is retired from alerting)"}
SUSPICION_CONFIRM_Q = 0.01
A3_MIN_ITEMS_PER_SIDE = 50       # A3 floor: items in each of the pre and post windows
A3_MIN_REF_MODELS = 3            # A3: clean reference models needed for the drift control (our floor)
A3_REFS_PER_PARAMETER = 3        # A3 ability smoother: degree 2 from 9 references, 1 from 6, else the mean
A3_MIN_REF_COVERAGE = 0.9        # A3: a reference must be scored on >= 90 % of the model's window items
FISHER_MIN_EXPECTED = 5          # A3: Fisher exact instead of the z-test when an expected cell < 5
A1_MIN_REF_MODELS = 8            # A1 floor |M_ref| (ConStat's hard floor is 5)
A1_MIN_UNIQUE_RESAMPLED = 5      # bootstrap resamples of M_ref keep >= 5 distinct models
A1_ISOTONIC_MIN_REF = 15         # link: logit-linear below 15 reference models, isotonic from 15
A1_BOOTSTRAP_B = 2000            # parametric bootstrap replicates
A1_MIN_TAIL_COUNT = 10           # fewer replicates with δ* <= 0: p from the bootstrap's normal tail
A1_ROBUST_Z = 3.5                # self-consistency guard: modified z of the residual profile
A1_ROBUST_Z_MIN_BENCHMARKS = 5   # ... applied when the model has A1 residuals on >= 5 benchmarks
A2_MIN_Z = 3.0                   # A2: z_J >= 3 (one-sided p ~ 0.0013)
CALIBRATION_TRIALS = 200         # placebo trials of `benchwatch calibrate` and of each item set's calibration
# Signals calibrated per item set, on that set's own data, by every analysis that reads it
# (analysis/contamination/set_calibration.py, issue 50): the contamination_suspect rule judges their
# flags by their own set's calibration; the other signals' by the newest `benchwatch calibrate`.
SET_CALIBRATED_SIGNALS = ("A3",)
# A3's targets (issue 19), reported by `benchwatch calibrate --power`: placebo P(p < .05) within
# [3 %, 7 %] and P(p < .01) <= 2 %; power with a gain planted in pre-cutoff items: P(p < .05) >= 50 %
# at +10 pp, P(flagged under the full rule, after BH) >= 90 % at +20 pp.
A3_PLACEBO_P05 = (0.03, 0.07)
A3_PLACEBO_P01_MAX = 0.02
A3_POWER_P05_AT_10 = 0.50
A3_POWER_FLAG_AT_20 = 0.90
# `benchwatch calibrate` compares placebo p-value shares with 0.01 / 0.05 and the family-wise rate with FDR_Q.

# --- sizes from the data (analysis/sizes.py) ----------------------------------------------
IMPLIED_N_SMALL_RATIO = 0.5      # median implied n below this share of the registry's n: fewer items were run
IMPLIED_N_MIN_ROWS = 3           # rows (or models) a table needs before its implied n is judged


# --- Forecast backtest (docs/statistics.md, "Forecasts with a track record"; analysis/backtest.py) ---------------------
BACKTEST_HORIZONS_MONTHS = (3, 6, 12)   # forecast horizons scored at each monthly origin
BACKTEST_NOMINAL = 0.8                  # the intervals' nominal coverage
BACKTEST_COVERAGE_TARGET = (0.7, 0.9)   # an 80 % interval is calibrated when it covers 70-90 % of outcomes
BACKTEST_MIN_HISTORY_DAYS = 180         # dated history a table needs before an origin
BACKTEST_MIN_RECORDS = 3                # frontier records a table needs by an origin
BACKTEST_FOLDS = 5                      # intervals are calibrated on the other folds' tables (cross-fitting)
BACKTEST_MIN_TABLES = 5                 # tables of a metric kind a method needs to be chosen or calibrated
BACKTEST_BOOTSTRAP_B = 1000             # table-clustered bootstrap resamples of the summary's CIs
BACKTEST_CI = 0.9                       # level of those CIs
BACKTEST_SEED = 53                      # the bootstrap's seed (issue 53): the same summary on the same rows

# --- when sources disagree (analysis/disagreement.py, issue 54) ------------------------------
DISAGREEMENT_Z = 3.0             # a finding: |z| of the gap after the pair of sources' offset >= 3 ...
DISAGREEMENT_FDR = FDR_Q         # ... and kept by Benjamini-Hochberg at this level over independent units
OFFSET_MIN_PAIRS = 5             # a systematic offset of two tables is estimated from >= 5 compared models
OFFSET_SIGNIFICANT_SE = 2.0      # reported as a systematic offset when |median gap| >= 2 of its SEs
MAD_TO_SD = 1.4826               # a normal's SD from its median absolute deviation
MEDIAN_SE_FACTOR = 1.2533        # SE of a median = sqrt(pi/2) * SD / sqrt(n) (normal data)
TRANSCRIPTION_TOLERANCE = 0.005  # a copy off its origin by more: half a point on a proportion, 0.5 % of the value else
