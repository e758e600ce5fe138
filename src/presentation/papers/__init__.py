"""What is a paper's own in code: ``<name>.py`` defines ``figures(out)``, the extra figures of paper
``<name>`` (found by :meth:`src.reproduction.homes.Paper.module`)."""
