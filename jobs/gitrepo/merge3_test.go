package gitrepo

import "testing"

func TestMerge3(t *testing.T) {
	l := Labels{Ours: "ours", Base: "base", Theirs: "theirs"}
	for name, tc := range map[string]struct {
		base, ours, theirs, want string
		conflicts                int
	}{
		"only ours changed":   {"a\nb\nc\n", "a\nB\nc\n", "a\nb\nc\n", "a\nB\nc\n", 0},
		"only theirs changed": {"a\nb\nc\n", "a\nb\nc\n", "a\nb\nC\n", "a\nb\nC\n", 0},
		"apart":               {"a\nb\nc\nd\ne\n", "A\nb\nc\nd\ne\n", "a\nb\nc\nd\nE\n", "A\nb\nc\nd\nE\n", 0},
		"same change":         {"a\nb\nc\n", "a\nX\nc\n", "a\nX\nc\n", "a\nX\nc\n", 0},
		"both appended apart": {"a\nb\n", "0\na\nb\n", "a\nb\nz\n", "0\na\nb\nz\n", 0},
		"same line": {"a\nhelo\nc\n", "a\nhello\nc\n", "a\nhi\nc\n",
			"a\n<<<<<<< ours\nhello\n||||||| base\nhelo\n=======\nhi\n>>>>>>> theirs\nc\n", 1},
		"two conflicts": {"a\nb\nc\nd\ne\n", "A\nb\nc\nd\nE\n", "a1\nb\nc\nd\ne1\n",
			"<<<<<<< ours\nA\n||||||| base\na\n=======\na1\n>>>>>>> theirs\nb\nc\nd\n<<<<<<< ours\nE\n||||||| base\ne\n=======\ne1\n>>>>>>> theirs\n", 2},
		"no newline at the end": {"x\ny", "x\nY", "x\nZ",
			"x\n<<<<<<< ours\nY\n||||||| base\ny\n=======\nZ\n>>>>>>> theirs\n", 1},
		"one side deleted the file": {"a\nb\n", "", "a\nB\n",
			"<<<<<<< ours\n||||||| base\na\nb\n=======\na\nB\n>>>>>>> theirs\n", 1},
		"both added the file": {"", "one\n", "two\n",
			"<<<<<<< ours\none\n||||||| base\n=======\ntwo\n>>>>>>> theirs\n", 1},
		"empty everywhere": {"", "", "", "", 0},
	} {
		t.Run(name, func(t *testing.T) {
			got, n := Merge3([]byte(tc.base), []byte(tc.ours), []byte(tc.theirs), l)
			if string(got) != tc.want || n != tc.conflicts {
				t.Errorf("Merge3 = %q with %d conflicts, want %q with %d", got, n, tc.want, tc.conflicts)
			}
			if HasMarkers(got) != (tc.conflicts > 0) {
				t.Errorf("HasMarkers(%q) = %v", got, HasMarkers(got))
			}
		})
	}
}

func TestHasMarkers(t *testing.T) {
	for text, want := range map[string]bool{
		"<<<<<<< HEAD\n":         true,
		"a\n>>>>>>> main\n":      true,
		"|||||||\n":              true,
		"<<<<<<<\r\n":            true,
		"Title\n=======\n":       false,
		"x <<<<<<< y\n":          false,
		"<<<<<<<<<< a heading\n": false,
		"":                       false,
	} {
		if got := HasMarkers([]byte(text)); got != want {
			t.Errorf("HasMarkers(%q) = %v, want %v", text, got, want)
		}
	}
}
