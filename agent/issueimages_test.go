package agent

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/patchwright/patchwright/agent/images"
	"github.com/patchwright/patchwright/agent/ledger"
	"github.com/patchwright/patchwright/agent/provider"
)

// issueWithImages has one image fetched and one the fetcher dropped.
func issueWithImages() []images.Image {
	return []images.Image{
		{Source: "https://github.com/user-attachments/assets/1", BytesIn: 120, Width: 4, Height: 3, PNG: []byte("\x89PNG pixels"), SHA256: "abc"},
		{Source: "https://evil.example/x.png", Dropped: "host evil.example is not GitHub's"},
	}
}

func TestIssueImages(t *testing.T) {
	for _, reads := range []bool{true, false} {
		name := map[bool]string{true: "reads images", false: "text only"}[reads]
		t.Run(name, func(t *testing.T) {
			h := newHarness(t, []turn{calls(10, "finish", `{"summary":"done"}`)}, finishTool())
			h.cfg.Issue.Images = issueWithImages()
			h.cfg.ReadsImages = reads
			if _, err := h.run(context.Background()); err != nil {
				t.Fatal(err)
			}
			first := h.model.requests()[0].Messages[0]
			switch {
			case reads && (len(first.Images) != 1 || !bytes.Equal(first.Images[0].Data, []byte("\x89PNG pixels")) || first.Images[0].MediaType != "image/png"):
				t.Errorf("images sent = %+v, want the one fetched PNG", first.Images)
			case reads && !strings.Contains(first.Text, "1 image(s) from the issue follow") || reads && !strings.Contains(first.Text, "1 image(s) in the issue were not shown: they could not be fetched"):
				t.Errorf("first message does not frame the images:\n%s", first.Text)
			case !reads && len(first.Images) != 0:
				t.Errorf("a text-only model was sent %d images", len(first.Images))
			case !reads && !strings.Contains(first.Text, "2 image(s) in the issue were not shown: the model reads text only"):
				t.Errorf("no note for a text-only model:\n%s", first.Text)
			}
			ev := imagesEvent(t, h.events())
			if len(ev.Images) != 2 || ev.Images[0].Shown != reads || ev.Images[1].Shown || ev.Images[0].SHA256 != "abc" ||
				ev.Images[1].Dropped != "host evil.example is not GitHub's" || (!reads && ev.Images[0].Dropped != "the model reads text only") {
				t.Errorf("issue_images = %+v", ev.Images)
			}
		})
	}
}

func TestNoIssueImagesNoEvent(t *testing.T) {
	h := newHarness(t, []turn{calls(10, "finish", `{"summary":"done"}`)}, finishTool())
	h.cfg.ReadsImages = true
	if _, err := h.run(context.Background()); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(h.types(), ledger.TypeIssueImages) || strings.Contains(h.model.requests()[0].Messages[0].Text, "image(s)") {
		t.Errorf("an issue without images mentions them: %s", h.types())
	}
}

func imagesEvent(t *testing.T, recs []ledger.Record) *ledger.IssueImages {
	t.Helper()
	for _, r := range recs {
		if r.Type == ledger.TypeIssueImages {
			p, err := r.Payload()
			if err != nil {
				t.Fatal(err)
			}
			return p.(*ledger.IssueImages)
		}
	}
	t.Fatal("no issue_images event")
	return nil
}

// TestImagesCountTowardsTheWindow: two observations alone stay below the
// compaction threshold; with two images in the first message the request
// is over it, so the older observation is replaced.
func TestImagesCountTowardsTheWindow(t *testing.T) {
	big := strings.Repeat("observation ", 1000) // 12,000 bytes, ~3,000 tokens
	script := []turn{calls(0, "read_file", `{"path":"a"}`), calls(0, "read_file", `{"path":"b"}`), calls(0, "finish", `{"summary":"ok"}`)}
	h := newHarness(t, script, constTool("read_file", big), finishTool())
	h.cfg.Limits.ContextWindow = 10_000 // compaction above 8,000
	h.cfg.Limits.KeepRecent = 1
	h.cfg.ReadsImages = true
	pic := images.Image{Source: "https://github.com/user-attachments/assets/1", PNG: []byte("\x89PNG pixels")}
	h.cfg.Issue.Images = []images.Image{pic, pic}
	if _, err := h.run(context.Background()); err != nil {
		t.Fatal(err)
	}
	reqs := h.model.requests()
	last := reqs[len(reqs)-1]
	if !strings.Contains(h.types(), "compaction") || !strings.HasPrefix(last.Messages[2].ToolResults[0].Content, placeholderPrefix) {
		t.Errorf("images were not counted: no compaction (%s)", h.types())
	}
	if got, want := estimateTokens(provider.Request{Messages: []provider.Message{last.Messages[0]}}), int64(2*imageTokens); got < want {
		t.Errorf("first message estimated at %d tokens, want at least %d for its images", got, want)
	}
}
