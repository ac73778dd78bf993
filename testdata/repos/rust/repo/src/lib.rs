//! Small statistics.

/// The median of `values`, or `None` when there are none.
pub fn median(values: &[i64]) -> Option<f64> {
    if values.is_empty() {
        return None;
    }
    let mut sorted = values.to_vec();
    sorted.sort();
    Some(sorted[sorted.len() / 2] as f64)
}

/// `value` limited to `lo..=hi`.
pub fn clamp(value: i64, lo: i64, hi: i64) -> i64 {
    value.max(lo).min(hi)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn median_odd() {
        assert_eq!(median(&[3, 1, 2]), Some(2.0));
    }

    #[test]
    fn median_empty() {
        assert_eq!(median(&[]), None);
    }

    #[test]
    fn clamps() {
        assert_eq!(clamp(12, 0, 10), 10);
        assert_eq!(clamp(-1, 0, 10), 0);
    }
}
