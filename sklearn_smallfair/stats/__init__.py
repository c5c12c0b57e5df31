"""Statistical tests: the MATCH test, separation and comparative separation tests,
their power analysis, and multiple-comparison adjustments."""

from ._comparative import comparative_separation_test
from ._comparative_result import ComparativeSeparationResult
from ._comparative_scoring import (
    comparative_separation_statistic,
    make_comparative_separation_scorer,
)
from ._match import ENUMERATE_MAX_N, MAX_N_RESAMPLES, match_test
from ._match_multiclass import MulticlassMatchResult, multiclass_match_test
from ._match_result import MatchResult
from ._multitest import adjust_pvalues
from ._pairs import make_comparative_pairs
from ._planning import (
    match_min_detectable_effect,
    match_power,
    match_sample_size,
)
from ._power import (
    comparative_separation_power,
    comparative_separation_sample_size,
    separation_power,
    separation_sample_size,
)
from ._power_simulation import simulate_separation_power
from ._separation import SeparationResult, separation_test

__all__ = [
    "ENUMERATE_MAX_N",
    "MAX_N_RESAMPLES",
    "ComparativeSeparationResult",
    "MatchResult",
    "MulticlassMatchResult",
    "SeparationResult",
    "adjust_pvalues",
    "comparative_separation_power",
    "comparative_separation_sample_size",
    "comparative_separation_statistic",
    "comparative_separation_test",
    "make_comparative_pairs",
    "make_comparative_separation_scorer",
    "match_min_detectable_effect",
    "match_power",
    "match_sample_size",
    "match_test",
    "multiclass_match_test",
    "separation_power",
    "separation_sample_size",
    "separation_test",
    "simulate_separation_power",
]
