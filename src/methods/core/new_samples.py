"""Representation of new samples: what ``transform`` of a factorization solves, the fitted basis held fixed.

New samples are unlabelled. The fitted basis factors (``basis_factors``, e.g. ``("U",)``) are held fixed,
restored after every update of the method's own rules built on the new data (``_rules(X_new, y = all -1)``,
on a copy of the estimator so that no fitted attribute changes); the other factors start, row by row, from
the sample's least-squares scale on the summed basis (:func:`~.fixed_basis.sample_scales`, a function of the
sample alone: no random draw, so a sample's result does not depend on the batch for the methods whose
coefficient rows are independent). One start is iterated under the estimator's stopping rule (``stopping``,
``max_iter``, ``tol``; ``ConvergenceWarning`` when the cap is reached first), and the result is returned in
the convention of ``embedding_`` (e.g. V scaled by the fitted U's column norms).

Methods whose graph couples the samples (GNMF, SemiGNMF, PCGNMF, FNMF, NPNMF) build it among the new
samples, with ``n_neighbors`` clipped to n_new - 1; a single new sample has no graph term and takes NMF's
rules (:func:`~.frobenius.frobenius_rules`). Classes whose basis is not a factor of their own rules (the
concept factorizations, NTF) override ``_new_samples`` with ``NewSamplesMixin._fixed_basis_samples``:
the coefficient rule on a fixed basis of :mod:`.fixed_basis`.
"""

import copy
import warnings
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np
from sklearn.exceptions import ConvergenceWarning

from .fixed_basis import fixed_basis_rules, sample_scales
from .frobenius import frobenius_rules
from .loop import Factors, Solution, Stopping, per_start, solve
from .validation import UNLABELLED


@dataclass
class NewSamples:
    """What ``transform`` solves for new samples X (m x n_new): see the module docstring.

    Attributes
    ----------
    update, objective : callable
        The rules over stacks of starts (as :func:`~.loop.solve` takes them).
    factors : dict of str to ndarray of shape (1, p, k)
        The initial factors, the fixed ones already at their fitted values.
    representation : callable
        Maps the final factors (p x k matrices) to the (n_new, n_components) representation.
    fixed : dict of str to ndarray
        Factors the rules update but ``transform`` holds fixed: restored after every update.
    """

    update: Callable[[Factors], None]
    objective: Callable[[Factors], np.ndarray]
    factors: Factors
    representation: Callable[[Factors], np.ndarray]
    fixed: dict[str, np.ndarray] = field(default_factory=dict)

    def solve(self, stopping: Stopping) -> tuple[np.ndarray, Solution]:
        """Iterate the one start under ``stopping``, the fixed factors restored after every update.

        Returns
        -------
        representation : ndarray of shape (n_new, n_components)
        solution : Solution
            The loop's result (its ``converged`` says whether the stopping rule was met).
        """
        update = self.update
        if self.fixed:
            def update(factors, rules=self.update, fixed=self.fixed):
                rules(factors)
                for name, value in fixed.items():  # in place: the rules' views and handoffs stay valid
                    factors[name][0] = value

        solution = solve(self.factors, update, self.objective, stopping)
        return self.representation(solution.factors), solution


class NewSamplesMixin:
    """What ``transform`` of a fitted factorization solves (see the module docstring).

    For :class:`~.estimator.Factorization`, whose ``transform`` calls ``_transform``: uses its fitted
    ``factors_``, ``basis_factors``, its hooks (``_rules``, ``_factor_shapes``, ``_representation``,
    ``_basis``, ``batched``) and ``_stopping()``.
    """

    def _transform(self, X) -> tuple[np.ndarray, Solution]:
        """(representation, solution of the loop) for new samples X (m x n_new)."""
        representation, solution = self._new_samples(X).solve(self._stopping())
        if solution.converged is False:
            warnings.warn(f"{type(self).__name__}.transform: the reference stopping rule (tol={self.tol}) was "
                          f"not met within max_iter={self.max_iter} iterations; raise max_iter",
                          ConvergenceWarning, stacklevel=3)
        return representation, solution

    def _transform_rules(self, X, y: np.ndarray):
        """``(update, objective)`` of the method on new samples X (m x n_new), labels y (all -1).

        Called on a copy of the fitted estimator (``_rules`` may set attributes): the method's own rules.
        """
        return self._rules(X, y)

    def _new_samples(self, X) -> NewSamples:
        """The method's own rules on X (m x n_new), ``basis_factors`` fixed (see the module docstring)."""
        m, n = X.shape
        y = np.full(n, UNLABELLED, dtype=np.int64)
        model = copy.copy(self)  # the rules may set attributes (graph_, constraint_matrix_, ...): not on self
        graph = getattr(model, "n_neighbors", None) is not None
        if graph and n == 1:  # no neighbour: the graph term vanishes (NPNMF's would be a ridge: dropped)
            update, objective = frobenius_rules(X)
            batched = True
        else:
            if graph and not 0 < model.n_neighbors < 1:  # a share of the samples scales with n by itself
                model.n_neighbors = min(int(model.n_neighbors), n - 1)
            update, objective = model._transform_rules(X, y)
            batched = model.batched
        if not batched:
            update, objective = per_start(update, objective)
        shapes = model._factor_shapes(m, n, y)
        fixed = {name: np.asarray(self.factors_[name], dtype=self.dtype) for name in self.basis_factors}
        basis = fixed["U"] if "U" in fixed else self._basis(self.factors_)
        scales = sample_scales(X, basis).astype(self.dtype)
        factors = {}
        for name, shape in shapes.items():
            if name in fixed:
                factors[name] = fixed[name][None].copy()
            elif shape[0] == n:  # a coefficient factor, one row per new sample
                factors[name] = np.repeat(scales[None, :, None], shape[1], axis=2)
            else:
                raise NotImplementedError(f"{type(self).__name__}: factor {name!r} of shape {shape} is neither "
                                          "a basis factor nor one row per sample; override _new_samples")
        return NewSamples(update, objective, factors, model._representation, fixed)

    def _fixed_basis_samples(self, X, basis: np.ndarray, lam: float = 0.0) -> NewSamples:
        """New samples on a fixed basis (m x k) by :func:`.fixed_basis.fixed_basis_rules` (factor ``V``).

        The representation is V scaled by the basis's column norms, as ``embedding_`` of NMF, CF and NTF.
        """
        basis = np.asarray(basis, dtype=self.dtype)
        update, objective = fixed_basis_rules(X, basis, lam)
        scales = sample_scales(X, basis).astype(self.dtype)
        factors = {"V": np.repeat(scales[None, :, None], basis.shape[1], axis=2)}
        norms = np.linalg.norm(basis, axis=0)
        return NewSamples(update, objective, factors, lambda solved: solved["V"] * norms)
