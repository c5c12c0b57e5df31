"""Eccentricity bias of dyadic regression models (user-item ratings, drug response):
EAUC, the eccentricity curve, the D_KS non-uniformity of a data set, dyadic
estimators and a correction wrapper."""

from ._eauc import (
    EccentricityCurve,
    dks_nonuniformity,
    eauc_score,
    eccentricity,
    eccentricity_curve,
)
from ._means import EntityMeans, entity_means

__all__ = [
    "EccentricityCurve",
    "EntityMeans",
    "dks_nonuniformity",
    "eauc_score",
    "eccentricity",
    "eccentricity_curve",
    "entity_means",
]
