import unittest

from intervals import merge_intervals


class HiddenMergeTest(unittest.TestCase):
    def test_touching_slots_merge(self):
        self.assertEqual(merge_intervals([(1, 2), (2, 3)]), [(1, 3)])

    def test_unsorted_slots_merge(self):
        slots = [(5, 6), (1, 4), (3, 5)]
        self.assertEqual(merge_intervals(slots), [(1, 6)])
        self.assertEqual(slots, [(5, 6), (1, 4), (3, 5)], "input was modified")


if __name__ == "__main__":
    unittest.main()
