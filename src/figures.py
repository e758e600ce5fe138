"""Figures laid out like the papers': accuracy and NMI against the number of classes k."""

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import pandas as pd  # noqa: E402

from .tables import METRICS  # noqa: E402


def plot_metrics_vs_k(frame: pd.DataFrame, title: str, path, methods=None) -> None:
    """Two panels (AC, NMI), mean over trials against k, one line per method; saved as PNG at ``path``."""
    fig, axes = plt.subplots(1, 2, figsize=(10, 4), constrained_layout=True)
    for ax, (metric, label) in zip(axes, METRICS.items()):
        curves = frame.groupby(["k", "method"])[metric].mean().unstack("method") * 100
        if methods is not None:
            curves = curves.reindex(columns=methods)
        for method in curves.columns:
            ax.plot(curves.index, curves[method], marker="o", label=method)
        ax.set_xlabel("number of classes k")
        ax.set_ylabel(label)
        ax.grid(alpha=0.3)
    axes[0].legend(fontsize="small")
    fig.suptitle(title)
    fig.savefig(path, dpi=120)
    plt.close(fig)
