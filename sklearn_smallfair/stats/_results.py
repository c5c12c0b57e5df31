"""What the results of the separation tests share: the verdict and the display."""

import numpy as np

from ._multitest import smallest_pvalue

__all__ = ["family_summary", "repr_table"]


def family_summary(frame, column, families, alpha, two_groups):
    """Headline p-values and z statistics of two families of tests, and the verdict.

    The headline p-value of a family is its smallest adjusted p-value; its z
    statistic is that of its one test with two groups (NaN otherwise). The
    verdict is ``min(p1, p2) < alpha`` (NaN p-values are ignored).
    """
    rows = [frame[frame[column] == family] for family in families]
    p = [smallest_pvalue(r["p_adjusted"]) for r in rows]
    z = [float(r["z"].iloc[0]) if two_groups else np.nan for r in rows]
    smallest = np.fmin(*p)
    return p, z, bool(not np.isnan(smallest) and smallest < alpha)


def repr_table(frame, columns):
    """``frame[columns]`` as text, numbers to four significant digits."""
    return frame[columns].to_string(
        float_format=lambda v: f"{v:.4g}", index=False, na_rep="NaN"
    )
