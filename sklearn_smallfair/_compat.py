"""The only place that imports private scikit-learn names.

scikit-learn does not promise these names across releases; importing them here
keeps any adaptation to a new release in one module.
"""

from sklearn.base import _fit_context
from sklearn.metrics._scorer import _Scorer
from sklearn.model_selection._split import BaseCrossValidator, GroupsConsumerMixin
from sklearn.utils._param_validation import (
    HasMethods,
    Interval,
    InvalidParameterError,
    Options,
    RealNotInt,
    StrOptions,
    generate_invalid_param_val,
    make_constraint,
    validate_parameter_constraints,
    validate_params,
)

__all__ = [
    "BaseCrossValidator",
    "GroupsConsumerMixin",
    "HasMethods",
    "Interval",
    "InvalidParameterError",
    "Options",
    "RealNotInt",
    "StrOptions",
    "_Scorer",
    "_fit_context",
    "generate_invalid_param_val",
    "make_constraint",
    "validate_parameter_constraints",
    "validate_params",
]
