package secrets

import (
	"strings"
	"testing"
)

func benchText(b *testing.B, line string) {
	s, _ := Default()
	text := strings.Repeat(line, 200)
	b.SetBytes(int64(len(text)))
	for b.Loop() {
		s.Scan("x", text)
	}
}
func BenchmarkTmpToken(b *testing.B) {
	benchText(b, "internal/pkg/server/handler_0042.go:17: func HandleRequest(ctx context.Context, token string) error { return nil }\n")
}
func BenchmarkTmpPlain(b *testing.B) {
	benchText(b, "internal/pkg/server/handler_0042.go:17: func HandleRequest(ctx context.Context, name string) error { return nil }\n")
}
func BenchmarkTmpB64(b *testing.B) {
	benchText(b, "QVdTX0FDQ0VTU19LRVlfSUQ9QUtJQVozTVBMRTdRWDRSVDJXVkIKREJfUEFTU1dPUkQ9aHVudGVy\n")
}
