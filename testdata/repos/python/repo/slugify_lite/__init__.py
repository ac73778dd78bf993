"""Turns titles into URL slugs."""

import re


def slugify(title):
    """Lowercase words of title joined by single dashes."""
    return re.sub(r"[^a-z0-9]", "-", title.lower())
