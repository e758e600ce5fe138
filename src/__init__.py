"""Reproduction pipeline for label-constrained and geometry-aware matrix factorization papers."""
