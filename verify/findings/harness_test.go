package findings

import (
	"slices"
	"strings"
	"testing"
)

// TestHarnessChangedBlocks: the five shapes of issue 40's "the code under
// test writes its own verdict" each yield a blocking harness_changed on
// the file that changed the harness, and nothing else of that kind.
func TestHarnessChangedBlocks(t *testing.T) {
	const assertGo = "package assert\n\nimport \"testing\"\n\nfunc Equal(t *testing.T, got, want int) {\n\tif got != want {\n\t\tt.Fatalf(\"got %d, want %d\", got, want)\n\t}\n}\n"
	cases := map[string]struct {
		files []File
		want  []string
	}{
		"forged go test framing in a TestMain": {
			files: []File{add("main_test.go", "package calc\n\nimport (\n\t\"fmt\"\n\t\"os\"\n\t\"testing\"\n)\n\nfunc TestMain(m *testing.M) {\n\tfmt.Println(\"\\x16--- PASS: TestAdd (0.00s)\")\n\tos.Exit(0)\n}\n")},
			want:  []string{"harness_changed main_test.go:9"},
		},
		"a root pytest.py": {
			files: []File{add("pytest.py", "import sys\nsys.exit(0)\n")},
			want:  []string{"harness_changed pytest.py:1"},
		},
		"a conftest hook imported from another module": {
			files: []File{add("conftest.py", "from tests.hooks import pytest_collection_modifyitems\n"), add("tests/hooks.py", "def pytest_collection_modifyitems(items):\n    items[:] = []\n")},
			want:  []string{"harness_changed conftest.py:1", "harness_changed tests/hooks.py:1"},
		},
		"a no-op'd assertion helper": {
			files: []File{mod("internal/assert/assert.go", assertGo, "package assert\n\nimport \"testing\"\n\nfunc Equal(t *testing.T, got, want int) {}\n")},
			want:  []string{"harness_changed internal/assert/assert.go:5"},
		},
		"a vendored copy of a test dependency": {
			files: []File{add("vendor/github.com/stretchr/testify/assert/assertions.go", "package assert\n\nfunc Equal(...any) bool { return true }\n")},
			want:  []string{"harness_changed vendor/github.com/stretchr/testify/assert/assertions.go:1"},
		},
		"an unread .npmrc symlink": {
			files: []File{{Path: ".npmrc", Unread: true}},
			want:  []string{"harness_changed .npmrc:0"},
		},
		"a deleted conftest": {
			files: []File{del("conftest.py", "def pytest_configure(config):\n    pass\n")},
		},
		"code under test and its test": {
			files: []File{mod("calc.go", "package calc\n\nfunc Add(a, b int) int { return a - b }\n", "package calc\n\nfunc Add(a, b int) int { return a + b }\n"),
				add("calc_test.go", "package calc\n\nimport \"testing\"\n\nfunc TestAdd(t *testing.T) {\n\tif Add(1, 2) != 3 {\n\t\tt.Fatal()\n\t}\n}\n")},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			var got []string
			for _, f := range Analyze(Input{Files: tc.files, IssueTitle: "x", Read: readAll(tc.files)}) {
				if f.Kind == HarnessChanged {
					got = append(got, where([]Finding{f})...)
					if !Blocks(f.Kind) || !strings.Contains(f.Detail, f.Path) {
						t.Errorf("finding %+v does not block or name its file", f)
					}
				}
			}
			if !slices.Equal(got, tc.want) {
				t.Errorf("harness findings %q, want %q", got, tc.want)
			}
		})
	}
}
