package units

import "testing"

func TestHiddenParseSizeBinary(t *testing.T) {
	cases := map[string]int64{"512MiB": 512 << 20, "1KiB": 1024, "2GiB": 2 << 30, "7 KiB": 7168, "1MB": 1000000}
	for in, want := range cases {
		if got, err := ParseSize(in); err != nil || got != want {
			t.Errorf("ParseSize(%q) = %d, %v, want %d", in, got, err, want)
		}
	}
	for _, bad := range []string{"1kib", "1KIB", "1TiB"} {
		if _, err := ParseSize(bad); err == nil {
			t.Errorf("ParseSize(%q) succeeded", bad)
		}
	}
}
