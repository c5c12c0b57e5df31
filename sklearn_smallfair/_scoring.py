"""The scorer class shared by the package's group scorers.

:func:`sklearn_smallfair.metrics.make_group_scorer` and
:func:`sklearn_smallfair.stats.make_comparative_separation_scorer` both return
instances of :class:`GroupScorer`.
"""

from ._compat import _Scorer

__all__ = ["GroupScorer"]


class GroupScorer(_Scorer):
    """A ``make_scorer`` scorer that requests ``sensitive_features`` by default.

    Under metadata routing, ``sensitive_features`` is routed to the scorer without
    a call to ``set_score_request``; a user's explicit request (for instance
    ``set_score_request(sensitive_features="groups")`` to alias it) still wins.
    """

    def _get_metadata_request(self):
        requests = super()._get_metadata_request()
        if requests.score.requests.get("sensitive_features") is None:
            requests.score.add_request(param="sensitive_features", alias=True)
        return requests
