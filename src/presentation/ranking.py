"""Rank the methods of a paper's tables: mean ranks, Friedman's test, Wilcoxon-Holm and Nemenyi post-hoc tests.

The question a paper's tables answer is "which method is best, and by how much can we tell?". Comparing
means cell by cell answers it badly: a few noisy cells decide. The procedure here is the one of Demšar
(2006) for several methods over several *blocks* (a block is one setting that every method was run on):

1. Rank the methods within each block (rank 1 = best; tied values share the average of their ranks) and
   average each method's ranks over the blocks (:func:`mean_ranks`).
2. Friedman's test of "all methods are equivalent" on those mean ranks, with both statistics Demšar gives:
   the chi-square ``chi2_F`` and the Iman-Davenport ``F_F``, which is less conservative (:func:`friedman`).
3. Pairwise post-hoc tests. The **primary** one is the Wilcoxon signed-rank test of every pair of methods on
   the paired block values, with Holm's step-down correction over all pairs (:func:`wilcoxon_holm`):
   Benavoli, Corani and Mangili (2016) showed that the Nemenyi test, which compares mean ranks, can call
   two methods different or not depending on which *other* methods are in the comparison, while a pairwise
   test of two methods looks at those two only. The Nemenyi test is kept beside it, with its critical
   difference ``CD = q_alpha sqrt(k (k + 1) / (6 N))`` (:func:`nemenyi`, :func:`critical_difference`), since it
   is what readers of CD diagrams expect.
4. The groups of methods no test separates: the maximal sets in which no pair differs significantly
   (:func:`groups`), drawn as bars in a critical-difference diagram (:func:`cd_diagram`).
5. The answer: the **first group** (:attr:`Ranking.leaders`), the methods that no Wilcoxon-Holm test finds
   any other method better than, placed by the tests (:attr:`Ranking.order`), not by mean rank. Where the
   mean ranks order a pair against its test (:func:`disagreements`), the report says so in one sentence
   (:func:`disagreement_sentence`): a mean rank depends on the whole pool, so a method that wins most blocks
   by far and falls far down in a few can be "first" by mean rank behind one that its own test finds worse.

Two kinds of blocks (:func:`blocks_over_datasets`, :func:`blocks_within`): over a whole paper, each
(data set, k) is a block whose value is the mean over its trials; within one data set, each (k, trial) is a
block, since every method saw the same classes, labels and initialization in a trial (paired trials).

:func:`ranking_section` writes the Markdown section of a paper's report: for AC and NMI, over all data sets
and per data set, the mean ranks, Friedman's statistics, the Holm-adjusted p-values that bear on the paper's
claim, the Nemenyi CD, the diagram, and the paper's claimed ordering (``directions`` in its
``published.yaml``) beside ours with a verdict decided by the Wilcoxon-Holm tests (:func:`claim_verdict`).
It takes the rows of the paper's tables, i.e. after :func:`src.presentation.paper_report.choose_tuned`::

    table_rows, _ = choose_tuned(frame, published.get("families", {}))
    lines += ranking_section(table_rows, published, out)

**Library: scikit-posthocs** (``scikit_posthocs``), chosen over autorank after running both on our results.
scikit-posthocs gives the building blocks: the Nemenyi p-values (``posthoc_nemenyi_friedman``) and a
critical-difference diagram (``critical_difference_diagram``) that draws the groups of *any* matrix of
p-values, so the diagram shows the Wilcoxon-Holm groups (the primary test) with the Nemenyi CD as a bar
above it. autorank runs a whole procedure of its own choosing: on our COIL20 (cai) and Yale (cnmf) trials it
took the methods for normal and homoscedastic (Shapiro-Wilk, Bartlett) and switched to repeated-measures
ANOVA with Tukey's HSD, on Caltech-101 to Friedman with Nemenyi, so that two tables of one report would be
judged by different tests; forced to be non-parametric it gives Friedman with Nemenyi only (no pairwise
Wilcoxon-Holm for more than two methods), and its diagram can only show Nemenyi's CD. Forced so, its mean
ranks and CD were ours exactly, its Friedman p too where no block has ties (it uses SciPy's tie-corrected
statistic, Demšar's formula here has no tie correction). Both pull in statsmodels (with patsy, and
formulaic with interface-meta and wrapt); scikit-posthocs adds seaborn, autorank baycomp and Jinja2.
Friedman's statistics, the Wilcoxon tests, Holm's correction (:func:`src.presentation.verdicts.holm`) and the
groups are computed here with SciPy, so that each number is the textbook one (checked against Demšar's worked
example in the tests).

References
----------
J. Demšar, "Statistical comparisons of classifiers over multiple data sets", Journal of Machine Learning
Research 7, pp. 1-30, 2006 (the procedure, the CD diagram, the worked example of its Table 6).

A. Benavoli, G. Corani, F. Mangili, "Should we really use post-hoc tests based on mean-ranks?", Journal of
Machine Learning Research 17(5), pp. 1-10, 2016 (pairwise Wilcoxon signed-rank tests rather than Nemenyi).

S. Holm, "A simple sequentially rejective multiple test procedure", Scandinavian Journal of Statistics 6(2),
pp. 65-70, 1979.

R. L. Iman, J. M. Davenport, "Approximations of the critical region of the Friedman statistic",
Communications in Statistics - Theory and Methods 9(6), pp. 571-595, 1980 (the F_F statistic).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import cached_property
from itertools import combinations
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
import scikit_posthocs as sp  # noqa: E402
from matplotlib.figure import Figure  # noqa: E402
from matplotlib.lines import Line2D  # noqa: E402
from matplotlib.transforms import offset_copy  # noqa: E402
from scipy import stats  # noqa: E402

from ..files import atomic_path  # noqa: E402
from .verdicts import TOO_FEW_TRIALS, holm  # noqa: E402

ALPHA = 0.05
"""Level of every test of a ranking (Friedman, Wilcoxon-Holm, Nemenyi)."""

METRICS = {"acc": "AC", "nmi": "NMI"}
"""The metrics a report ranks on, with the papers' short names."""

HOLDS, CONTRADICTED, UNDECIDED, NOT_RUN = "holds", "contradicted", "undecided", "not run"


# --- blocks ----------------------------------------------------------------------------------------------------

def _complete(table: pd.DataFrame) -> pd.DataFrame:
    """The rows (blocks) where every method has a value, methods as columns in sorted order."""
    table = table.sort_index(axis=1)
    table.columns.name = "method"
    return table.dropna(how="any")


def blocks_over_datasets(frame: pd.DataFrame, metric: str) -> pd.DataFrame:
    """One block per (data set, k), its value for each method the mean of ``metric`` over its trials.

    Parameters
    ----------
    frame : DataFrame
        Per-trial results with columns ``dataset``, ``method``, ``k``, ``trial`` and ``metric``.
    metric : str
        The column to rank on (``"acc"`` or ``"nmi"``).

    Returns
    -------
    DataFrame
        Index (dataset, k), one column per method. Only the methods run on every data set are kept, and only
        the blocks where each of them has a value, so that every block ranks the same methods.
    """
    table = frame.groupby(["dataset", "k", "method"])[metric].mean().unstack("method")
    present = frame.groupby("method")["dataset"].nunique()
    keep = present.index[present == frame["dataset"].nunique()]
    return _complete(table[keep])


def blocks_within(frame: pd.DataFrame, dataset: str, metric: str) -> pd.DataFrame:
    """One block per (k, trial) of one data set: every method saw the same trial (classes, labels, start).

    Parameters
    ----------
    frame : DataFrame
        Per-trial results with columns ``dataset``, ``method``, ``k``, ``trial`` and ``metric``.
    dataset : str
        The data set.
    metric : str
        The column to rank on.

    Returns
    -------
    DataFrame
        Index (k, trial), one column per method run on the data set; blocks missing a method are dropped.

    Raises
    ------
    ValueError
        When a method has more than one row for a (k, trial): the rows are not one table's (e.g. a tuned
        family's whole grid; pass the rows of :func:`src.presentation.paper_report.choose_tuned`).
    """
    rows = frame[frame["dataset"] == dataset]
    counts = rows.groupby(["k", "trial", "method"]).size()
    if (counts > 1).any():
        k, trial, method = counts.index[counts.to_numpy() > 1][0]
        raise ValueError(f"{dataset}: {method} has {counts.max()} rows for k={k}, trial={trial}; expected one "
                         "row per (method, k, trial)")
    return _complete(rows.pivot_table(index=["k", "trial"], columns="method", values=metric, aggfunc="first"))


# --- statistics ------------------------------------------------------------------------------------------------

def _check(blocks: pd.DataFrame) -> tuple[int, int]:
    n, k = blocks.shape
    if k < 2 or n < 2:
        raise ValueError(f"need at least 2 methods and 2 blocks to rank, got {k} methods and {n} blocks")
    if blocks.isna().to_numpy().any():
        raise ValueError("blocks must be complete (no missing values)")
    return n, k


def block_ranks(blocks: pd.DataFrame, higher_is_better: bool = True) -> pd.DataFrame:
    """Each method's rank within each block: 1 = best, tied values get the average of their ranks."""
    return blocks.rank(axis=1, ascending=not higher_is_better, method="average")


def mean_ranks(blocks: pd.DataFrame, higher_is_better: bool = True) -> pd.Series:
    """Each method's rank averaged over the blocks, best (lowest) first.

    Parameters
    ----------
    blocks : DataFrame
        One row per block, one column per method.
    higher_is_better : bool
        True for scores such as accuracy and NMI.

    Returns
    -------
    Series
        Mean rank per method, sorted ascending (ties by method name); the ranks of a block sum to
        ``k (k + 1) / 2``, so the mean ranks do too.
    """
    _check(blocks)
    ranks = block_ranks(blocks, higher_is_better).mean()
    return ranks.iloc[np.lexsort((ranks.index.to_numpy(), ranks.to_numpy()))]


@dataclass(frozen=True)
class Friedman:
    """Friedman's test on the mean ranks, as Demšar (2006, section 3.2.2) gives it.

    Attributes
    ----------
    chi2, p_chi2 : float
        ``chi2_F = 12 N / (k (k + 1)) [sum_j R_j**2 - k (k + 1)**2 / 4]`` and its p-value from the
        chi-square distribution with ``k - 1`` degrees of freedom.
    f, p_f : float
        Iman and Davenport's ``F_F = (N - 1) chi2_F / (N (k - 1) - chi2_F)`` and its p-value from the F
        distribution with ``k - 1`` and ``(k - 1)(N - 1)`` degrees of freedom; infinite (p = 0) when every
        block ranks the methods the same way.
    df_chi2 : int
        ``k - 1``.
    df_f : tuple of int
        ``(k - 1, (k - 1)(N - 1))``.
    n_blocks, n_methods : int
        ``N`` and ``k``.
    """

    chi2: float
    p_chi2: float
    f: float
    p_f: float
    df_chi2: int
    df_f: tuple[int, int]
    n_blocks: int
    n_methods: int


def friedman_from_ranks(ranks, n_blocks: int) -> Friedman:
    """Friedman's ``chi2_F`` and Iman-Davenport's ``F_F`` from the mean ranks of ``k`` methods over ``N`` blocks.

    Parameters
    ----------
    ranks : sequence of float
        The mean ranks ``R_j`` (e.g. as printed in a paper).
    n_blocks : int
        ``N``.

    Returns
    -------
    Friedman

    Notes
    -----
    The statistic has no correction for ties within a block (Demšar's formula; :func:`scipy.stats.friedmanchisquare`
    corrects for them and so gives a somewhat larger value when blocks contain ties).
    """
    r = np.asarray(list(ranks), dtype=float)
    k, n = len(r), int(n_blocks)
    if k < 2 or n < 2:
        raise ValueError(f"need at least 2 methods and 2 blocks, got {k} methods and {n} blocks")
    chi2 = float(12 * n / (k * (k + 1)) * (np.sum(r ** 2) - k * (k + 1) ** 2 / 4))
    chi2 = max(chi2, 0.0)  # rounding can leave -1e-15 when all mean ranks are equal
    df1, df2 = k - 1, (k - 1) * (n - 1)
    denominator = n * (k - 1) - chi2
    f = math.inf if denominator <= 1e-12 * n * k else (n - 1) * chi2 / denominator
    p_f = 0.0 if math.isinf(f) else float(stats.f.sf(f, df1, df2))
    return Friedman(chi2=chi2, p_chi2=float(stats.chi2.sf(chi2, df1)), f=float(f), p_f=p_f, df_chi2=df1,
                    df_f=(df1, df2), n_blocks=n, n_methods=k)


def friedman(blocks: pd.DataFrame, higher_is_better: bool = True) -> Friedman:
    """Friedman's test of "all methods are equivalent" over the blocks (see :func:`friedman_from_ranks`)."""
    n, _ = _check(blocks)
    return friedman_from_ranks(mean_ranks(blocks, higher_is_better).to_numpy(), n)


def critical_difference(n_methods: int, n_blocks: int, alpha: float = ALPHA) -> tuple[float, float]:
    """Nemenyi's critical value ``q_alpha`` and critical difference ``CD = q_alpha sqrt(k (k + 1) / (6 N))``.

    ``q_alpha`` is the studentized range statistic for ``k`` groups and infinite degrees of freedom divided by
    ``sqrt(2)`` (Demšar 2006, Table 5a: 2.569 for k = 4 at alpha = 0.05). Two mean ranks farther apart than
    ``CD`` differ significantly under the Nemenyi test.

    Returns
    -------
    q_alpha, cd : float
    """
    k, n = int(n_methods), int(n_blocks)
    q = float(stats.studentized_range.ppf(1 - alpha, k, np.inf)) / math.sqrt(2)
    return q, q * math.sqrt(k * (k + 1) / (6 * n))


def nemenyi(blocks: pd.DataFrame) -> pd.DataFrame:
    """Nemenyi's all-pairs p-values from the mean ranks (``scikit_posthocs.posthoc_nemenyi_friedman``).

    Returns
    -------
    DataFrame
        Symmetric, methods as index and columns (in the order of ``blocks``), 1 on the diagonal.
    """
    _check(blocks)
    p = sp.posthoc_nemenyi_friedman(blocks.to_numpy(dtype=float))
    return pd.DataFrame(p.to_numpy(), index=blocks.columns, columns=blocks.columns)


def _signed_rank_balance(differences: np.ndarray) -> float:
    """``R+ - R-`` of the signed-rank test: positive when the first method tends to be the better one."""
    nonzero = differences != 0
    if not nonzero.any():
        return 0.0
    ranks = stats.rankdata(np.abs(differences))  # zeros ranked too, as zero_method="zsplit" does
    return float(np.sum(np.sign(differences[nonzero]) * ranks[nonzero]))


def wilcoxon_holm(blocks: pd.DataFrame, higher_is_better: bool = True) -> tuple[pd.DataFrame, pd.DataFrame,
                                                                                 pd.DataFrame]:
    """Two-sided Wilcoxon signed-rank tests of every pair of methods over the paired blocks, Holm-adjusted.

    Parameters
    ----------
    blocks : DataFrame
        One row per block, one column per method.
    higher_is_better : bool
        Which way "better" points.

    Returns
    -------
    p : DataFrame
        The unadjusted two-sided p-values, symmetric, 1 on the diagonal.
    p_holm : DataFrame
        The same after Holm's step-down adjustment over the ``k (k - 1) / 2`` pairs (one family per ranking).
    balance : DataFrame
        ``R+ - R-`` of row minus column (sign flipped when lower is better): positive where the row method
        tends to be the better one. Antisymmetric.

    Notes
    -----
    Zero differences are handled as Demšar (2006, section 3.1.3) describes, their ranks split evenly between
    the two sums (``zero_method="zsplit"``); two methods equal on every block get p = 1. SciPy chooses the
    exact null distribution for small samples without ties and the normal approximation otherwise.
    """
    _check(blocks)
    methods = list(blocks.columns)
    values = blocks.to_numpy(dtype=float)
    sign = 1.0 if higher_is_better else -1.0
    p = pd.DataFrame(1.0, index=methods, columns=methods)
    balance = pd.DataFrame(0.0, index=methods, columns=methods)
    pairs = list(combinations(range(len(methods)), 2))
    raw = []
    for i, j in pairs:
        d = values[:, i] - values[:, j]
        if np.all(d == 0):
            raw.append(1.0)
        else:
            raw.append(float(stats.wilcoxon(values[:, i], values[:, j], zero_method="zsplit").pvalue))
        b = sign * _signed_rank_balance(d)
        balance.iat[i, j], balance.iat[j, i] = b, -b
    p_holm = p.copy()
    for (i, j), value, adjusted in zip(pairs, raw, holm(raw)):
        p.iat[i, j] = p.iat[j, i] = value
        p_holm.iat[i, j] = p_holm.iat[j, i] = adjusted
    return p, p_holm, balance


def groups(pvalues: pd.DataFrame, alpha: float = ALPHA, order=None) -> list[tuple[str, ...]]:
    """The groups of methods no test separates: maximal sets in which every pair has ``p >= alpha``.

    Parameters
    ----------
    pvalues : DataFrame
        Symmetric (adjusted) p-values, methods as index and columns.
    alpha : float
        Level: a pair with ``p < alpha`` is separated.
    order : sequence of str, optional
        The methods best first (e.g. by mean rank); each group lists its methods in this order, and the groups
        come sorted by their best member. Default: the order of ``pvalues``.

    Returns
    -------
    list of tuple of str
        The maximal cliques of the graph joining the pairs no test separates (Bron-Kerbosch); a method that
        every test separates from every other is a group of its own. Groups may overlap: a method between two
        groups that differ is not separated from either (Demšar's "we cannot tell which group it belongs to").
    """
    order = list(order) if order is not None else list(pvalues.index)
    position = {m: i for i, m in enumerate(order)}
    together = {a: {b for b in order if b != a and pvalues.loc[a, b] >= alpha} for a in order}
    found: list[frozenset] = []

    def extend(clique: set, candidates: set, excluded: set) -> None:
        if not candidates and not excluded:
            found.append(frozenset(clique))
            return
        pivot = max(candidates | excluded, key=lambda m: len(together[m] & candidates))
        for m in sorted(candidates - together[pivot], key=position.get):
            extend(clique | {m}, candidates & together[m], excluded & together[m])
            candidates = candidates - {m}
            excluded = excluded | {m}

    extend(set(), set(order), set())
    listed = [tuple(sorted(g, key=position.get)) for g in found]
    return sorted(listed, key=lambda g: [position[m] for m in g])


@dataclass(frozen=True)
class Ranking:
    """Everything one ranking of ``k`` methods over ``N`` blocks says (see :func:`rank_methods`).

    Attributes
    ----------
    mean_ranks : Series
        Mean rank per method, best (lowest) first; ``methods`` is its index as a tuple.
    means : Series
        Mean of the block values per method (same order).
    friedman : Friedman
        Friedman's chi-square and the Iman-Davenport F.
    wilcoxon_p, wilcoxon_holm : DataFrame
        Pairwise two-sided Wilcoxon signed-rank p-values, unadjusted and Holm-adjusted over all pairs.
    balance : DataFrame
        ``R+ - R-`` of row against column, positive where the row is the better one.
    nemenyi_p : DataFrame
        Nemenyi's pairwise p-values.
    q_alpha, cd : float
        Nemenyi's critical value and critical difference of mean ranks.
    groups_wilcoxon, groups_nemenyi : list of tuple of str
        The groups no Wilcoxon-Holm, resp. Nemenyi, test separates (:func:`groups`).
    alpha : float
        The level of every test.
    """

    mean_ranks: pd.Series
    means: pd.Series
    friedman: Friedman
    wilcoxon_p: pd.DataFrame
    wilcoxon_holm: pd.DataFrame
    balance: pd.DataFrame
    nemenyi_p: pd.DataFrame
    q_alpha: float
    cd: float
    groups_wilcoxon: list
    groups_nemenyi: list
    alpha: float
    blocks: pd.DataFrame | None = None

    @property
    def methods(self) -> tuple[str, ...]:
        """The methods, best mean rank first (the order of the CD diagram; the answer reads :attr:`order`)."""
        return tuple(self.mean_ranks.index)

    def beaten_by(self, method: str) -> list[str]:
        """The methods a Wilcoxon-Holm test finds significantly better than ``method``, best mean rank first."""
        return [m for m in self.methods if m != method and self.better(m, method)]

    def beats(self, method: str) -> list[str]:
        """The methods ``method`` is significantly better than (Wilcoxon-Holm), best mean rank first."""
        return [m for m in self.methods if m != method and self.better(method, m)]

    @property
    def leaders(self) -> tuple[str, ...]:
        """The first group: the methods no other method beats in a Wilcoxon-Holm test, most methods beaten
        first, then the higher mean block value, then the name.

        The answer of every ranking. Wilcoxon-Holm results need not be transitive, so in principle every
        method may be beaten by some other; then the first group is the methods beaten by the fewest.
        """
        return self._placed[0]

    @property
    def order(self) -> tuple[str, ...]:
        """The methods as the pairwise tests place them: the first group (:attr:`leaders`), then the others by
        how many methods each is significantly better than less how many are better than it, then the higher
        mean block value, then the name. Each key is read off the two-method tests, none off the ranks within
        a block."""
        return self._placed[1]

    @cached_property
    def _placed(self) -> tuple[tuple[str, ...], tuple[str, ...]]:
        """:attr:`leaders` and :attr:`order`, computed once per ranking."""
        wins = {m: len(self.beats(m)) for m in self.methods}
        losses = {m: len(self.beaten_by(m)) for m in self.methods}
        fewest = min(losses.values())
        leaders = tuple(sorted((m for m in self.methods if losses[m] == fewest),
                               key=lambda m: (-wins[m], -float(self.means[m]), m)))
        rest = sorted((m for m in self.methods if m not in leaders),
                      key=lambda m: (losses[m] - wins[m], -float(self.means[m]), m))
        return leaders, leaders + tuple(rest)

    @property
    def n_blocks(self) -> int:
        return self.friedman.n_blocks

    def better(self, a: str, b: str) -> bool:
        """True when the Wilcoxon-Holm test finds ``a`` significantly better than ``b``."""
        return bool(self.wilcoxon_holm.loc[a, b] < self.alpha and self.balance.loc[a, b] > 0)

    def nemenyi_separated(self, a: str, b: str) -> bool:
        """True when the mean ranks of ``a`` and ``b`` are farther apart than the critical difference."""
        return bool(abs(self.mean_ranks[a] - self.mean_ranks[b]) > self.cd)


def rank_methods(blocks: pd.DataFrame, alpha: float = ALPHA, higher_is_better: bool = True) -> Ranking:
    """Rank the methods over the blocks and run every test of the module on them.

    Parameters
    ----------
    blocks : DataFrame
        One row per block (no missing values), one column per method; from :func:`blocks_over_datasets` or
        :func:`blocks_within`.
    alpha : float
        Level of the tests and of the groups.
    higher_is_better : bool
        True for accuracy and NMI.

    Returns
    -------
    Ranking

    Raises
    ------
    ValueError
        With fewer than 2 methods or 2 blocks, or missing values.

    References
    ----------
    Demšar (2006); Benavoli, Corani and Mangili (2016); Holm (1979): see the module's references.
    """
    n, k = _check(blocks)
    ranks = mean_ranks(blocks, higher_is_better)
    order = list(ranks.index)
    p, p_holm, balance = wilcoxon_holm(blocks, higher_is_better)
    p_nemenyi = nemenyi(blocks)
    q, cd = critical_difference(k, n, alpha)
    reorder = lambda table: table.loc[order, order]  # noqa: E731
    return Ranking(mean_ranks=ranks, means=blocks.mean()[order], friedman=friedman_from_ranks(ranks.to_numpy(), n),
                   wilcoxon_p=reorder(p), wilcoxon_holm=reorder(p_holm), balance=reorder(balance),
                   nemenyi_p=reorder(p_nemenyi), q_alpha=q, cd=cd, groups_wilcoxon=groups(p_holm, alpha, order),
                   groups_nemenyi=groups(p_nemenyi, alpha, order), alpha=alpha, blocks=blocks[order])


# --- the diagram -----------------------------------------------------------------------------------------------

CD_CAPTION = ("<sub>The critical-difference diagram places each method at its mean rank, which depends on every "
              "other method in the pool (Benavoli, Corani and Mangili 2016); its bars join methods no Wilcoxon-Holm "
              "test separates. The answer (the first group) comes from the pairwise tests, not from the order "
              "along the axis.</sub>")
"""The caption under every critical-difference diagram of a report: what its axis is and what it is not."""

HIGHLIGHT_COLOR = "#c0392b"
"""The colour of the highlighted methods of a critical-difference diagram (:func:`cd_figure`)."""

OTHERS_COLOR = "0.45"
"""The colour of the other methods of a diagram that highlights some."""


def ranking_over(frame: pd.DataFrame, metric: str, datasets=None) -> Ranking | None:
    """The ranking over the (data set, k) blocks of ``datasets`` (default: all), or, for one data set, over
    its (k, trial) blocks; None when fewer than 2 methods or blocks are complete."""
    rows = frame if datasets is None else frame[frame["dataset"].isin(datasets)]
    if rows.empty:
        return None
    names = sorted(rows["dataset"].unique())
    blocks = blocks_within(rows, names[0], metric) if len(names) == 1 else blocks_over_datasets(rows, metric)
    return rank_methods(blocks) if blocks.shape[0] >= 2 and blocks.shape[1] >= 2 else None


def ac_order(rows: pd.DataFrame) -> list[str]:
    """The methods of ``rows`` best first: as the pairwise AC tests place them (:attr:`Ranking.order`
    of :func:`ranking_over`; within one data set over its (k, trial) blocks), or by mean AC when too few
    complete blocks to rank them."""
    ranking = ranking_over(rows, "acc")
    if ranking is not None:
        return list(ranking.order)
    return list(rows.groupby("method")["acc"].mean().sort_values(ascending=False).index)


def cd_figure(ranking: Ranking, title: str | None = None, highlight=()) -> Figure:
    """The critical-difference diagram of a ranking (``scikit_posthocs.critical_difference_diagram``).

    The axis carries the mean ranks (rank 1, the best, on the left); a bar joins each group of methods that no
    Wilcoxon-Holm test separates (the primary test); the bar marked CD above the axis, and above its tick
    labels, is Nemenyi's critical difference, for reference.

    Parameters
    ----------
    ranking : Ranking
        From :func:`rank_methods`.
    title : str, optional
        Printed above the diagram.
    highlight : sequence of str
        Methods to pick out (e.g. a contender among the family): their names in bold and
        :data:`HIGHLIGHT_COLOR`, their lines thicker, every other method in grey, so that the eye finds them
        among twenty. Names not in the ranking are ignored. Empty (the default): each method in a colour of
        its own.

    Returns
    -------
    Figure
    """
    n = len(ranking.methods)
    marked = [m for m in highlight if m in ranking.mean_ranks]
    fig = Figure(figsize=(7.5, 1.6 + 0.32 * n), layout="constrained")
    ax = fig.add_subplot()
    # p-values as the diagram reads them: a separated pair keeps its p (< alpha), any other gets 1, so that
    # the groups drawn are exactly those of ``groups`` whatever the library does at p == alpha.
    p = ranking.wilcoxon_holm.where(ranking.wilcoxon_holm < ranking.alpha, 1.0)
    palette = {m: HIGHLIGHT_COLOR if m in marked else OTHERS_COLOR for m in ranking.methods} if marked else None
    # cd=None: the library draws its CD bar half a unit above the axis, where the tick labels are; drawn below
    artists = sp.critical_difference_diagram(ranking.mean_ranks, p, alpha=ranking.alpha, ax=ax,
                                             label_fmt_left="{label} ({rank:.2f})",
                                             label_fmt_right="({rank:.2f}) {label}",
                                             crossbar_props={"marker": "|", "markersize": 8}, color_palette=palette)
    texts = {}
    for m in marked:
        texts[f"{m} ({ranking.mean_ranks[m]:.2f})"] = texts[f"({ranking.mean_ranks[m]:.2f}) {m}"] = m
    # the library appends one elbow, marker and label per method, in the same order
    for label, elbow, marker in zip(artists["labels"], artists["elbows"], artists["markers"]):
        if label.get_text() in texts:
            label.set_fontweight("bold")
            elbow.set_linewidth(2.5)
            marker.set_sizes([70])
    _cd_bar(ax, ranking)
    ax.set_xlabel(f"mean rank over {ranking.n_blocks} blocks (1 = best)\nbars: no Wilcoxon-Holm test separates "
                  f"the methods (alpha = {ranking.alpha:g}); CD: Nemenyi's critical difference", fontsize="small")
    ax.xaxis.set_label_position("bottom")
    if title:  # the figure's title: the layout puts it above everything the axes hold, the CD bar included
        fig.suptitle(title, fontsize="medium")
    return fig


def _cd_bar(ax, ranking: Ranking) -> None:
    """Draw Nemenyi's CD as a bar from the best mean rank, above the axis's tick labels (a fixed distance in
    points from the axis line, whatever the height of the figure), labelled ``CD = ...`` with three decimals,
    as in the report."""
    tick = ax.xaxis.get_major_ticks()[0]
    tick_size = tick.label2.get_size()
    # from the axis line: the tick, its pad, the tick label (its box ~1.2 of the font size), then a gap
    labels_top = tick.get_tick_padding() + tick.get_pad() + 1.2 * tick_size
    lift = labels_top + 6
    start = float(ranking.mean_ranks.iloc[0])
    end = start + ranking.cd
    bar = Line2D([start, end], [0, 0], color="k", linewidth=2, marker="|", markersize=8, zorder=3,
                 transform=offset_copy(ax.transData, fig=ax.figure, y=lift, units="points"))
    ax.add_artist(bar)
    bar.set_clip_on(False)
    ax.text((start + end) / 2, 0, f"CD = {ranking.cd:.3f}", ha="center", va="bottom",
            transform=offset_copy(ax.transData, fig=ax.figure, y=lift + 5, units="points"))
    low, high = ax.get_xlim()
    if end > high:  # a CD longer than the spread of the ranks: widen the axis so that the bar fits
        ax.set_xlim(low, end + 0.02 * (end - low))


def cd_diagram(ranking: Ranking, path, title: str | None = None, highlight=()) -> Path:
    """:func:`cd_figure` saved as a PNG at ``path`` (written atomically); returns the path.

    ``highlight``: the methods to pick out in bold and colour (see :func:`cd_figure`).
    """
    path = Path(path)
    fig = cd_figure(ranking, title, highlight)
    with atomic_path(path, suffix=".png") as tmp:
        fig.savefig(tmp, dpi=120, format="png")
    return path


# --- the paper's claim -----------------------------------------------------------------------------------------

@dataclass(frozen=True)
class ClaimCheck:
    """The paper's claimed ordering beside ours, decided by the Wilcoxon-Holm tests (:func:`claim_verdict`)."""

    verdict: str
    sentence: str
    per_method: dict


def join_names(items) -> str:
    """``a``, ``a and b``, ``a, b and c``."""
    items = list(items)
    return items[0] if len(items) == 1 else ", ".join(items[:-1]) + " and " + items[-1]


def format_p(value: float) -> str:
    """A p-value with two significant digits, in scientific notation below 0.001."""
    return f"{value:.2g}" if value >= 1e-3 else f"{value:.1e}"


def claim_verdict(ranking: Ranking, methods, baselines) -> ClaimCheck:
    """Does the paper's claim "each of ``methods`` is better than each of ``baselines``" hold in our ranking?

    Decided by the pairwise tests alone (Benavoli, Corani and Mangili 2016), never by the mean ranks, which
    depend on the other methods of the pool. Per claimed method: **holds** when the Wilcoxon-Holm test finds
    it significantly better than each claimed baseline; **contradicted** when it finds a baseline
    significantly better than it; **undecided** otherwise. The claim as a whole holds when it holds for every
    claimed method and is contradicted when it is for any. Methods we did not run are left out of the claim
    and named; a claim of which no claimed method or no baseline was run is "not run".

    Parameters
    ----------
    ranking : Ranking
        From :func:`rank_methods`.
    methods, baselines : sequence of str
        The methods the paper claims best and the baselines it claims they beat (``directions`` in its
        ``published.yaml``).

    Returns
    -------
    ClaimCheck
        The verdict, one sentence saying why, and the verdict per claimed method.
    """
    methods, baselines = list(methods), list(baselines)
    ran = set(ranking.methods)
    missing = [m for m in methods + baselines if m not in ran]
    methods = [m for m in methods if m in ran]
    baselines = [b for b in baselines if b in ran]
    if not methods or not baselines:
        return ClaimCheck(NOT_RUN, f"Not run: {join_names(missing)} not in this ranking.", {})
    per_method, reasons = {}, []
    for m in methods:
        stronger = [b for b in baselines if ranking.better(b, m)]
        beaten = [b for b in baselines if ranking.better(m, b)]
        if stronger:
            per_method[m] = CONTRADICTED
            reasons.append(f"{join_names(stronger)} {'is' if len(stronger) == 1 else 'are'} significantly better than "
                           f"{m} (p = {', '.join(format_p(ranking.wilcoxon_holm.loc[b, m]) for b in stronger)})")
        elif len(beaten) == len(baselines):
            per_method[m] = HOLDS
            worst = max(ranking.wilcoxon_holm.loc[m, b] for b in baselines)
            reasons.append(f"{m} is significantly better than "
                           + (f"each of {join_names(baselines)} (p <= {format_p(worst)})" if len(baselines) > 1
                              else f"{baselines[0]} (p = {format_p(worst)})"))
        else:
            per_method[m] = UNDECIDED
            open_ = [b for b in baselines if b not in beaten]
            reasons.append(f"no test separates {m} from {join_names(open_)} "
                           f"(p = {', '.join(format_p(ranking.wilcoxon_holm.loc[m, b]) for b in open_)})")
    verdicts = set(per_method.values())
    verdict = CONTRADICTED if CONTRADICTED in verdicts else HOLDS if verdicts == {HOLDS} else UNDECIDED
    sentence = f"**{verdict[0].upper() + verdict[1:]}**: " + "; ".join(reasons) + "."
    if missing:
        sentence += f" Not run, left out of the claim: {join_names(missing)}."
    return ClaimCheck(verdict, sentence, per_method)


# --- the report section ----------------------------------------------------------------------------------------

def points(value: float) -> str:
    """A difference of two scores in [0, 1] as points (percent), with its sign: ``+5.6``."""
    return f"{100 * value:+.1f}"


def disagreements(ranking: Ranking) -> list[tuple[str, str]]:
    """The pairs on which the mean ranks and the pairwise tests disagree: ``(a, b)`` where ``a`` has the
    better mean rank and a Wilcoxon-Holm test finds ``b`` significantly better than ``a``; those that
    involve the first by mean rank first, then by the gap in mean rank, largest first.

    A mean rank depends on every method in the pool (Benavoli, Corani and Mangili 2016): a method that wins
    most blocks by a wide margin and falls far down in a few can be passed by one that is never far down,
    while the test of the two methods' own results finds the first one better.
    """
    first = ranking.methods[0]
    found = [(a, b) for a, b in combinations(ranking.methods, 2) if ranking.better(b, a)]
    gap = lambda pair: ranking.mean_ranks[pair[1]] - ranking.mean_ranks[pair[0]]  # noqa: E731
    return sorted(found, key=lambda pair: (pair[0] != first, -gap(pair), pair))


def disagreement_sentence(ranking: Ranking, name: str) -> str | None:
    """One sentence naming the pair on which the mean ranks and the pairwise tests disagree (the first of
    :func:`disagreements`) with its numbers: both mean ranks, the Holm-adjusted p, in how many blocks the
    better one is higher and by how much on average (points of ``name``); None when they agree."""
    pairs = disagreements(ranking)
    if not pairs:
        return None
    a, b = pairs[0]
    text = (f"Mean ranks and pairwise tests disagree: {a} has the {'best' if a == ranking.methods[0] else 'better'} "
            f"mean rank ({ranking.mean_ranks[a]:.2f}; {b} {ranking.mean_ranks[b]:.2f}), but the Wilcoxon-Holm test "
            f"finds {b} significantly better than {a} (p = {format_p(ranking.wilcoxon_holm.loc[a, b])}")
    if ranking.blocks is not None:
        d = ranking.blocks[b] - ranking.blocks[a]
        text += (f"; {b} is higher in {int((d > 0).sum())} of {len(d)} blocks, by {points(float(d.mean()))} "
                 f"{name} points on average")
    text += ")"
    more = len(pairs) - 1
    return text + (f"; {more} more pair{'s' if more > 1 else ''} disagree likewise." if more else ".")


def leaders_sentence(ranking: Ranking, name: str) -> str:
    """The answer of a ranking as a clause to begin a sentence with: its first group
    (:attr:`Ranking.leaders`), each with how many of the other methods a Wilcoxon-Holm test finds it better
    than and its mean ``name``. Begins with a method's name or a lower-case word (:func:`sentence` capitalizes
    it)."""
    leaders, others = ranking.leaders, len(ranking.methods) - 1
    each = [f"**{m}** (better than {len(ranking.beats(m))} of {others}, mean {name} {100 * ranking.means[m]:.1f})"
            for m in leaders]
    if len(leaders) == 1 and not ranking.beaten_by(leaders[0]):
        return (f"{each[0]} is first: no Wilcoxon-Holm test (alpha = {ranking.alpha:g}) finds any method better "
                "than it.")
    if any(ranking.beaten_by(m) for m in leaders):  # a cycle of significant results: no method unbeaten
        return (f"no method is unbeaten (the Wilcoxon-Holm results form a cycle); beaten by the fewest: "
                f"{join_names(each)}.")
    return (f"the first group is the {len(leaders)} methods that no Wilcoxon-Holm test (alpha = {ranking.alpha:g}) "
            f"finds any method better than: {join_names(each)}.")


def sentence(text: str) -> str:
    """``text`` with its first letter in upper case."""
    return text[:1].upper() + text[1:]


def answer_lines(ranking: Ranking, name: str, lead: str | None = None) -> list[str]:
    """:func:`leaders_sentence`, after ``lead`` and a comma when given ("At the fixed settings"), and
    :func:`disagreement_sentence` where the mean ranks disagree."""
    first = leaders_sentence(ranking, name)
    found = disagreement_sentence(ranking, name)
    return [f"{lead}, {first}" if lead else sentence(first)] + ([found] if found else [])


def slug(text: str) -> str:
    """``text`` as a file name: letters, digits, ``-`` and ``_`` kept, anything else ``_``."""
    return "".join(c if c.isalnum() or c in "-_" else "_" for c in str(text))


def ranking_lines(ranking: Ranking, metric_name: str, image: str, claim: tuple[list, list] | None,
                  scope: str) -> list[str]:
    """The Markdown of one ranking: mean ranks, Friedman, the p-values that matter, CD, diagram and claim."""
    f = ranking.friedman
    claimed = list(claim[0]) if claim else []
    pairs_all = list(combinations(ranking.methods, 2))
    lines = ["| place | method | mean rank | mean " + metric_name + " (%) | better than | worse than |",
             "|---|---|---|---|---|---|"]
    for i, m in enumerate(ranking.order, 1):
        lines.append(f"| {i} | {m} | {ranking.mean_ranks[m]:.3f} | {100 * ranking.means[m]:.2f} | "
                     f"{len(ranking.beats(m))} | {len(ranking.beaten_by(m))} |")
    lines += ["", f"Friedman: chi2_F = {f.chi2:.2f} ({f.df_chi2} df), p = {format_p(f.p_chi2)}; Iman-Davenport "
              f"F_F = {f.f:.2f} ({f.df_f[0]}, {f.df_f[1]} df), p = {format_p(f.p_f)}"
              + (" (the methods differ)." if f.p_f < ranking.alpha else
                 " (no difference shown; the pairwise tests below are reported all the same)."),
              f"Nemenyi: CD = {ranking.cd:.3f} (q = {ranking.q_alpha:.3f}, k = {f.n_methods}, N = {f.n_blocks}, "
              f"alpha = {ranking.alpha:g}); {sum(ranking.nemenyi_separated(a, b) for a, b in pairs_all)} of the "
              f"{len(pairs_all)} pairs have mean ranks farther apart than CD (Nemenyi p below).",
              "Better than, worse than: of how many other methods a Wilcoxon-Holm test finds it significantly "
              "better, resp. worse. Place: the first group (no method better than it) first, then by how many "
              "methods it is better than less how many are better than it, then the mean.", "",
              *answer_lines(ranking, metric_name), ""]
    focus = set(claimed) | set(ranking.leaders) | {ranking.methods[0]}
    pairs = [(a, b) for a, b in pairs_all if a in focus or b in focus]
    pairs.sort(key=lambda pair: ranking.wilcoxon_holm.loc[pair])
    lines += [f"Wilcoxon signed-rank tests, Holm-adjusted over all {len(pairs_all)} pairs; the pairs with "
              + ("a claimed method, " if claimed else "") + "a method of the first group or the first by mean rank:", "",
              "| pair | better (R+ > R-) | p | p (Holm) | significant | Nemenyi p |", "|---|---|---|---|---|---|"]
    for a, b in pairs:
        better = a if ranking.balance.loc[a, b] > 0 else b if ranking.balance.loc[a, b] < 0 else "tie"
        lines.append(f"| {a} / {b} | {better} | {format_p(ranking.wilcoxon_p.loc[a, b])} | "
                     f"{format_p(ranking.wilcoxon_holm.loc[a, b])} | "
                     f"{'yes' if ranking.wilcoxon_holm.loc[a, b] < ranking.alpha else 'no'} | "
                     f"{format_p(ranking.nemenyi_p.loc[a, b])} |")
    lines += ["", f"![Critical-difference diagram: {metric_name}, {scope}]({image})", "", CD_CAPTION, ""]
    if claim:
        methods, baselines = claim
        check = claim_verdict(ranking, methods, baselines)
        named = [m for m in list(methods) + list(baselines) if m in ranking.mean_ranks]
        ours = " > ".join(f"{m} ({ranking.mean_ranks[m]:.2f})" for m in sorted(named, key=ranking.mean_ranks.get))
        lines += [f"Claimed: {', '.join(methods)} above {', '.join(baselines)}. Ours (mean ranks): {ours}.",
                  check.sentence, ""]
    return lines


def _tuned_family_rows(frame: pd.DataFrame, published: dict) -> None:
    """Refuse a frame that still holds a tuned family's grid rather than its representative."""
    labels = set(frame["method"])
    for family, spec in (published.get("families") or {}).items():
        estimator = spec if isinstance(spec, str) else spec.get("estimator")
        if family not in labels and "estimator" in frame and (frame["estimator"] == estimator).any():
            raise ValueError(f"the rows hold the grid of the tuned family {family} ({estimator}) but no method "
                             f"labelled {family}: pass the rows of paper_report.choose_tuned")


def ranking_section(frame: pd.DataFrame, published: dict, out_dir, alpha: float = ALPHA,
                    metrics=("acc", "nmi")) -> list[str]:
    """The Markdown section "Ranking of the methods" of a paper's report, with its CD diagrams.

    Parameters
    ----------
    frame : DataFrame
        The rows of the paper's tables, one per (data set, method, k, trial): the merged ``results.csv``
        after :func:`src.presentation.paper_report.choose_tuned` (a tuned family stands by its
        representative, labelled with the family's name).
    published : dict
        The paper's ``papers/<paper>/published.yaml``, loaded; its ``directions`` (``datasets``,
        ``methods``, ``baselines``) give the claimed ordering, its ``estimators`` (if any) the paper's methods.
    out_dir : path
        Where the diagrams are written, ``ranking_<all|dataset>_<metric>.png``; the report that includes the
        section must sit in the same directory (the image links are relative).
    alpha : float
        Level of every test.
    metrics : sequence of str
        The columns ranked, among ``"acc"`` and ``"nmi"``.

    Returns
    -------
    list of str
        The section's lines: per metric, the ranking over all data sets (blocks: (data set, k), each the
        mean over its trials) and per data set (blocks: (k, trial)), each with its mean ranks, Friedman's
        statistics, the Holm-adjusted Wilcoxon p-values that bear on the claim, Nemenyi's CD, the diagram and
        the claim's verdict (:func:`claim_verdict`).

    Examples
    --------
    In :func:`src.presentation.paper_report.build`, after ``table_rows, chosen = choose_tuned(...)``::

        lines += ranking_section(table_rows, published, out)

    References
    ----------
    Demšar (2006); Benavoli, Corani and Mangili (2016); Holm (1979): see the module's references.
    """
    out_dir = Path(out_dir)
    if published.get("estimators") and "estimator" in frame:
        frame = frame[frame["estimator"].isin(published["estimators"])]
    _tuned_family_rows(frame, published)
    directions = published.get("directions") or {}
    claim = (list(directions.get("methods", [])), list(directions.get("baselines", [])))
    claimed_datasets = set(directions.get("datasets", []))
    has_claim = bool(claim[0] and claim[1])
    datasets = sorted(frame["dataset"].unique())
    lines = ranking_intro(alpha, claim if has_claim else None, claimed_datasets)
    for metric in metrics:
        name = METRICS[metric]
        lines += [f"### {name}", ""]
        scopes = [("all", "all data sets", blocks_over_datasets(frame, metric),
                   has_claim and (not claimed_datasets or claimed_datasets & set(datasets)))]
        scopes += [(d, d, blocks_within(frame, d, metric),
                    has_claim and (not claimed_datasets or d in claimed_datasets)) for d in datasets]
        for key, scope, blocks, with_claim in scopes:
            if key == "all" and len(datasets) < 2:
                continue
            lines += scope_lines(frame, key, scope, blocks, name, metric, claim if with_claim else None,
                                 out_dir, alpha)
    return lines


def ranking_intro(alpha: float, claim: tuple[list[str], list[str]] | None, claimed_datasets: set[str]) -> list[str]:
    """The opening of :func:`ranking_section`: how blocks are ranked and tested, and the paper's claim."""
    lines = ["## Ranking of the methods", "",
             "Methods ranked within each block (1 = best, ties share the average rank) and the ranks averaged "
             "(Demšar 2006). Over all data sets a block is a (data set, k) and its value the mean over its "
             "trials; within a data set a block is a (k, trial), which every method saw alike. Friedman's test "
             "asks whether the methods differ at all. The pairwise tests are two-sided Wilcoxon signed-rank "
             f"tests on the paired blocks with Holm's correction over all pairs of a ranking (alpha = {alpha:g}), "
             "which decide the first group, the groups and the claim (Benavoli, Corani and Mangili 2016: unlike "
             "a comparison of mean ranks, their answer for two methods does not depend on which others are "
             "compared). The **first group** is the methods no test finds any other method better than; where "
             "the mean ranks order two methods against their test, a sentence says so. The Nemenyi test and its "
             "critical difference stand beside them.", ""]
    if claim:
        lines += [f"The paper's claim (`directions` in its published.yaml): {', '.join(claim[0])} above "
                  f"{', '.join(claim[1])} on {', '.join(sorted(claimed_datasets)) or 'its data sets'}. Judged by the "
                  "pairwise tests alone: it **holds** where the claimed method is significantly better than each "
                  "claimed baseline, is **contradicted** where a baseline is significantly better, and is "
                  "**undecided** otherwise; the mean ranks decide nothing.", ""]
    return lines


def one_block_line(blocks: pd.DataFrame) -> str:
    """What one block says: the methods in its order (value in points), and that a test needs more blocks."""
    values = blocks.iloc[0].sort_values(ascending=False, kind="stable")
    order = ", ".join(f"{method} ({100 * value:.2f})" for method, value in values.items())
    return (f"On its one block, best first: {order}. No test, no group: {TOO_FEW_TRIALS} (a ranking tests "
            "its methods over two blocks or more).")


def scope_lines(frame: pd.DataFrame, key: str, scope: str, blocks: pd.DataFrame, name: str, metric: str,
                claim, out_dir: Path, alpha: float) -> list[str]:
    """One scope of :func:`ranking_section` (``key`` "all", or a data set): what was left out, the ranking, its
    diagram and the claim's verdict."""
    what = ("(data set, k) blocks, each the mean over its trials" if key == "all" else "(k, trial) blocks")
    lines = [f"#### {name}, {scope}: {len(blocks)} {what}", ""]
    rows = frame if key == "all" else frame[frame["dataset"] == key]
    left_out = sorted(set(rows["method"]) - set(blocks.columns))
    total = len(rows.groupby(["dataset", "k"] if key == "all" else ["k", "trial"]))
    if left_out or total > len(blocks):
        lines += ["Left out: " + "; ".join(
            ([f"{join_names(left_out)} (not run on every data set)" if key == "all" else
              f"{join_names(left_out)} (no complete block)"] if left_out else [])
            + ([f"{total - len(blocks)} of {total} blocks missing a method"] if total > len(blocks) else []))
            + ".", ""]
    if blocks.shape[0] == 1 and blocks.shape[1] >= 2:  # one (k, trial): its order, but nothing to test
        return lines + [one_block_line(blocks), ""]
    if blocks.shape[0] < 2 or blocks.shape[1] < 2:
        return lines + [f"Too few complete blocks or methods to rank ({blocks.shape[0]} blocks, "
                        f"{blocks.shape[1]} methods).", ""]
    ranking = rank_methods(blocks, alpha)
    image = f"ranking_{slug(key)}_{metric}.png"
    cd_diagram(ranking, out_dir / image, f"{name}, {scope}")
    return lines + ranking_lines(ranking, name, image, claim, scope)
