"""Fairness audits: a meta-estimator and a function that produce an
:class:`AuditReport` with per-group metrics, tests, findings, plots (drawn by
:class:`AuditDisplay`) and HTML; for multiclass targets a
:class:`MulticlassAuditReport` holding the audit of each class."""

from ._audit import FairnessAudit, audit_predictions
from ._multiclass_report import MulticlassAuditReport
from ._plot import AuditDisplay
from ._report import AuditReport

__all__ = [
    "AuditDisplay",
    "AuditReport",
    "FairnessAudit",
    "MulticlassAuditReport",
    "audit_predictions",
]
