"""Statistical tests: the MATCH test and multiple-comparison adjustments."""

from ._match import ENUMERATE_MAX_N, MatchResult, MATCHTest, match_test
from ._multitest import adjust_pvalues

__all__ = [
    "ENUMERATE_MAX_N",
    "MATCHTest",
    "MatchResult",
    "adjust_pvalues",
    "match_test",
]
