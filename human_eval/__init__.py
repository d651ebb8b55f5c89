"""Human labels and judge calibration: label schema, importers, agreement statistics
(κ, balanced accuracy, correlations with bootstrap CIs, ICC), and judge selection."""
