"""Interval helpers for the booking calendar."""


def merge_intervals(intervals):
    """Merge overlapping (start, end) intervals and return them sorted."""
    merged = []
    for start, end in intervals:
        if merged and start < merged[-1][1]:
            last_start, last_end = merged[-1]
            merged[-1] = (last_start, max(last_end, end))
        else:
            merged.append((start, end))
    return merged
