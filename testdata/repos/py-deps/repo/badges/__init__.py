"""Name badges."""


def badge(name):
    """The text of a name badge."""
    return "Hello, " + name
