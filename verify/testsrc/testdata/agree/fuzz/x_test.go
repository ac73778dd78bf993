// want: FuzzAdd
package fuzz

import "testing"

func FuzzAdd(f *testing.F) {
	f.Add(1)
	f.Fuzz(func(t *testing.T, i int) {})
}

func Fuzzy(f *testing.F) {}
