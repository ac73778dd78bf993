package csvline

import (
	"reflect"
	"testing"
)

func TestHiddenSplitQuoted(t *testing.T) {
	cases := map[string][]string{
		`1,"Smith, John",42`:     {"1", "Smith, John", "42"},
		"\"say \"\"hi\"\"\",x":   {`say "hi"`, "x"},
		`"",end`:                 {"", "end"},
		`plain,"a,b,c",` + `"d"`: {"plain", "a,b,c", "d"},
	}
	for in, want := range cases {
		if got := Split(in); !reflect.DeepEqual(got, want) {
			t.Errorf("Split(%q) = %q, want %q", in, got, want)
		}
	}
}
