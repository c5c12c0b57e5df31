"""Fairness audits: a meta-estimator and a function that produce an
:class:`AuditReport` with per-group metrics, tests, findings, plots and HTML."""

from ._audit import FairnessAudit, audit_predictions
from ._report import AuditReport

__all__ = ["AuditReport", "FairnessAudit", "audit_predictions"]
