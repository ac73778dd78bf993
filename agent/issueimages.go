package agent

import (
	"github.com/patchwright/patchwright/agent/ledger"
	"github.com/patchwright/patchwright/agent/provider"
)

// shownImages are the issue's images the model is sent: the fetched
// ones, when it reads images; none otherwise.
func (r *runner) shownImages() []provider.Image {
	if !r.cfg.ReadsImages {
		return nil
	}
	var out []provider.Image
	for _, im := range r.cfg.Issue.Images {
		if im.Dropped == "" && len(im.PNG) > 0 {
			out = append(out, provider.Image{MediaType: "image/png", Data: im.PNG})
		}
	}
	return out
}

// recordImages writes the issue_images event: each image, shown or not
// and why. Nothing is written for an issue without images.
func (r *runner) recordImages() error {
	if len(r.cfg.Issue.Images) == 0 {
		return nil
	}
	ev := &ledger.IssueImages{}
	for _, im := range r.cfg.Issue.Images {
		rec := ledger.IssueImage{Source: im.Source, BytesIn: im.BytesIn, Width: im.Width, Height: im.Height, SHA256: im.SHA256, Dropped: im.Dropped}
		switch {
		case im.Dropped != "":
		case !r.cfg.ReadsImages:
			rec.Dropped = "the model reads text only"
		default:
			rec.Shown = true
		}
		ev.Images = append(ev.Images, rec)
	}
	_, err := r.cfg.Ledger.Append(ev)
	return err
}
