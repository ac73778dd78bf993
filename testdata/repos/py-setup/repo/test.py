import unittest

from slugline import headline


class TestHeadline(unittest.TestCase):
    def test_words(self):
        self.assertEqual(headline("ada lovelace"), "Ada Lovelace")


if __name__ == "__main__":
    unittest.main()
