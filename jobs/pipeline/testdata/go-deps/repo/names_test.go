package names

import "testing"

func TestTitle(t *testing.T) {
	if got := Title("ada lovelace"); got != "Ada Lovelace" {
		t.Fatalf("Title(%q) = %q, want %q", "ada lovelace", got, "Ada Lovelace")
	}
}
