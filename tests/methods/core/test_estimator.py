"""The scikit-learn estimator API of every method: transform of new samples, feature names, set_output, tags,
sparse input, the parameter tables, and a Pipeline + GridSearchCV on real data (src.methods.core.estimator,
src.methods.core.new_samples, src.methods.core.fixed_basis, src.methods.core.validation)."""

import inspect
import logging
import warnings

import numpy as np
import pandas as pd
import pytest
import scipy.sparse as sp
from sklearn.base import clone
from sklearn.cluster import KMeans
from sklearn.exceptions import ConvergenceWarning, NotFittedError
from sklearn.metrics import make_scorer
from sklearn.model_selection import GridSearchCV, StratifiedKFold
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import MinMaxScaler
from sklearn.utils import get_tags

from helpers import AT_THE_CAP_MESSAGE, partial_labels
from src import methods
from src.errors import ConfigError
from src.methods.core.estimator import Factorization, LabelConstrainedMixin
from src.methods.core.validation import CHECKED_BY_FIT
from src.methods.nmf import NMF
from src.protocol.metrics import accuracy, nmi

FACTORIZATIONS = [name for name in methods.NAMES if issubclass(methods.REGISTRY[name], Factorization)]
TRANSFORMERS = [name for name in methods.NAMES if hasattr(methods.REGISTRY[name], "transform")]
GRAPH_WEIGHT = {"gnmf": "alpha", "semignmf": "alpha", "pcgnmf": "alpha", "fnmf": "farness", "npnmf": "mu"}
"""The graph methods and the parameter that weighs their graph term."""
ROW_INDEPENDENT = [name for name in FACTORIZATIONS if name not in GRAPH_WEIGHT]
"""Methods whose transform solves each new sample on its own."""


def make(name, **params):
    """A method with small settings: 3 components, one start, 200 iterations exactly (NTF: 2 x 3 images)."""
    accepted = methods.parameter_names(methods.REGISTRY[name])
    settings = {"n_components": 3, "max_iter": 200, "n_starts": 1, "stopping": "fixed", "random_state": 0,
                "image_shape": (2, 3), "n_neighbors": 3}
    return methods.make(name, **{**{k: v for k, v in settings.items() if k in accepted}, **params})


def blobs(rng, n=30, m=6, k=3):
    """n nonnegative samples (rows) in k well-separated groups, and their group labels."""
    centres = rng.random((k, m)) * 0.2
    centres[np.arange(k), np.arange(k)] += 3.0
    y = np.arange(n) % k
    return centres[y] + 0.05 * rng.random((n, m)), y


def fitted(name, X, y=None, **params):
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", AT_THE_CAP_MESSAGE, ConvergenceWarning)  # fits to use, converged or not
        return make(name, **params).fit(X, y)


def stacked(factors):
    return {key: value[None] for key, value in factors.items()}


# ------------------------------------------------------------------------------------------- transform
@pytest.mark.parametrize("name", TRANSFORMERS)
def test_transform_before_fit_is_refused(name, rng):
    with pytest.raises(NotFittedError):
        make(name).transform(rng.random((4, 6)))


@pytest.mark.parametrize("name", TRANSFORMERS)
def test_transform_of_new_samples_leaves_the_fit_alone(name, rng):
    X, y = blobs(rng)
    model = fitted(name, X, partial_labels(30, rng))
    before = {key: (value.copy() if isinstance(value, np.ndarray) else value) for key, value in vars(model).items()}
    new = rng.random((7, 6))
    out = model.transform(new)
    assert out.shape == (7, model.embedding_.shape[1]) and np.all(np.isfinite(out))
    np.testing.assert_array_equal(model.transform(new), out)  # no random draw
    assert set(vars(model)) == set(before)
    for key, value in before.items():
        if isinstance(value, np.ndarray):
            np.testing.assert_array_equal(getattr(model, key), value)
    if name != "sda":  # SDA's projection may be negative
        assert out.min() >= 0


@pytest.mark.parametrize("name", FACTORIZATIONS)
def test_transform_objective_never_increases_and_is_the_objective_of_the_result(name, rng):
    """The history of transform's loop is monotone, and its last value is the objective evaluated afresh at
    the returned factors (no stale product handed between the rules while the basis is held fixed)."""
    X, _ = blobs(rng)
    model = fitted(name, X, partial_labels(30, rng))
    new = rng.random((9, 6)).T
    _, solution = model._transform(new)
    history = np.asarray(solution.history)
    assert history.size == model.max_iter
    assert np.all(np.diff(history) <= 1e-9 * abs(history[0]) + 1e-12)
    fresh = model._new_samples(new).objective(stacked(solution.factors))
    np.testing.assert_allclose(fresh[0], history[-1], rtol=1e-9, atol=1e-12)
    if type(model)._new_samples is Factorization._new_samples:  # the method's own rules, the basis held fixed
        for basis in model.basis_factors:
            np.testing.assert_array_equal(solution.factors[basis], model.factors_[basis])


@pytest.mark.parametrize("name", ROW_INDEPENDENT)
def test_transform_of_a_sample_does_not_depend_on_the_batch(name, rng):
    X, _ = blobs(rng)
    model = fitted(name, X, partial_labels(30, rng))
    new = rng.random((6, 6))
    whole = model.transform(new)
    np.testing.assert_allclose(model.transform(new[2:3]), whole[2:3], rtol=1e-7, atol=1e-10)
    order = rng.permutation(6)
    np.testing.assert_allclose(model.transform(new[order]), whole[order], rtol=1e-7, atol=1e-10)


def nmf_objective(X_rows, U, V):
    return float(np.linalg.norm(X_rows.T - U @ V.T) ** 2)


def test_nmf_transform_of_the_training_data_is_the_fit_up_to_the_stopping_rule(rng):
    X, y = blobs(rng)
    model = fitted("nmf", X, stopping="reference", tol=1e-10, max_iter=5000)
    V_new = model.transform(X) / np.linalg.norm(model.factors_["U"], axis=0)
    U = model.factors_["U"]
    # transform minimizes over V with U fixed: no worse than the fit's own V, far better than a random V
    assert nmf_objective(X, U, V_new) <= nmf_objective(X, U, model.factors_["V"]) * (1 + 1e-6)
    assert nmf_objective(X, U, V_new) < 0.01 * nmf_objective(X, U, rng.random(V_new.shape))
    scale = model.embedding_.max()  # equal up to the stopping rule (an entry tending to 0 does so slowly)
    np.testing.assert_allclose(model.transform(X), model.embedding_, rtol=1e-3, atol=1e-3 * scale)
    # clustering the transform of the training data agrees with clustering embedding_
    labels = [KMeans(3, n_init=10, random_state=0).fit_predict(Z) for Z in (model.embedding_, model.transform(X))]
    assert accuracy(labels[0], labels[1]) == 1.0 and accuracy(y, labels[0]) == 1.0


@pytest.mark.parametrize("name", ["cf", "lcf", "ntf", "nmf_kl", "sparse_nmf", "nmf_ncw"])
def test_transform_of_the_training_data_is_close_to_the_converged_embedding(name, rng):
    """(NLCF is left out: on these data it puts two nearly equal basis vectors on one group, and the
    coefficients on two equal vectors are not determined by the basis.)"""
    X, _ = blobs(rng)
    params = {"image_shape": (2, 3)} if name == "ntf" else {}
    model = fitted(name, X, stopping="reference", tol=1e-12, max_iter=20000, **params)
    scale = np.abs(model.embedding_).max()
    np.testing.assert_allclose(model.transform(X), model.embedding_, atol=2e-3 * scale)


@pytest.mark.parametrize("name", ["cf", "ccf", "lcf"])
def test_concept_transform_on_mixed_sign_data_decreases_its_objective(name, rng):
    X = rng.normal(size=(25, 6))
    model = fitted(name, X, partial_labels(25, rng))
    assert model.transform(X).min() >= 0
    _, solution = model._transform(rng.normal(size=(8, 6)).T)
    assert np.all(np.diff(solution.history) <= 1e-9 * abs(solution.history[0]))


@pytest.mark.parametrize("name", ["cnmf", "cnmf_kl"])
def test_constrained_nmf_treats_new_samples_as_unlabelled(name, rng):
    """CNMF's transform is its rule with A = I: the rule of NMF (NMF-KL) with the fitted U."""
    X, _ = blobs(rng)
    model = fitted(name, X, partial_labels(30, rng))
    plain = make("nmf" if name == "cnmf" else "nmf_kl")
    plain.factors_ = {"U": model.factors_["U"], "V": np.zeros((30, 3))}
    plain.components_, plain.n_features_in_ = model.components_, model.n_features_in_
    new = rng.random((5, 6))
    np.testing.assert_allclose(model.transform(new), plain.transform(new), rtol=1e-10)


@pytest.mark.parametrize("name", list(GRAPH_WEIGHT))
def test_graph_methods_drop_the_graph_for_one_new_sample_and_clip_the_neighbours(name, rng, caplog):
    X, _ = blobs(rng)
    strong = {"farness": 0.5} if name == "fnmf" else {}  # FNMF's default weight, farness / n, is faint
    model = fitted(name, X, partial_labels(30, rng), n_neighbors=5, **strong)
    new = rng.random((4, 6))
    with caplog.at_level(logging.WARNING):
        batch = model.transform(new)  # 3 neighbours at most among 4 samples: clipped, nothing logged
    assert np.all(np.isfinite(batch)) and not caplog.records
    off = clone(model).set_params(**{GRAPH_WEIGHT[name]: 0.0})
    off.__dict__.update({key: value for key, value in vars(model).items() if key.endswith("_")})
    np.testing.assert_allclose(model.transform(new[:1]), off.transform(new[:1]), rtol=1e-10)
    more = rng.random((10, 6))  # FNMF: among 4 samples all are neighbours, so no pair is "far"
    assert not np.allclose(model.transform(more), off.transform(more), rtol=1e-3)  # the graph acts


def test_transform_warns_when_the_reference_rule_is_not_met(rng):
    X, _ = blobs(rng)
    model = fitted("nmf", X, stopping="reference", max_iter=3, tol=1e-12)
    with pytest.warns(ConvergenceWarning, match=r"NMF\.transform: the reference stopping rule"):
        model.transform(rng.random((4, 6)))


def test_transform_checks_the_features(rng):
    model = fitted("nmf", rng.random((10, 6)))
    with pytest.raises(ValueError, match="X has 5 features, but NMF is expecting 6 features as input"):
        model.transform(rng.random((3, 5)))
    with pytest.raises(ValueError, match=r"Negative values in data passed to NMF"):
        model.transform(-rng.random((3, 6)))


# ------------------------------------------------------------------------------ names, output, tags
@pytest.mark.parametrize("name", TRANSFORMERS)
def test_feature_names_and_pandas_output(name, rng):
    X, _ = blobs(rng)
    frame = pd.DataFrame(X, columns=[f"pixel{i}" for i in range(6)])
    model = make(name).set_output(transform="pandas")
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", AT_THE_CAP_MESSAGE, ConvergenceWarning)  # the names are checked
        out = model.fit_transform(frame, partial_labels(30, rng))
    assert list(model.feature_names_in_) == list(frame.columns) and model.n_features_in_ == 6
    expected = (list(frame.columns) if name == "kmeans"
                else [f"{type(model).__name__.lower()}{i}" for i in range(model.n_components)])
    assert list(model.get_feature_names_out()) == expected
    assert isinstance(out, pd.DataFrame) and list(out.columns) == expected
    new = model.transform(frame.iloc[:4])
    assert isinstance(new, pd.DataFrame) and list(new.columns) == expected


@pytest.mark.parametrize("name", methods.NAMES)
def test_tags_say_what_the_method_accepts(name):
    model = make(name)
    tags = get_tags(model)
    assert tags.input_tags.positive_only == model.nonnegative_data
    assert tags.input_tags.sparse == model.accept_sparse
    assert isinstance(model.expected_failed_checks(), dict)
    if name in GRAPH_WEIGHT:
        assert "batch" in model.expected_failed_checks()["check_methods_subset_invariance"]


# ------------------------------------------------------------------------------------ parameters and labels
@pytest.mark.parametrize("name", methods.NAMES)
def test_the_parameter_table_has_a_rule_for_every_parameter_and_refuses_a_bad_one(name):
    """As scikit-learn's ``_parameter_constraints``: one rule per constructor parameter; ``check_params`` refuses a
    value of no valid type with one line naming the parameter (init and random_state are checked by fit)."""
    cls = methods.REGISTRY[name]
    assert set(cls._parameter_constraints) == set(methods.parameter_names(cls))
    make(name).check_params()
    for param, rule in cls._parameter_constraints.items():
        if rule is CHECKED_BY_FIT:
            continue
        model = make(name).set_params(**{param: object()})
        with pytest.raises(ConfigError, match=rf"^{param}=<object object at \w+> (must be|is not one of) "):
            model.check_params()


def test_a_subclass_extends_its_parents_table_in_order():
    from src.methods.gnmf import GNMF
    from src.methods.pcgnmf import PCGNMF

    assert list(PCGNMF._parameter_constraints) == [*GNMF._parameter_constraints, "beta"]
    assert list(GNMF._parameter_constraints)[: len(Factorization._parameter_constraints)] == list(
        Factorization._parameter_constraints)


@pytest.mark.parametrize("name", methods.NAMES)
def test_constructors_are_keyword_only_after_n_components(name):
    cls = methods.REGISTRY[name]
    positional = [p.name for p in inspect.signature(cls.__init__).parameters.values()
                  if p.kind is inspect.Parameter.POSITIONAL_OR_KEYWORD]
    assert positional == ["self", "n_components"]
    if len(methods.parameter_names(cls)) > 1:
        with pytest.raises(TypeError):
            cls(3, 100)


def test_the_label_constrained_methods_share_one_mixin():
    constrained = {name for name, cls in methods.REGISTRY.items() if issubclass(cls, LabelConstrainedMixin)}
    references = {"label_spreading", "knn"}  # the label tracks' classifiers (src/methods/references.py)
    assert constrained == {"cnmf", "cnmf_kl", "ccf", "semignmf", "pcgnmf", "copkmeans", "sda", *references}
    assert constrained == {name for name, cls in methods.REGISTRY.items() if cls.needs_labels}
    assert {name for name in constrained if methods.REGISTRY[name].requires_labelled_samples} == {"sda", *references}


@pytest.mark.parametrize("name", ["kmeans", "sda"])
def test_closed_form_methods_have_no_iteration_attributes(name, rng):
    X, _ = blobs(rng)
    model = fitted(name, X, partial_labels(30, rng))
    assert not any(hasattr(model, attr) for attr in ("n_iter_", "objective_history_", "converged_"))


@pytest.mark.parametrize("name", methods.NAMES)
def test_sparse_input_is_used_or_refused_in_one_line(name, rng):
    X, _ = blobs(rng)
    X[X < 0.1] = 0.0
    y = partial_labels(30, rng)
    model = make(name)
    if not model.accept_sparse:
        with pytest.raises(ValueError, match=rf"^{type(model).__name__} does not accept sparse X: pass a dense array"):
            model.fit(sp.csr_matrix(X), y)
        return
    dense, sparse = fitted(name, X, y), fitted(name, sp.csr_matrix(X), y)
    if not hasattr(dense, "embedding_"):  # a reference: its classes are its output
        np.testing.assert_array_equal(sparse.labels_, dense.labels_)
        return
    np.testing.assert_allclose(sparse.embedding_.toarray() if sp.issparse(sparse.embedding_) else sparse.embedding_,
                               dense.embedding_, rtol=1e-8, atol=1e-12)
    out = sparse.transform(sp.csr_matrix(X[:5]))
    np.testing.assert_allclose(out.toarray() if sp.issparse(out) else out, dense.transform(X[:5]), rtol=1e-8,
                               atol=1e-12)


def test_copkmeans_predicts_the_nearest_centre(rng):
    X, y = blobs(rng)
    model = make("copkmeans").fit(X, np.where(np.arange(30) < 9, y, -1))
    np.testing.assert_array_equal(model.predict(X), model.labels_)
    far = model.cluster_centers_ + 0.01
    np.testing.assert_array_equal(model.predict(far), np.arange(3))


def test_float_labels_with_integer_values_are_accepted(rng):
    X, _ = blobs(rng)
    y = partial_labels(30, rng)
    a = fitted("cnmf", X, y.astype(float)).embedding_
    np.testing.assert_array_equal(a, fitted("cnmf", X, y).embedding_)


# ------------------------------------------------------------------------- Pipeline and GridSearchCV
@pytest.fixture(scope="module")
def yale():
    from src.data.named import load_named

    try:
        return load_named("yale")
    except Exception as exc:  # no mirror and no network
        pytest.skip(f"Yale not available: {exc}")


def test_pipeline_and_grid_search_on_yale(yale):
    X, y = yale.X, yale.y
    k = int(y.max()) + 1
    pipe = make_pipeline(MinMaxScaler(clip=True), methods.make("nmf", n_components=k, max_iter=100, n_starts=1,
                                                      stopping="fixed", random_state=0),
                         KMeans(n_clusters=k, n_init=10, random_state=0))
    labels = pipe.fit_predict(X)
    assert nmi(y, labels) > 0.3  # far above chance (about 0.2 for 15 random groups of 11)
    search = GridSearchCV(pipe, {"nmf__n_components": [k - 5, k]}, scoring=make_scorer(nmi),
                          cv=StratifiedKFold(3, shuffle=True, random_state=0))
    search.fit(X, y)
    assert search.best_params_["nmf__n_components"] in (k - 5, k)
    assert 0.3 < search.best_score_ <= 1.0
    held_out = search.best_estimator_.predict(X[:20])  # new samples go through NMF.transform
    assert held_out.shape == (20,)
