"""The scorer class shared by the package's group scorers, and their NaN policy.

:func:`sklearn_smallfair.metrics.make_group_scorer` and
:func:`sklearn_smallfair.stats.make_comparative_separation_scorer` both return
instances of :class:`GroupScorer`.

A group scorer needs the group labels, which scikit-learn hands to a scorer only
through metadata routing. Two mistakes are easy to make and hard to read from
scikit-learn's own messages: routing left off, and labels not passed to the
search. :class:`GroupScorer` detects both when it is called and raises a
:class:`~sklearn_smallfair.exceptions.MetadataRoutingError` saying what to do.
Model selection catches a scorer's errors and records a NaN score (its default
``error_score=np.nan``), burying the message in a traceback; so the same message
is first issued as a
:class:`~sklearn_smallfair.exceptions.MetadataRoutingWarning`, which is shown on
its own line.
"""

import warnings

import sklearn

from ._compat import StrOptions, _Scorer
from .exceptions import MetadataRoutingError, MetadataRoutingWarning

__all__ = ["NAN_POLICY", "GroupScorer"]

#: Constraint of the ``nan_policy`` parameter of the group scores and scorers.
NAN_POLICY = [StrOptions({"raise", "propagate", "omit"})]

_PASS_LABELS = (
    "pass the labels to the search or the cross-validation: "
    "GridSearchCV(estimator, grid, scoring=scorer).fit(X, y, sensitive_features=A) "
    "or cross_validate(estimator, X, y, scoring=scorer, "
    "params={'sensitive_features': A})"
)


def _routing_enabled():
    return bool(sklearn.get_config().get("enable_metadata_routing", False))


class GroupScorer(_Scorer):
    """A ``make_scorer`` scorer that requests ``sensitive_features`` by default.

    Under metadata routing, ``sensitive_features`` is routed to the scorer without
    a call to ``set_score_request``; a user's explicit request (for instance
    ``set_score_request(sensitive_features="groups")`` to alias it) still wins.

    Called with metadata routing off, or without ``sensitive_features``, the
    scorer raises a :class:`~sklearn_smallfair.exceptions.MetadataRoutingError`
    (a ``ValueError``) that says how to enable routing and pass the labels,
    after issuing the same message as a
    :class:`~sklearn_smallfair.exceptions.MetadataRoutingWarning`.
    """

    def _get_metadata_request(self):
        requests = super()._get_metadata_request()
        if requests.score.requests.get("sensitive_features") is None:
            requests.score.add_request(param="sensitive_features", alias=True)
        return requests

    def __call__(self, estimator, X, y_true, sample_weight=None, **kwargs):
        if not _routing_enabled():
            self._fail(self._routing_off_message())
        return super().__call__(
            estimator, X, y_true, sample_weight=sample_weight, **kwargs
        )

    def _score(self, method_caller, estimator, X, y_true, **kwargs):
        # the path of model selection's multi-metric scoring, which skips __call__
        if kwargs.get("sensitive_features") is None:
            if not _routing_enabled():
                self._fail(self._routing_off_message())
            self._fail(self._missing_labels_message())
        return super()._score(method_caller, estimator, X, y_true, **kwargs)

    # ---------------------------------------------------------------------------
    # messages
    # ---------------------------------------------------------------------------
    def _name(self):
        func = getattr(self._score_func, "__name__", "score")
        first = next(iter(self._kwargs.items()), None) if self._kwargs else None
        arg = f"{first[0]}={first[1]!r}" if first else ""
        return f"The group scorer of {func}({arg})"

    def _by_hand(self):
        func = getattr(self._score_func, "__name__", "the score function")
        return (
            f"Outside model selection, call {func}(y, predictions, "
            f"sensitive_features=A) directly."
        )

    def _routing_off_message(self):
        return (
            f"{self._name()} needs the group labels (sensitive_features), which "
            f"scikit-learn passes to a scorer only through metadata routing, and "
            f"routing is off. Turn it on before fitting with "
            f"sklearn.set_config(enable_metadata_routing=True) (or inside "
            f"'with sklearn.config_context(enable_metadata_routing=True):'), then "
            f"{_PASS_LABELS}. With routing off those calls fail earlier, in the "
            f'estimator: "fit() got an unexpected keyword argument '
            f"'sensitive_features'\". {self._by_hand()}"
        )

    def _missing_labels_message(self):
        request = self._get_metadata_request().score.requests.get("sensitive_features")
        if isinstance(request, str):
            how = (
                f"This scorer requests them under the name {request!r}: pass "
                f"{request}=A, e.g. GridSearchCV(...).fit(X, y, {request}=A), or "
                f"restore the default name with "
                f"scorer.set_score_request(sensitive_features=True)."
            )
        elif request is not True:
            how = (
                "This scorer's request for them is off: turn it back on with "
                "scorer.set_score_request(sensitive_features=True)."
            )
        else:
            how = (
                "A scorer called by hand takes them as scorer(estimator, X, y, "
                "sensitive_features=A)."
            )
        return (
            f"{self._name()} received no group labels (sensitive_features): "
            f"{_PASS_LABELS}. {how}"
        )

    @staticmethod
    def _fail(message):
        # model selection turns a scorer's error into a NaN score and a warning
        # holding a traceback; this warning shows the message on its own first
        warnings.warn(message, MetadataRoutingWarning, stacklevel=3)
        raise MetadataRoutingError(message)
