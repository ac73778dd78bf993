package testsrc

import (
	"strings"
	"testing"
)

func TestSpliceRustTests(t *testing.T) {
	base := "pub fn f() -> i32 { 1 }\n\n#[cfg(test)]\nmod tests {\n    #[test]\n    fn old() {}\n}\n"
	now := "pub fn f() -> i32 { 2 }\n\n#[cfg(test)]\nmod tests {\n    #[test]\n    fn old() {}\n    #[test]\n    fn new_one() { assert_eq!(super::f(), 2); }\n}\n"
	got, ok := SpliceRustTests([]byte(base), []byte(now))
	if !ok {
		t.Fatal("not spliced")
	}
	want := "pub fn f() -> i32 { 1 }\n\n#[cfg(test)]\nmod tests {\n    #[test]\n    fn old() {}\n    #[test]\n    fn new_one() { assert_eq!(super::f(), 2); }\n}\n"
	if string(got) != want {
		t.Errorf("spliced:\n%s\nwant:\n%s", got, want)
	}
	// A module the original lacks is added; the code stays the original's.
	got, ok = SpliceRustTests([]byte("pub fn f() -> i32 { 1 }\n"), []byte(now))
	if !ok || !strings.HasPrefix(string(got), "pub fn f() -> i32 { 1 }\n") || !strings.Contains(string(got), "fn new_one()") {
		t.Errorf("added module: ok=%v\n%s", ok, got)
	}
	// A loose #[test] function, or no test module, cannot be carried.
	for _, bad := range []string{"#[test]\nfn loose() {}\n#[cfg(test)]\nmod tests {}\n", "pub fn f() {}\n", ""} {
		if _, ok := SpliceRustTests([]byte(base), []byte(bad)); ok {
			t.Errorf("spliced %q", bad)
		}
	}
}
