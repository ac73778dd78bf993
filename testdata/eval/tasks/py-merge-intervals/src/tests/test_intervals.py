import unittest

from intervals import merge_intervals


class MergeTest(unittest.TestCase):
    def test_overlap(self):
        self.assertEqual(merge_intervals([(1, 3), (2, 4)]), [(1, 4)])

    def test_empty(self):
        self.assertEqual(merge_intervals([]), [])


if __name__ == "__main__":
    unittest.main()
