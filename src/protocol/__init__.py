"""The papers' clustering protocol: draw a trial, factorize, cluster the representation, score it."""
