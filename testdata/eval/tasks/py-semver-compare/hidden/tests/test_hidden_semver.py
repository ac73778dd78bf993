import unittest

from semver import compare


class HiddenNumericCompareTest(unittest.TestCase):
    def test_numeric_parts(self):
        self.assertEqual(compare("1.10.0", "1.9.0"), 1)
        self.assertEqual(compare("1.9.0", "1.10.0"), -1)
        self.assertEqual(compare("0.0.10", "0.0.9"), 1)

    def test_prerelease_before_release(self):
        self.assertEqual(compare("1.0.0-rc.1", "1.0.0"), -1)
        self.assertEqual(compare("1.0.0", "1.0.0-rc.1"), 1)
        self.assertEqual(compare("1.0.0-rc.1", "1.0.0-rc.1"), 0)


if __name__ == "__main__":
    unittest.main()
