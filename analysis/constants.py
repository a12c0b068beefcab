"""Every statistical threshold and default of benchwatch, in one place.

Each constant names where it comes from (DESIGN.md / METHODS.md section or paper).
"""

# --- Saturation index (Akhtar, Reuel et al. 2026, §2.2; DESIGN §4) ---------------------

# --- Trends and forecasts (DESIGN §4, METHODS C2/C3) --------------------------------------

# --- Bin hysteresis (DESIGN §6, METHODS D) ------------------------------------------------

# --- Post-cutoff slices and contamination (DESIGN §5, METHODS A/B) -------------------------
