package findings

import "testing"

const goCode1 = `
package greet

// Hello greets.
func Hello(name string) string { return "hello " + name }
`

const goTest1 = `
package greet

import "testing"

func TestHello(t *testing.T) {
	if got := Hello("a"); got != "hello a" {
		t.Errorf("got %q", got)
	}
}

func TestTable(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"a", "hello a"},
		{"b", "hello b"},
	} {
		if got := Hello(c.in); got != c.want {
			t.Errorf("got %q", got)
		}
	}
}
`

func goCases() map[string]analysisCase {
	return map[string]analysisCase{
		"go/test removed": {
			files: []File{mod("greet_test.go", goTest1, replace(goTest1, `
func TestTable(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"a", "hello a"},
		{"b", "hello b"},
	} {
		if got := Hello(c.in); got != c.want {
			t.Errorf("got %q", got)
		}
	}
}
`, ""))},
			want: []string{"tests_removed greet_test.go:11"},
		},
		"go/new test beside the old ones": {
			files: []File{mod("greet_test.go", goTest1, goTest1+`
func TestEmpty(t *testing.T) {
	if Hello("") != "hello " {
		t.Fatal("empty")
	}
}
`)},
		},
		"go/test moved to another file": {
			files: []File{
				mod("greet_test.go", goTest1, replace(goTest1, "func TestHello(t *testing.T) {\n\tif got := Hello(\"a\"); got != \"hello a\" {\n\t\tt.Errorf(\"got %q\", got)\n\t}\n}\n", "")),
				add("hello_test.go", "package greet\n\nimport \"testing\"\n\n// TestHello moved here.\nfunc TestHello(t *testing.T) {\n    if got := Hello(\"a\"); got != \"hello a\" {\n        t.Errorf(\"got %q\", got)\n    }\n}\n"),
			},
		},
		"go/test renamed with the same body": {
			files: []File{mod("greet_test.go", goTest1, replace(goTest1, "TestHello(", "TestHelloName("))},
		},
		"go/test renamed and edited": {
			files: []File{mod("greet_test.go", goTest1, replace(replace(goTest1, "TestTable(", "TestTableCases("), `{"b", "hello b"}`, `{"b", "hello B"}`))},
			want:  []string{"assertion_changed greet_test.go:14"},
		},
		"go/test renamed longer and extended": {
			files: []File{mod("greet_test.go", goTest1, replace(goTest1, "func TestHello(t *testing.T) {\n\tif got := Hello(\"a\"); got != \"hello a\" {\n\t\tt.Errorf(\"got %q\", got)\n\t}\n}\n",
				"func TestHelloAndBye(t *testing.T) {\n\tif got := Hello(\"a\"); got != \"hello a\" {\n\t\tt.Errorf(\"got %q\", got)\n\t}\n\tif got := Hello(\"z\"); got == \"\" {\n\t\tt.Error(\"empty\")\n\t}\n\tif got := Hello(\"y\"); got == \"\" {\n\t\tt.Error(\"empty\")\n\t}\n}\n"))},
		},
		"go/test replaced by a different one": {
			files: []File{mod("greet_test.go", goTest1, replace(goTest1, "func TestHello(t *testing.T) {\n\tif got := Hello(\"a\"); got != \"hello a\" {\n\t\tt.Errorf(\"got %q\", got)\n\t}\n}\n",
				"func TestBye(t *testing.T) {\n\tif Bye() == \"\" {\n\t\tt.Fatal(\"no bye\")\n\t}\n}\n"))},
			want: []string{"tests_removed greet_test.go:5"},
		},
		"go/test reformatted": {
			files: []File{mod("greet_test.go", goTest1, replace(goTest1, "		{\"a\", \"hello a\"},\n\t\t{\"b\", \"hello b\"},\n", "		{\"a\", \"hello a\"}, {\"b\", \"hello b\"},\n"))},
		},
		"go/test file deleted": {
			files: []File{del("greet_test.go", goTest1)},
			want:  []string{"tests_removed greet_test.go:0"},
		},
		"go/test file emptied": {
			files: []File{mod("greet_test.go", goTest1, "package greet\n")},
			want:  []string{"tests_removed greet_test.go:0"},
		},
		"go/test file renamed away": {
			files: []File{del("greet_test.go", goTest1), add("greet_test.go.off", goTest1)},
			want:  []string{"tests_removed greet_test.go:0"},
		},
		"go/test renamed so go test no longer runs it": {
			files: []File{mod("greet_test.go", goTest1, replace(goTest1, "func TestHello(t", "func testHello(t"))},
			want:  []string{"tests_removed greet_test.go:5"},
		},
		"go/t.Skip added": {
			files: []File{mod("greet_test.go", goTest1, replace(goTest1, "func TestHello(t *testing.T) {\n", "func TestHello(t *testing.T) {\n\tt.Skip(\"flaky\")\n"))},
			want:  []string{"test_skipped greet_test.go:6"},
		},
		"go/t.Skip added with a code change": {
			files: []File{
				mod("greet.go", goCode1, replace(goCode1, `"hello "`, `"hi "`)),
				mod("greet_test.go", goTest1, replace(goTest1, "func TestTable(t *testing.T) {\n", "func TestTable(t *testing.T) {\n\tif testing.Short() {\n\t\tt.SkipNow()\n\t}\n")),
			},
			want: []string{"test_skipped greet_test.go:13"},
		},
		"go/skip that was there before": {
			files: []File{
				mod("greet.go", goCode1, replace(goCode1, `"hello "`, `"hi "`)),
				mod("greet_test.go", replace(goTest1, "{\n\tif got", "{\n\tt.Skip(\"later\")\n\tif got"), replace(replace(goTest1, "{\n\tif got", "{\n\tt.Skip(\"later\")\n\tif got"), "hello a", "hi a")),
			},
		},
		"go/build constraint added": {
			files: []File{mod("greet_test.go", goTest1, "//go:build integration\n\n"+goTest1)},
			want:  []string{"tests_removed greet_test.go:0"},
		},
		"go/build constraint added that still builds here": {
			files: []File{mod("greet_test.go", goTest1, "//go:build !windows\n\n"+goTest1)},
			want:  []string{"test_skipped greet_test.go:1"},
		},
		"go/test file moved to a directory go skips": {
			files: []File{del("greet_test.go", goTest1), add("_x/greet_test.go", goTest1)},
			want:  []string{"tests_removed greet_test.go:0"},
		},
		"go/test file renamed for another system": {
			files: []File{del("greet_test.go", goTest1), add("greet_windows_test.go", goTest1)},
			want:  []string{"tests_removed greet_test.go:0"},
		},
		"go/one test moved to a file for another system": {
			files: []File{
				mod("greet_test.go", goTest1, replace(goTest1, "func TestHello(t *testing.T) {\n\tif got := Hello(\"a\"); got != \"hello a\" {\n\t\tt.Errorf(\"got %q\", got)\n\t}\n}\n", "")),
				add("hello_windows_test.go", "package greet\n\nimport \"testing\"\n\nfunc TestHello(t *testing.T) {\n\tif got := Hello(\"a\"); got != \"hello a\" {\n\t\tt.Errorf(\"got %q\", got)\n\t}\n}\n"),
			},
			want: []string{"tests_removed greet_test.go:5"},
		},
		"go/example loses its output comment": {
			files: []File{mod("example_test.go", "package greet\n\nimport \"fmt\"\n\nfunc ExampleHello() {\n\tfmt.Println(Hello(\"a\"))\n\t// Output: hello a\n}\n", "package greet\n\nimport \"fmt\"\n\nfunc ExampleHello() {\n\tfmt.Println(Hello(\"a\"))\n}\n")},
			want:  []string{"tests_removed example_test.go:5"},
		},
		"go/TestMain added": {
			files: []File{add("main_test.go", "package greet\n\nimport (\n\t\"os\"\n\t\"testing\"\n)\n\nfunc TestMain(m *testing.M) { os.Exit(0) }\n")},
			want:  []string{"harness_changed main_test.go:8"},
		},
		"go/TestMain changed, init added": {
			files: []File{mod("main_test.go",
				"package greet\n\nimport (\n\t\"os\"\n\t\"testing\"\n)\n\n// TestMain runs the tests.\nfunc TestMain(m *testing.M) { os.Exit(m.Run()) }\n",
				"package greet\n\nimport (\n\t\"os\"\n\t\"testing\"\n)\n\nfunc init() { os.Exit(0) }\n\n// TestMain runs the tests, it says.\nfunc TestMain(m *testing.M) { os.Exit(0) }\n")},
			want: []string{"harness_changed main_test.go:8", "harness_changed main_test.go:11"},
		},
		"go/TestMain reworded only": {
			files: []File{mod("main_test.go",
				"package greet\n\nimport (\n\t\"os\"\n\t\"testing\"\n)\n\nfunc TestMain(m *testing.M) { os.Exit(m.Run()) }\n",
				"package greet\n\nimport (\n\t\"os\"\n\t\"testing\"\n)\n\nfunc TestMain(m *testing.M) {\n\tos.Exit(m.Run()) // run them all\n}\n")},
		},
		"go/TestMain taking a T is a test, not a hook": {
			files: []File{add("main_test.go", "package greet\n\nimport \"testing\"\n\nfunc TestMain(t *testing.T) {}\n")},
		},
		"go/init in code under test is no test hook": {
			files: []File{mod("greet.go", goCode1, goCode1+"\nfunc init() {}\n")},
		},
		"go/build constraint removed": {
			files: []File{mod("greet_test.go", "//go:build integration\n\n"+goTest1, goTest1)},
		},
		"go/expected value edited, code unchanged": {
			files: []File{mod("greet_test.go", goTest1, replace(goTest1, `{"b", "hello b"}`, `{"b", "hello c"}`))},
			want:  []string{"assertion_changed greet_test.go:14"},
		},
		"go/expected value edited with the code": {
			files: []File{
				mod("greet.go", goCode1, replace(goCode1, `"hello "`, `"hi "`)),
				mod("greet_test.go", goTest1, replace(goTest1, "hello", "hi")),
			},
		},
		"go/code change only in a comment does not count": {
			files: []File{
				mod("greet.go", goCode1, replace(goCode1, "// Hello greets.", "// Hello greets warmly.")),
				mod("greet_test.go", goTest1, replace(goTest1, `{"b", "hello b"}`, `{"b", "hello c"}`)),
			},
			want: []string{"assertion_changed greet_test.go:14"},
		},
		"go/assertion deleted, code unchanged": {
			files: []File{mod("greet_test.go", goTest1, replace(goTest1, "\tif got := Hello(\"a\"); got != \"hello a\" {\n\t\tt.Errorf(\"got %q\", got)\n\t}\n", "\t_ = Hello(\"a\")\n"))},
			want:  []string{"assertion_changed greet_test.go:6"},
		},
		"go/early return added, code unchanged": {
			files: []File{mod("greet_test.go", goTest1, replace(goTest1, "func TestHello(t *testing.T) {\n", "func TestHello(t *testing.T) {\n\tif true { return }\n"))},
			want:  []string{"assertion_changed greet_test.go:6"},
		},
		"go/closure with a return is no early return": {
			files: []File{mod("greet_test.go", goTest1, replace(goTest1, "func TestHello(t *testing.T) {\n", "func TestHello(t *testing.T) {\n\tname := func() string {\n\t\treturn \"a\"\n\t}\n\t_ = name\n"))},
		},
		"go/table case added, feature issue": {
			files: []File{mod("greet_test.go", goTest1, replace(goTest1, "\t\t{\"b\", \"hello b\"},\n", "\t\t{\"b\", \"hello b\"},\n\t\t{\"c\", \"hello c\"},\n"))},
		},
		"go/only tests changed for a bug": {
			title: "Hello crashes on an empty name",
			files: []File{mod("greet_test.go", goTest1, replace(goTest1, "\t\t{\"b\", \"hello b\"},\n", "\t\t{\"b\", \"hello b\"},\n\t\t{\"\", \"hello \"},\n"))},
			want:  []string{"only_tests_changed greet_test.go:15"},
		},
		"go/only tests changed for an issue about tests": {
			title: "Flaky test TestHello fails on CI",
			files: []File{mod("greet_test.go", goTest1, replace(goTest1, "\t\t{\"b\", \"hello b\"},\n", "\t\t{\"b\", \"hello b\"},\n\t\t{\"\", \"hello \"},\n"))},
		},
		"go/bug fixed in code and test": {
			title: "Hello crashes on an empty name",
			files: []File{
				mod("greet.go", goCode1, replace(goCode1, `"hello "`, `"hello, "`)),
				mod("greet_test.go", goTest1, replace(goTest1, "hello", "hello,")),
			},
		},
		"go/test file too large to read is not a removal": {
			files: []File{{Path: "greet_test.go", Base: src(goTest1), Unread: true}},
		},
		"go/code file too large to read counts as changed code": {
			files: []File{
				{Path: "greet.go", Base: src(goCode1), Unread: true},
				mod("greet_test.go", goTest1, replace(goTest1, `{"b", "hello b"}`, `{"b", "hello c"}`)),
			},
		},
		"go/golden file edited, code unchanged": {
			files: []File{mod("testdata/hello.golden", "hello a\nhello b\n", "hello a\nhello c\n")},
			want:  []string{"assertion_changed testdata/hello.golden:2"},
		},
		"go/golden file edited with the code": {
			files: []File{
				mod("greet.go", goCode1, replace(goCode1, `"hello "`, `"hi "`)),
				mod("testdata/hello.golden", "hello a\n", "hi a\n"),
			},
		},
		"go/tests in testdata are not tests": {
			files: []File{del("testdata/src/a_test.go", goTest1)},
		},
	}
}

func TestGo(t *testing.T) { golden(t, "go", runCases(t, goCases())) }
