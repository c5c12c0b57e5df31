"""Embedded published data."""

from ._published import load_published_confusion_matrices

__all__ = ["load_published_confusion_matrices"]
