"""Roman numerals."""

_VALUES = [
    (1000, "M"),
    (500, "D"),
    (400, "CD"),
    (100, "C"),
    (50, "L"),
    (40, "XL"),
    (10, "X"),
    (5, "V"),
    (4, "IV"),
    (1, "I"),
]


def to_roman(n):
    """Return n (1..3999) in Roman numerals."""
    if not 0 < n < 4000:
        raise ValueError("out of range: %r" % n)
    out = []
    for value, letters in _VALUES:
        while n >= value:
            out.append(letters)
            n -= value
    return "".join(out)
