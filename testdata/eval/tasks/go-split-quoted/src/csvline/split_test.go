package csvline

import (
	"reflect"
	"testing"
)

func TestSplitPlain(t *testing.T) {
	got := Split("a,b,,c")
	if want := []string{"a", "b", "", "c"}; !reflect.DeepEqual(got, want) {
		t.Fatalf("Split = %q, want %q", got, want)
	}
}
