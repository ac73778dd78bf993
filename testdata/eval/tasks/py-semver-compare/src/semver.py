"""Compare version strings like 1.2.3 and 1.2.3-rc.1."""


def compare(a, b):
    """Return -1, 0 or 1 as version a is older than, equal to or newer than b."""
    if a == b:
        return 0
    return -1 if a < b else 1
