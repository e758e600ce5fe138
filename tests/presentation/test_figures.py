"""The AC/NMI-against-k figure: a marker and band per method, integer k ticks, the protocol as caption."""

import matplotlib.pyplot as plt
import numpy as np

from src.presentation.figures import figure_metrics_vs_k, plot_metrics_vs_k
from test_report import fake_results

METHODS = ["KMeans", "NMF", "GNMF", "CNMF"]


def test_each_method_has_its_own_marker_and_a_std_band():
    frame = fake_results("toy", METHODS, ks=(2, 3, 4, 5))
    fig = figure_metrics_vs_k(frame, "toy", METHODS, caption="Protocol: 3 trials per k; no labels")
    try:
        for ax in fig.axes:
            lines = [line for line in ax.get_lines() if line.get_label() in METHODS]
            assert [line.get_label() for line in lines] == METHODS
            assert len({line.get_marker() for line in lines}) == len(METHODS)
            assert len({line.get_linestyle() for line in lines}) > 1
            assert len(ax.collections) == len(METHODS)  # one fill_between band each
            band = ax.collections[0].get_paths()[0].vertices[:, 1]
            mean = frame[frame.method == "KMeans"].groupby("k")["acc" if ax is fig.axes[0] else "nmi"].mean()
            assert band.min() < mean.min() * 100 and band.max() > mean.max() * 100
            ticks = ax.get_xticks()
            assert np.array_equal(ticks, np.round(ticks)) and list(ticks) == [2, 3, 4, 5]
        assert fig.get_supxlabel().startswith("Protocol: 3 trials per k")
    finally:
        plt.close(fig)


def test_many_ks_still_get_integer_ticks_only(tmp_path):
    frame = fake_results("toy", ["NMF"], ks=tuple(range(2, 31)), trials=2)
    fig = figure_metrics_vs_k(frame, "toy")
    try:
        fig.canvas.draw()
        ticks = [t for t in fig.axes[0].get_xticks() if 2 <= t <= 30]
        assert ticks and all(float(t).is_integer() for t in ticks)
    finally:
        plt.close(fig)
    plot_metrics_vs_k(frame, "toy", tmp_path / "f.png", caption="x")
    assert (tmp_path / "f.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
