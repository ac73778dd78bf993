"""Text case helpers."""


def title(s):
    """Capitalise the first letter of every word."""
    return " ".join(w[:1].upper() + w[1:] for w in s.split(" "))
