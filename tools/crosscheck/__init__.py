"""Cross-check against Deng Cai's MATLAB reference code (issue #12).

``python -m tools.crosscheck`` (``make crosscheck``) fetches the reference files (:mod:`.reference`), runs
each case in GNU Octave (:mod:`.runner`, driver ``octave/crosscheck_case.m``) and ours from the same
inputs (:mod:`.cases`), prints the largest difference per compared pair and writes
``outputs/crosscheck/crosscheck.md``; ``--write-fixtures`` stores the reference outputs as golden
fixtures (:mod:`.fixtures`) that ``tests/tools/test_crosscheck.py`` checks without Octave.
"""
