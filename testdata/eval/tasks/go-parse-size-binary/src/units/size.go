// Package units parses human-readable quantities.
package units

import (
	"fmt"
	"strconv"
	"strings"
)

var multipliers = map[string]int64{
	"":   1,
	"B":  1,
	"KB": 1000,
	"MB": 1000 * 1000,
	"GB": 1000 * 1000 * 1000,
}

// ParseSize parses a size such as "512KB" into bytes.
func ParseSize(s string) (int64, error) {
	s = strings.TrimSpace(s)
	i := strings.IndexFunc(s, func(r rune) bool { return r < '0' || r > '9' })
	if i < 0 {
		i = len(s)
	}
	n, err := strconv.ParseInt(s[:i], 10, 64)
	if err != nil {
		return 0, fmt.Errorf("size %q: %w", s, err)
	}
	m, ok := multipliers[strings.TrimSpace(s[i:])]
	if !ok {
		return 0, fmt.Errorf("size %q: unknown unit", s)
	}
	return n * m, nil
}
