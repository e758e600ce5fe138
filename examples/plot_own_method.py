"""
Your own method against the family: a projected-gradient NMF ranked on Yale
===========================================================================

A method of your own enters the family benchmark by where its class lives, with nothing copied into the
repository (the manual's page "Benchmark your own method"). This script defines a small method itself, a
Frobenius NMF solved by projected gradient steps instead of multiplicative updates, and ranks it against
the family on Yale, in the unsupervised track only. In a shell, from the checkout, the same run is

.. code-block:: bash

    python -m src.benchmark --method examples/plot_own_method.py:ProjectedNMF \\
        --tracks unsupervised --datasets yale --out /tmp/projected_nmf

Only the method's own cells are computed (k = 2..10, 10 trials each); the family's come from the cells
that ship with the repository, ``papers/benchmark/family_cells.csv.gz``.
"""

# %%
# The method
# ----------
# A scikit-learn estimator: ``n_components`` and ``random_state`` in ``__init__`` (the protocol sets both
# in every cell: the rank k and the trial's seed), each stored under its own name, and ``fit_transform``
# returning the (n_samples, n_components) representation that the protocol clusters with KMeans. ``y``
# holds -1 for every unlabelled sample; this method reads no labels, so it enters every track
# (``needs_labels = True`` would send it to the two label tracks). ``twin = "nmf"`` names the family
# method it extends: the report compares the two and draws NMF beside it.
#
# Each half-step moves one factor against its gradient with a step of 1/L, L the largest eigenvalue of the other
# factor's Gram matrix, and sets negative entries to zero. At the end the basis rows get unit norm and the
# representation takes their scale, the convention of the family's NMF.
#
# This part is all that runs when the file is imported rather than run as a script.
import numpy as np
from sklearn.base import BaseEstimator, TransformerMixin
from sklearn.utils import check_array, check_random_state


class ProjectedNMF(TransformerMixin, BaseEstimator):
    """Frobenius NMF, X ~ W H with W >= 0 and H >= 0, by alternating projected gradient steps."""

    twin = "nmf"

    def __init__(self, n_components=2, max_iter=200, random_state=None):
        self.n_components = n_components
        self.max_iter = max_iter
        self.random_state = random_state

    def fit_transform(self, X, y=None):
        X = check_array(X, dtype=np.float64)
        rng = check_random_state(self.random_state)
        scale = np.sqrt(X.mean() / self.n_components)
        W = scale * rng.random((X.shape[0], self.n_components))
        H = scale * rng.random((self.n_components, X.shape[1]))
        for _ in range(self.max_iter):
            gram = W.T @ W
            H = np.maximum(H - (gram @ H - W.T @ X) / max(np.linalg.norm(gram, 2), 1e-12), 0.0)
            gram = H @ H.T
            W = np.maximum(W - (W @ gram - X @ H.T) / max(np.linalg.norm(gram, 2), 1e-12), 0.0)
        norms = np.maximum(np.linalg.norm(H, axis=1), 1e-12)
        self.components_ = H / norms[:, None]
        self.n_iter_ = self.max_iter
        return W * norms

    def fit(self, X, y=None):
        self.fit_transform(X, y)
        return self


# %%
# A first try on Yale
# -------------------
# What the benchmark's gate will check before any cell, by hand on the 165 Yale faces: the shape of the
# representation, that it is finite and nonnegative, and that one seed gives one result.
#
# The benchmark imports this file again, under a module name of its own: once in this process for the
# gate, then once in each worker process it starts. Each import runs the file's top level, so everything
# that does more than define the method sits under ``if __name__ == "__main__":``, in every cell from here
# on. Run as a script (``python examples/plot_own_method.py``, or by sphinx-gallery, which runs it as
# ``__main__`` too), the guarded cells run; imported by the benchmark, only the class is defined.
if __name__ == "__main__":
    from src.data.named import load_named

    yale = load_named("yale")
    unlabelled = np.full(len(yale.y), -1)
    model = ProjectedNMF(n_components=yale.n_classes, random_state=0)
    codes = model.fit_transform(yale.X, unlabelled)
    again = ProjectedNMF(n_components=yale.n_classes, random_state=0).fit_transform(yale.X, unlabelled)
    error = np.linalg.norm(yale.X - codes @ model.components_) / np.linalg.norm(yale.X)
    print(f"X {yale.X.shape} -> representation {codes.shape}, basis {model.components_.shape}")
    print(f"finite: {np.isfinite(codes).all()}, nonnegative: {(codes >= 0).all()}, "
          f"same seed, same result: {np.array_equal(codes, again)}")
    print(f"relative error ||X - W H|| / ||X|| after {model.n_iter_} iterations: {error:.3f}")

# %%
# The benchmark
# -------------
# ``--method`` names the class by this file's path. Run by sphinx-gallery, the script has no ``__file__``:
# sphinx-gallery runs it from its folder and puts its full path in ``sys.argv[0]``, which is where the
# path is taken from then. The run and its report go to a temporary folder (``--out``); without it they
# would go to ``outputs/benchmark/ProjectedNMF/``.
if __name__ == "__main__":
    import sys
    import tempfile
    from pathlib import Path

    from src.benchmark import main

    def this_file() -> Path:
        """The path of this script, run by Python (``__file__``) or by sphinx-gallery (``sys.argv[0]``)."""
        path = Path(globals().get("__file__") or sys.argv[0]).resolve()
        if path.suffix != ".py" or not path.is_file():
            raise RuntimeError(f"cannot tell where this script is ({path}): run it as a file, "
                               "python examples/plot_own_method.py")
        return path

    out = Path(tempfile.mkdtemp()) / "projected_nmf"
    status = main(["--method", f"{this_file()}:ProjectedNMF", "--tracks", "unsupervised",
                   "--datasets", "yale", "--out", str(out)])
    if status != 0:
        raise RuntimeError(f"the benchmark stopped with exit status {status} (its log says why)")

# %%
# What the report says
# --------------------
# ``report.md`` opens with one sentence per track and scoring: the method's mean AC rank and place, the
# family methods a Wilcoxon-Holm test finds it better and worse than, and how it fares against its twin.
# Below, one of the figures it wrote beside it: AC and NMI against k on Yale, the method thick, the
# family's best method there and its twin NMF in colour, every other method in thin grey.
if __name__ == "__main__":
    import matplotlib.pyplot as plt

    blocks = (out / "report.md").read_text().split("\n\n")
    print("\n\n".join(blocks[1:3]))  # blocks[0] is the title

    image = plt.imread(out / "unsupervised_k_yale.png")
    fig, ax = plt.subplots(figsize=(10, 10 * image.shape[0] / image.shape[1]))
    ax.imshow(image)
    ax.set_axis_off()
    fig.tight_layout()
    plt.show()
