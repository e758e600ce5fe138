"""The CNMF paper's own code: its two extra figures, basis images on ORL and objective against iteration.

:func:`figures` is called by ``python -m src.reproduce cnmf`` after the sweeps; alone::

    python -m src.presentation.papers.cnmf [--out DIR] [--seed 0] [--max-iter 200]

* ``basis_images.png`` (the paper's Fig. 2): the 25 bases of NMF, CNMF and CNMF-KL learned from the
  250 images of 25 ORL subjects (rank 25, 2 labelled images per subject for the constrained methods,
  pixels scaled to [0, 1]), each shown as an upright 32x32 image.
* ``convergence.png`` (Fig. 6): the objective of NMF, CNMF and CNMF-KL after each iteration on ORL, Yale
  and Caltech-101, for one trial of k = 10 classes drawn by the protocol (the same trial for the three).
* ``extra.md``: a short paragraph the paper report includes (iterations to reach 99% of the decrease).
"""

import argparse
import logging
import sys
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

from ... import methods  # noqa: E402
from ...data import as_images  # noqa: E402
from ...data.named import load_named  # noqa: E402
from ...protocol.trials import make_trial  # noqa: E402
from ...files import atomic_path, write_atomic  # noqa: E402

logger = logging.getLogger(__name__)

METHODS = {"NMF": "nmf", "CNMF": "cnmf", "CNMF-KL": "cnmf_kl"}
LABELS = {"orl": {"mode": "per_class", "per_class": 2}, "default": {"mode": "fraction", "fraction": 0.1}}


def save_png(fig, path: Path) -> None:
    with atomic_path(path, suffix=".png") as tmp:
        fig.savefig(tmp, dpi=110)
    plt.close(fig)


def basis_figure(out: Path, seed: int, max_iter: int) -> None:
    """Fit the three methods on 25 ORL subjects and draw their 25 bases each."""
    orl = load_named("orl", ["dataset.preprocess=scale01"])
    keep = orl.y < 25
    X, y = orl.X[keep], orl.y[keep]
    rng = np.random.default_rng(seed)
    y_partial = np.full_like(y, -1)
    for c in range(25):
        y_partial[rng.choice(np.flatnonzero(y == c), 2, replace=False)] = c
    fig, axes = plt.subplots(1, 3, figsize=(12, 4.4), constrained_layout=True)
    for ax, (label, name) in zip(axes, METHODS.items()):
        model = methods.make(name, n_components=25, max_iter=max_iter, random_state=seed).fit(X, y_partial)
        bases = model.components_ / model.components_.max(axis=1, keepdims=True)
        images = as_images(type(orl)(orl.name, bases, np.arange(25), orl.image_shape, None, orl.pixel_order))
        mosaic = images.reshape(5, 5, 32, 32).transpose(0, 2, 1, 3).reshape(160, 160)
        ax.imshow(mosaic, cmap="gray")
        ax.set_title(label)
        ax.axis("off")
    fig.suptitle("Basis images learned from 25 ORL subjects (rank 25)")
    save_png(fig, out / "basis_images.png")


def convergence_figure(out: Path, seed: int, max_iter: int) -> str:
    """Objective against iteration for the three methods on each data set; returns a Markdown summary."""
    datasets = ("orl", "yale", "caltech101")
    fig, axes = plt.subplots(len(datasets), len(METHODS), figsize=(12, 9), constrained_layout=True)
    lines = ["## Convergence (the paper's Fig. 6)", "",
             f"One trial of k = 10 per data set, {max_iter} iterations; iterations needed to achieve 99% of the "
             "total decrease of the objective:", "", "| data set | " + " | ".join(METHODS) + " |",
             "|---" * (len(METHODS) + 1) + "|"]
    for row, name in enumerate(datasets):
        data = load_named(name)
        trial = make_trial(data.y, data.name, 10, 0, seed, LABELS.get(name, LABELS["default"]))
        counts = []
        for col, (label, method) in enumerate(METHODS.items()):
            model = methods.make(method, n_components=10, max_iter=max_iter, random_state=trial.init_seed,
                                 stopping="fixed", n_starts=1)  # the curve of one start
            model.fit(data.X[trial.index], trial.y_partial)
            history = model.objective_history_
            decrease = history[0] - history
            counts.append(int(np.argmax(decrease >= 0.99 * decrease[-1])) + 1)
            ax = axes[row, col]
            ax.plot(np.arange(1, len(history) + 1), history)
            ax.set_title(f"{label} on {name}")
            ax.set_xlabel("iteration")
            ax.set_ylabel("objective")
        lines.append(f"| {name} | " + " | ".join(map(str, counts)) + " |")
    save_png(fig, out / "convergence.png")
    return "\n".join(lines + ["", "![convergence](convergence.png)", "", "![bases](basis_images.png)", ""])


def figures(out: Path, seed: int = 0, max_iter: int = 200) -> None:
    """Write ``basis_images.png``, ``convergence.png`` and ``extra.md`` into ``out``."""
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    basis_figure(out, seed, max_iter)
    write_atomic(out / "extra.md", convergence_figure(out, seed, max_iter))
    logger.info("wrote %s", out / "extra.md")


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog=f"python -m {__spec__.name}", description=__doc__.splitlines()[0])
    parser.add_argument("--out", default="outputs/reproduce/cnmf")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--max-iter", type=int, default=200)
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="[%(levelname)s] %(message)s")
    figures(Path(args.out), args.seed, args.max_iter)
    return 0


if __name__ == "__main__":
    sys.exit(main())
