"""Tools beside the pipeline, run from a checkout and not installed: the benchmark, the cross-check, the estimator checks."""
