"""Registry of the factorization methods: the names the configs, tests and reports share.

A name that is not registered may be an estimator outside the repository, given by its import path
(``mypkg.mymodule:MyNMF`` or ``path/to/my_nmf.py:MyNMF``, :mod:`.outside`): :func:`estimator_class` and
:func:`make` take both.

>>> from src import methods
>>> model = methods.make("nmf", n_components=5, max_iter=100, random_state=0)
>>> methods.parameter_names(methods.REGISTRY["nmf"])[:3]
('dtype', 'init', 'max_iter')
"""

import inspect

from ..errors import ConfigError
from .cnmf import CNMF
from .cnmf_kl import CNMFKL
from .concept import CCF, CF
from .fnmf import FNMF
from .copkmeans import COPKMeans
from .gnmf import GNMF, SemiGNMF
from .kmeans import KMeansBaseline
from .lcf import LCF
from .nlcf import NLCF
from .nmf import NMF
from .nmf_kl import NMFKL
from .nmf_ncw import NMFNCW
from .npnmf import NPNMF
from . import outside
from .ntf import NTF
from .pcgnmf import PCGNMF
from .references import LabelSpreadingReference, NearestNeighbourReference, is_reference
from .sda import SDA
from .sparse_nmf import SparseNMF

REGISTRY = {
    "kmeans": KMeansBaseline,
    "nmf": NMF,
    "nmf_kl": NMFKL,
    "nmf_ncw": NMFNCW,
    "ntf": NTF,
    "copkmeans": COPKMeans,
    "sda": SDA,
    "gnmf": GNMF,
    "semignmf": SemiGNMF,
    "cf": CF,
    "cnmf": CNMF,
    "cnmf_kl": CNMFKL,
    "ccf": CCF,
    "sparse_nmf": SparseNMF,
    "nlcf": NLCF,
    "lcf": LCF,
    "npnmf": NPNMF,
    "fnmf": FNMF,
    "pcgnmf": PCGNMF,
    # the references of the label tracks: classifiers of the labelled samples, no factorization (.references)
    "label_spreading": LabelSpreadingReference,
    "knn": NearestNeighbourReference,
}
NAMES = tuple(REGISTRY)


def parameter_names(cls) -> tuple[str, ...]:
    """The constructor parameters of the estimator class ``cls``, sorted: the keys of its ``get_params()``.

    Read from the constructor's signature (as scikit-learn's ``get_params`` reads them), so that a
    parameter can be checked without building an estimator.
    """
    parameters = inspect.signature(cls).parameters.values()
    return tuple(sorted(p.name for p in parameters if p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)))


def estimator_class(name: str) -> type:
    """The class of the method ``name``: a registered one, or the class at an import path (:mod:`.outside`)."""
    if name in REGISTRY:
        return REGISTRY[name]
    if outside.is_import_path(name):
        return outside.load(name)
    raise ConfigError(f"method={name!r} is not one of {', '.join(NAMES)}, nor an import path "
                      "(package.module:Class or path/to/file.py:Class)")


def make(name: str, **params):
    """Build the method ``name`` (a registry name or an import path) with the given constructor parameters."""
    cls = estimator_class(name)
    valid = parameter_names(cls)
    unknown = sorted(set(params) - set(valid))
    if unknown:
        raise ConfigError(f"method {name!r} has no parameter {unknown[0]!r} (it takes {', '.join(valid)})")
    return cls(**params)
