"""Parse durations such as 1h30m."""

import re

_PATTERN = re.compile(r"^(?:(\d+)h)?(?:(\d+)m)?$")


def parse_duration(text):
    """Return the number of seconds in a duration such as "1h30m"."""
    match = _PATTERN.match(text)
    if not text or not match:
        raise ValueError("bad duration: %r" % text)
    hours, minutes = (int(g) if g else 0 for g in match.groups())
    return hours * 3600 + minutes * 60
