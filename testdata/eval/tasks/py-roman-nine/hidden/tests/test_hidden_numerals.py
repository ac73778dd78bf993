import unittest

from numerals import to_roman


class HiddenSubtractiveTest(unittest.TestCase):
    def test_subtractive_nines(self):
        self.assertEqual(to_roman(9), "IX")
        self.assertEqual(to_roman(90), "XC")
        self.assertEqual(to_roman(900), "CM")
        self.assertEqual(to_roman(1994), "MCMXCIV")
        self.assertEqual(to_roman(3999), "MMMCMXCIX")


if __name__ == "__main__":
    unittest.main()
