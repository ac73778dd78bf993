package units

import "testing"

func TestParseSizeDecimal(t *testing.T) {
	cases := map[string]int64{"12": 12, "512KB": 512000, "10MB": 10000000, "1GB": 1000000000, "3 B": 3}
	for in, want := range cases {
		if got, err := ParseSize(in); err != nil || got != want {
			t.Errorf("ParseSize(%q) = %d, %v, want %d", in, got, err, want)
		}
	}
	if _, err := ParseSize("5XB"); err == nil {
		t.Error("ParseSize(5XB) succeeded")
	}
}
