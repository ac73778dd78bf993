package findings

import "testing"

const rustLib1 = `
/// Says hello.
pub fn greet(name: &str) -> String {
    format!("hello {name}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hello() {
        assert_eq!(greet("a"), "hello a");
    }

    #[test]
    fn hello_b() {
        assert_eq!(greet("b"), "hello b");
    }
}
`

const rustIT1 = `
use greet::greet;

#[test]
fn integration() {
    assert_eq!(greet("c"), "hello c");
}

#[tokio::test]
async fn integration_async() {
    assert!(greet("d").starts_with("hello"));
}
`

func rustCases() map[string]analysisCase {
	return map[string]analysisCase{
		"rust/test removed": {
			files: []File{mod("src/lib.rs", rustLib1, replace(rustLib1, "\n    #[test]\n    fn hello_b() {\n        assert_eq!(greet(\"b\"), \"hello b\");\n    }\n", ""))},
			want:  []string{"tests_removed src/lib.rs:15"},
		},
		"rust/test attribute removed": {
			files: []File{mod("tests/it.rs", rustIT1, replace(rustIT1, "#[test]\nfn integration", "fn integration"))},
			want:  []string{"tests_removed tests/it.rs:3"},
		},
		"rust/new test beside the old ones": {
			files: []File{mod("src/lib.rs", rustLib1, replace(rustLib1, "    }\n}\n", "    }\n\n    #[test]\n    fn empty() {\n        assert_eq!(greet(\"\"), \"hello \");\n    }\n}\n"))},
		},
		"rust/test moved to an integration test": {
			files: []File{
				mod("src/lib.rs", rustLib1, replace(rustLib1, "\n    #[test]\n    fn hello_b() {\n        assert_eq!(greet(\"b\"), \"hello b\");\n    }\n", "")),
				add("tests/b.rs", "use greet::greet;\n\n#[test]\nfn hello_b() {\n    assert_eq!(greet(\"b\"), \"hello b\");\n}\n"),
			},
		},
		"rust/test file deleted": {
			files: []File{del("tests/it.rs", rustIT1)},
			want:  []string{"tests_removed tests/it.rs:0"},
		},
		"rust/ignore added": {
			files: []File{mod("src/lib.rs", rustLib1, replace(rustLib1, "    #[test]\n    fn hello() {", "    #[test]\n    #[ignore = \"flaky\"]\n    fn hello() {"))},
			want:  []string{"test_skipped src/lib.rs:11"},
		},
		"rust/cfg added to the test module": {
			files: []File{mod("src/lib.rs", rustLib1, replace(rustLib1, "#[cfg(test)]\nmod tests", "#[cfg(test)]\n#[cfg(feature = \"slow\")]\nmod tests"))},
			want:  []string{"test_skipped src/lib.rs:7"},
		},
		"rust/ignore on an async test": {
			files: []File{mod("tests/it.rs", rustIT1, replace(rustIT1, "#[tokio::test]\n", "#[tokio::test]\n#[ignore]\n"))},
			want:  []string{"test_skipped tests/it.rs:9"},
		},
		"rust/expected value edited, code unchanged": {
			files: []File{mod("src/lib.rs", rustLib1, replace(rustLib1, `"hello b");`, `"hello B");`))},
			want:  []string{"assertion_changed src/lib.rs:17"},
		},
		"rust/assertion loosened, code unchanged": {
			files: []File{mod("tests/it.rs", rustIT1, replace(rustIT1, `assert_eq!(greet("c"), "hello c");`, `let _ = greet("c");`))},
			want:  []string{"assertion_changed tests/it.rs:5"},
		},
		"rust/expected value edited with the code in the same file": {
			files: []File{mod("src/lib.rs", rustLib1, replace(rustLib1, `hello `, `hi `))},
		},
		"rust/only tests changed for a bug": {
			title: "greet panics on non-ASCII names",
			files: []File{mod("src/lib.rs", rustLib1, replace(rustLib1, "    }\n}\n", "    }\n\n    #[test]\n    fn accents() {\n        assert_eq!(greet(\"é\"), \"hello é\");\n    }\n}\n"))},
			want:  []string{"only_tests_changed src/lib.rs:19"},
		},
		"rust/lib test = false": {
			files: []File{mod("Cargo.toml", "[package]\nname = \"greet\"\nversion = \"0.1.0\"\n", "[package]\nname = \"greet\"\nversion = \"0.1.0\"\n\n[lib]\ntest = false\n")},
			want:  []string{"test_skipped Cargo.toml:6"},
		},
		"rust/autotests off": {
			files: []File{mod("Cargo.toml", "[package]\nname = \"greet\"\nversion = \"0.1.0\"\n", "[package]\nname = \"greet\"\nversion = \"0.1.0\"\nautotests = false\n")},
			want:  []string{"test_skipped Cargo.toml:4"},
		},
	}
}

func TestRust(t *testing.T) { golden(t, "rust", runCases(t, rustCases())) }
