"""The estimators keep scikit-learn's contract without subclassing scikit-learn's BaseEstimator.

The base class (``incrowd.microaggregation._estimator``) does not import scikit-learn, so a process that only
microaggregates never pays for scipy. These tests hold it to what scikit-learn users rely on:
``clone``, ``get_params`` / ``set_params``, ``fit`` returning self, trailing-underscore
attributes only after ``fit``, ``Pipeline`` and ``GridSearchCV``, the same tags as
``ClusterMixin + BaseEstimator``, and every ``sklearn.utils.estimator_checks`` check that
passed for every method while the estimators subclassed ``BaseEstimator``.
"""

from __future__ import annotations

import pickle
import warnings

import numpy as np
import pytest

pytest.importorskip("sklearn")

from sklearn.base import BaseEstimator, ClusterMixin, clone  # noqa: E402
from sklearn.model_selection import GridSearchCV  # noqa: E402
from sklearn.pipeline import Pipeline, make_pipeline  # noqa: E402
from sklearn.preprocessing import StandardScaler  # noqa: E402
from sklearn.utils import estimator_checks, get_tags  # noqa: E402

from incrowd import MDAV, METHODS, MONA, VMDAV  # noqa: E402

#: the checks ``check_estimator`` ran and passed for all eleven methods on the BaseEstimator
#: base (scikit-learn 1.9). check_estimator() gates the clusterer checks on
#: isinstance(est, ClusterMixin), so they are called here by name, all of them.
PASSING_CHECKS = [
    "check_clusterer_compute_labels_predict",
    "check_dict_unchanged",
    "check_do_not_raise_errors_in_init_or_set_params",
    "check_dont_overwrite_parameters",
    "check_estimator_cloneable",
    "check_estimator_repr",
    "check_estimator_tags_renamed",
    "check_estimators_dtypes",
    "check_estimators_fit_returns_self",
    "check_estimators_nan_inf",
    "check_estimators_overwrite_params",
    "check_estimators_partial_fit_n_features",
    "check_estimators_pickle",
    "check_estimators_unfitted",
    "check_f_contiguous_array_estimator",
    "check_fit2d_1feature",
    "check_fit2d_predict1d",
    "check_fit_check_is_fitted",
    "check_fit_idempotent",
    "check_fit_score_takes_y",
    "check_get_params_invariance",
    "check_methods_sample_order_invariance",
    "check_methods_subset_invariance",
    "check_mixin_order",
    "check_n_features_in",
    "check_n_features_in_after_fitting",
    "check_no_attributes_set_in_init",
    "check_non_transformer_estimators_n_iter",
    "check_parameters_default_constructible",
    "check_pipeline_consistency",
    "check_positive_only_tag_during_fit",
    "check_readonly_memmap_input",
    "check_set_params",
    "check_valid_tag_types",
]


def _checks():
    for check in PASSING_CHECKS:
        if not hasattr(estimator_checks, check):  # a check a later scikit-learn renamed or dropped
            continue
        for method in METHODS:
            yield pytest.param(method, check, id=f"{method}-{check}")


@pytest.mark.parametrize("method, check", list(_checks()))
def test_estimator_checks_still_pass(method, check):
    cls = METHODS[method]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        getattr(estimator_checks, check)(cls.__name__, cls(k=3))


class _Reference(ClusterMixin, BaseEstimator):
    def __init__(self, k=5, *, random_state=None):
        self.k = k
        self.random_state = random_state


def test_tags_are_those_of_a_clustermixin_baseestimator():
    assert get_tags(MDAV()) == get_tags(_Reference())


@pytest.mark.parametrize("method", list(METHODS))
def test_params_round_trip_and_clone(method):
    est = METHODS[method](k=4)
    params = est.get_params()
    assert params["k"] == 4 and "random_state" in params
    twin = clone(est)
    assert twin is not est and type(twin) is type(est) and twin.get_params() == params
    assert est.set_params(k=7) is est and est.get_params()["k"] == 7
    assert twin.get_params()["k"] == 4
    assert pickle.loads(pickle.dumps(est)).get_params() == est.get_params()


def test_set_params_refuses_an_unknown_name():
    with pytest.raises(ValueError, match=r"Invalid parameter 'gama' for estimator VMDAV\(\)"):
        VMDAV().set_params(gama=0.3)


def test_repr_shows_changed_parameters_like_scikit_learn():
    assert repr(MDAV()) == "MDAV()"
    assert repr(VMDAV(k=4, gamma=0.5)) == "VMDAV(gamma=0.5, k=4)"
    assert repr(MONA(k=3, rho=0.3)) == "MONA(k=3, rho=0.3)"


def test_fit_returns_self_and_sets_trailing_underscore_attributes():
    X = np.random.default_rng(0).normal(size=(40, 3))
    est = MDAV(k=4)
    assert not [a for a in vars(est) if a.endswith("_")]
    assert est.fit(X) is est
    fitted = {a for a in vars(est) if a.endswith("_")}
    assert {"labels_", "n_groups_", "group_sizes_", "centroids_", "information_loss_", "n_features_in_"} <= fitted
    assert np.bincount(est.labels_).min() >= 4


def test_pipeline_and_nested_params():
    X = np.random.default_rng(1).normal(size=(60, 4)) * [1, 10, 100, 1000]
    pipe = make_pipeline(StandardScaler(), MDAV(k=5))
    labels = pipe.fit_predict(X)
    assert labels.shape == (60,) and np.bincount(labels).min() >= 5
    pipe.set_params(mdav__k=6)
    assert pipe.get_params()["mdav__k"] == 6
    assert np.bincount(clone(pipe).fit_predict(X)).min() >= 6
    assert isinstance(clone(Pipeline([("m", VMDAV(k=3, gamma=0.1))])).steps[0][1], VMDAV)


def test_grid_search_clones_and_refits():
    X = np.random.default_rng(2).normal(size=(90, 3))

    def lower_loss_is_better(est, X, y=None):
        return -est.information_loss_

    search = GridSearchCV(MDAV(), {"k": [3, 9]}, scoring=lower_loss_is_better, cv=3).fit(X)
    assert search.best_params_ == {"k": 3}  # smaller groups lose less information
    assert isinstance(search.best_estimator_, MDAV) and search.best_estimator_.k == 3
    assert search.best_estimator_.labels_.shape == (90,)
