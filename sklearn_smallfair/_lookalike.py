"""Labels that look alike on screen but are different values.

Group labels are compared exactly: ``"A"``, ``"A "``, ``"A\\u200b"`` (a
zero-width space), the Cyrillic ``"\\u0410"`` and the Latin ``"A"`` are five
groups. Shown in a table they read as one or two, so the package warns when the
labels of a column look alike. Two labels look alike when they have the same
*skeleton*: the text in Unicode's compatibility composition (NFKC, which makes
the composed and decomposed ``"é"`` one string, and full-width letters
ordinary ones), without invisible formatting characters (zero-width spaces and
joiners, the byte-order mark, the soft hyphen), with runs of white space made
one space and the ends stripped, and with the Cyrillic and Greek capital and
small letters that are drawn like Latin ones read as those Latin letters.
Letter case is kept: ``"a"`` and ``"A"`` do not look alike.
"""

import unicodedata

__all__ = ["lookalike_sets", "skeleton"]

# Cyrillic and Greek letters drawn like Latin ones in common fonts
_HOMOGLYPHS = str.maketrans(
    {
        **dict(zip("АВЕЅІЈКМНОРСТХУ", "ABESIJKMHOPCTXY")),
        **dict(zip("аеѕіјорсухԁһԛԝ", "aesijopcyxdhqw")),
        **dict(zip("ΑΒΕΖΗΙΚΜΝΟΡΤΥΧ", "ABEZHIKMNOPTYX")),
        **dict(zip("οαιν", "oaiv")),
    }
)


def skeleton(text):
    """The text a label reads as on screen, for comparing labels.

    Parameters
    ----------
    text : str
        A label.

    Returns
    -------
    str
        The label in NFKC form, without invisible formatting characters
        (Unicode category Cf), white space collapsed and stripped, and
        Latin-looking Cyrillic and Greek letters read as Latin ones.

    Examples
    --------
    >>> skeleton("A\\u200b ") == skeleton("\\u0410") == "A"
    True
    >>> skeleton("e\\u0301") == skeleton("\\u00e9")
    True
    """
    text = unicodedata.normalize("NFKC", text)
    text = "".join(c for c in text if unicodedata.category(c) != "Cf")
    return " ".join(text.split()).translate(_HOMOGLYPHS)


def lookalike_sets(labels):
    """The sets of distinct text labels that share a skeleton.

    Parameters
    ----------
    labels : iterable
        Distinct labels; those that are not text are ignored.

    Returns
    -------
    list of list of str
        Each set of two or more labels that look alike, in the order given.

    Examples
    --------
    >>> lookalike_sets(["A", "B", "A ", "\\u0410", "b"])
    [['A', 'A ', 'А']]
    """
    by_skeleton = {}
    for label in labels:
        if isinstance(label, str):
            by_skeleton.setdefault(skeleton(label), []).append(label)
    return [same for same in by_skeleton.values() if len(same) > 1]
