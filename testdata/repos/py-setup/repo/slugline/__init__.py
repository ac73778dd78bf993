"""Headlines from titles."""

from textcase import title


def headline(s):
    """S title-cased, as a headline."""
    return title(s)
