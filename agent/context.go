package agent

import (
	"fmt"
	"strings"

	"github.com/patchwright/patchwright/agent/provider"
	textcut "github.com/patchwright/patchwright/internal/text"
)

// cutMiddle keeps the head and tail of s within max bytes, with a marker
// where the middle was dropped: the start of an output says what ran, the
// end says how it ended, and both matter more than the middle.
func cutMiddle(s string, max int) string {
	if max <= 0 || len(s) <= max {
		return s
	}
	head, tail, dropped := textcut.Middle(s, max)
	return fmt.Sprintf("%s\n[… %d bytes cut from the middle of this output …]\n%s", head, dropped, tail)
}

// placeholderPrefix starts every observation the compactor replaced, so it
// can tell which are already short.
const placeholderPrefix = "[earlier output of "

func placeholder(tool string, bytes int) string {
	return fmt.Sprintf("%s%s removed to save context (%d bytes); call the tool again if you still need it]", placeholderPrefix, tool, bytes)
}

// estimateTokens guesses a request's size at four bytes a token, which is
// close for code and English and errs large for neither by much.
func estimateTokens(req provider.Request) int64 {
	n := len(req.System)
	for _, t := range req.Tools {
		n += len(t.Name) + len(t.Description) + len(t.Schema)
	}
	for _, m := range req.Messages {
		n += messageBytes(m)
	}
	return int64(n / 4)
}

// imageTokens is what one image is counted as: Anthropic's documented
// ceiling for an image (width×height/750 tokens, scaled down past ~1,600
// tokens or a 1568 px edge). OpenAI's high-detail formula (85 + 170 per
// 512 px tile once the short side is 768 px) comes to at most 765 for the
// same image, so the count errs large there.
const imageTokens = 1600

// messageBytes is a message's size in bytes of text, an image counted as
// the bytes its tokens stand for, so the estimate and compaction see it.
func messageBytes(m provider.Message) int {
	n := len(m.Text) + len(m.Images)*imageTokens*4
	for _, c := range m.ToolCalls {
		n += len(c.ID) + len(c.Name) + len(c.Arguments)
	}
	for _, r := range m.ToolResults {
		n += len(r.CallID) + len(r.Content)
	}
	return n
}

// removed is one observation compact replaced: where it is in the request
// and what it held, for the summary model.
type removed struct {
	msg, result int
	tool        string
	content     string
}

// compact replaces tool observations with placeholders, oldest first, until
// the estimate is at most target tokens. The first message (instructions,
// map and issue) and the last keep messages are never touched. It returns
// the observations it replaced, oldest first.
func compact(req *provider.Request, names map[string]string, keep int, target int64) []removed {
	var out []removed
	last := len(req.Messages) - keep
	for i := 1; i < last; i++ {
		if estimateTokens(*req) <= target {
			break
		}
		m := &req.Messages[i]
		for j := range m.ToolResults {
			r := &m.ToolResults[j]
			if strings.HasPrefix(r.Content, placeholderPrefix) {
				continue
			}
			short := placeholder(names[r.CallID], len(r.Content))
			if len(short) >= len(r.Content) {
				continue
			}
			out = append(out, removed{msg: i, result: j, tool: names[r.CallID], content: r.Content})
			r.Content = short
		}
	}
	return out
}
