"""Eccentricity bias of dyadic regression models (user-item ratings, drug response):
EAUC, the eccentricity curve, the D_KS non-uniformity of a data set, dyadic
estimators and a correction wrapper."""

from ._baselines import UniformRandomRegressor
from ._correction import EccentricityCorrectedRegressor
from ._dks import dks_nonuniformity
from ._eauc import EccentricityCurve, eauc_score, eccentricity_curve
from ._eccentricity import eccentricity
from ._estimators import DyadicMeanRegressor, MatrixFactorizationRegressor
from ._means import EntityMeans, entity_means
from ._neighbors import NeighborhoodRegressor
from ._plot import EccentricityDisplay
from ._scorer import make_eauc_scorer

__all__ = [
    "DyadicMeanRegressor",
    "EccentricityCorrectedRegressor",
    "EccentricityCurve",
    "EccentricityDisplay",
    "EntityMeans",
    "MatrixFactorizationRegressor",
    "NeighborhoodRegressor",
    "UniformRandomRegressor",
    "dks_nonuniformity",
    "eauc_score",
    "eccentricity",
    "eccentricity_curve",
    "entity_means",
    "make_eauc_scorer",
]
