import unittest

from durations import parse_duration


class HiddenUnitsTest(unittest.TestCase):
    def test_days_and_seconds(self):
        self.assertEqual(parse_duration("2d"), 172800)
        self.assertEqual(parse_duration("45s"), 45)
        self.assertEqual(parse_duration("1d2h3m4s"), 93784)
        self.assertEqual(parse_duration("1h30m"), 5400)

    def test_order_and_junk_still_rejected(self):
        for bad in ["", "5x", "3m1h", "4s1d", "1d1d"]:
            with self.assertRaises(ValueError, msg=bad):
                parse_duration(bad)


if __name__ == "__main__":
    unittest.main()
