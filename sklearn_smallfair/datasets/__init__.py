"""Embedded published data."""

from ._published import load_published_confusion_matrices, load_published_groups

__all__ = ["load_published_confusion_matrices", "load_published_groups"]
