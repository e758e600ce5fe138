"""The LCF paper's own code: its extra figures (three-Gaussian toy, AC/NMI against lambda, convergence).

:func:`figures` is called by ``python -m src.reproduce lcf`` after the sweeps; alone::

    python -m src.presentation.papers.lcf [--out DIR] [--lambda-runs DIR] [--seed 0]

* ``three_gaussians.png`` (the paper's Fig. 3): 150 points from three 2-D Gaussians and the three bases
  found by NMF (columns of U) and by LCF (the concepts X W). NMF needs nonnegative data, so the Gaussians
  are centred in the positive quadrant; both methods start from random factors.
* ``lambda.png`` (Fig. 4): mean AC and NMI at k = 3 against lambda (powers of two), read from the
  ``results.csv`` files of the lambda sweep (never recomputed here).
* ``convergence.png`` (Fig. 5): the objective of NMF, CF and LCF after each iteration on Yale and ORL, one
  trial of k = 10 drawn by the protocol.
"""

import argparse
import json
import logging
import sys
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

from ... import methods  # noqa: E402
from ...data.named import load_named  # noqa: E402
from ...files import atomic_path  # noqa: E402
from ...protocol.trials import make_trial  # noqa: E402
from ...running.results import find_results, read_results  # noqa: E402

logger = logging.getLogger(__name__)


def save_png(fig, path: Path) -> None:
    with atomic_path(path, suffix=".png") as tmp:
        fig.savefig(tmp, dpi=110)
    plt.close(fig)


def three_gaussians(out: Path, seed: int, lam: float) -> None:
    rng = np.random.default_rng(seed)
    centres = np.array([[2.0, 8.0], [5.0, 3.0], [9.0, 7.0]])
    X = np.concatenate([rng.normal(c, 0.6, size=(50, 2)) for c in centres]).clip(min=0)
    nmf = methods.make("nmf", n_components=3, max_iter=500, random_state=seed).fit(X)
    lcf = methods.make("lcf", n_components=3, max_iter=500, random_state=seed, lam=lam).fit(X)
    concepts = (X.T @ lcf.factors_["W"]).T  # the bases X W the locality term pulls toward the data
    fig, ax = plt.subplots(figsize=(6, 5), constrained_layout=True)
    ax.scatter(*X.T, s=10, c="0.6", label="data")
    ax.scatter(*nmf.factors_["U"], marker="^", s=90, c="tab:red", label="NMF bases (U)")
    ax.scatter(*concepts.T, marker="*", s=160, c="tab:blue", label=f"LCF bases (X W), lambda={lam}")
    ax.legend(fontsize="small")
    ax.set_title("Three Gaussians: bases found by NMF and LCF")
    save_png(fig, out / "three_gaussians.png")


def lambda_figure(out: Path, runs: Path) -> None:
    frame = read_results(find_results([runs]))
    frame = frame.assign(lam=frame["params"].map(lambda p: json.loads(p)["lam"]))
    fig, axes = plt.subplots(1, 2, figsize=(10, 4), constrained_layout=True)
    for ax, metric in zip(axes, ("acc", "nmi")):
        for dataset, rows in frame.groupby("dataset"):
            curve = rows.groupby("lam")[metric].mean() * 100
            ax.semilogx(curve.index, curve.values, marker="o", base=2, label=dataset)
        ax.set_xlabel("lambda")
        ax.set_ylabel({"acc": "accuracy (%)", "nmi": "NMI (%)"}[metric])
        ax.grid(alpha=0.3)
        ax.legend()
    fig.suptitle("LCF at k = 3 against lambda")
    save_png(fig, out / "lambda.png")


def convergence_figure(out: Path, seed: int, lam: float) -> None:
    labels = {"NMF": ("nmf", {}), "CF": ("cf", {}), "LCF": ("lcf", {"lam": lam})}
    fig, axes = plt.subplots(2, 3, figsize=(12, 6.5), constrained_layout=True)
    for row, name in enumerate(("yale", "orl")):
        data = load_named(name)
        trial = make_trial(data.y, data.name, 10, 0, seed, {"mode": "none"})
        for col, (label, (method, params)) in enumerate(labels.items()):
            model = methods.make(method, n_components=10, max_iter=200, random_state=trial.init_seed,
                                 stopping="fixed", n_starts=1, **params)  # the curve of one start
            history = model.fit(data.X[trial.index]).objective_history_
            axes[row, col].plot(np.arange(1, len(history) + 1), history)
            axes[row, col].set_title(f"{label} on {name}")
            axes[row, col].set_xlabel("iteration")
            axes[row, col].set_ylabel("objective")
    save_png(fig, out / "convergence.png")


def figures(out: Path, lambda_runs: Path | None = None, seed: int = 0, lam: float = 0.3) -> None:
    """Write the three figures into ``out``; the lambda study is read from ``lambda_runs`` (default
    ``out/lambda``, where reproduce.yaml's lambda sweep writes), skipped if it is absent."""
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    lambda_runs = Path(lambda_runs) if lambda_runs is not None else out / "lambda"
    three_gaussians(out, seed, lam)
    convergence_figure(out, seed, lam)
    if lambda_runs.is_dir():
        lambda_figure(out, lambda_runs)
    logger.info("wrote the LCF figures into %s", out)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog=f"python -m {__spec__.name}", description=__doc__.splitlines()[0])
    parser.add_argument("--out", default="outputs/reproduce/lcf")
    parser.add_argument("--lambda-runs", default="outputs/reproduce/lcf/lambda")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--lam", type=float, default=0.3, help="lambda of the toy and convergence figures")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="[%(levelname)s] %(message)s")
    figures(Path(args.out), Path(args.lambda_runs), args.seed, args.lam)
    return 0


if __name__ == "__main__":
    sys.exit(main())
