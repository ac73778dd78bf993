package jobs

import (
	"fmt"
	"strconv"
	"strings"
)

// branchPrefix starts every agent branch (docs/design.md §4.8).
const branchPrefix = "agent/issue-"

// AgentBranch is the branch of issue n: agent/issue-N.
func AgentBranch(n int) string { return fmt.Sprintf("%s%d", branchPrefix, n) }

// ParseAgentBranch is AgentBranch's inverse: the issue number of a branch
// named agent/issue-N with N a positive decimal without leading zeros, and
// false for any other name.
func ParseAgentBranch(ref string) (int, bool) {
	digits, ok := strings.CutPrefix(ref, branchPrefix)
	if !ok || digits == "" || digits[0] == '0' {
		return 0, false
	}
	for _, c := range digits {
		if c < '0' || c > '9' {
			return 0, false
		}
	}
	n, err := strconv.Atoi(digits)
	if err != nil || n <= 0 {
		return 0, false
	}
	return n, true
}
