"""What turns result rows into what a reader sees: tables, figures, per-run and per-paper reports, verdicts, the scorecard.

Nothing here computes a cell; the code fingerprint of a cell (:mod:`src.running.provenance`) leaves this folder out.
"""
