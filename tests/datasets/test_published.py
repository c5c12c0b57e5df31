"""Tests of the embedded published confusion matrices."""

import numpy as np
import pandas as pd
import pytest

from sklearn_smallfair._confusion import CELLS
from sklearn_smallfair.datasets import load_published_confusion_matrices


def test_shapes_and_sums():
    table = load_published_confusion_matrices()
    assert list(table.columns) == ["dataset", "group", *CELLS]
    assert set(table["dataset"]) == {"COMPAS", "Folktables"}
    folk = load_published_confusion_matrices("Folktables")
    groups = folk[folk["group"] != "ALL"][list(CELLS)].to_numpy()
    everyone = folk[folk["group"] == "ALL"][list(CELLS)].to_numpy()[0]
    np.testing.assert_array_equal(groups.sum(axis=0), everyone)  # ALL is the sum
    compas = load_published_confusion_matrices("COMPAS")
    assert compas[list(CELLS)].to_numpy()[-1].sum() == 6454
    assert len(load_published_confusion_matrices("COMPAS", include_all=False)) == 2


def test_bad_dataset_name():
    with pytest.raises(
        ValueError,
        match="'dataset' parameter of load_published_confusion_matrices must be a "
        "str among",
    ):
        load_published_confusion_matrices("compas")
    with pytest.raises(
        TypeError, match="'include_all' parameter of load_published_confusion_matri"
    ):
        load_published_confusion_matrices(include_all="no")


def test_embedded_copy_equals_reference_file(published_path):
    ref = pd.read_csv(published_path)
    table = load_published_confusion_matrices()
    pd.testing.assert_frame_equal(table, ref, check_dtype=False)


def test_load_published_groups_references_are_all_minus_group():
    from sklearn_smallfair.datasets import load_published_groups

    table = load_published_confusion_matrices()
    counts, reference = load_published_groups()
    assert counts.shape == reference.shape == (10, 4)
    assert list(counts.columns) == ["TP", "FN", "FP", "TN"]
    assert (reference.index == counts.index).all()
    for label in counts.index:
        dataset, group = label.split("|")
        rows = table[table["dataset"] == dataset].set_index("group")
        cells = ["TP", "FN", "FP", "TN"]
        np.testing.assert_array_equal(counts.loc[label], rows.loc[group, cells])
        np.testing.assert_array_equal(
            reference.loc[label], rows.loc["ALL", cells] - rows.loc[group, cells]
        )
    assert (reference.to_numpy() > 0).all()
    one, _ = load_published_groups("Folktables")
    assert len(one) == 8 and one.index.str.startswith("Folktables|").all()
