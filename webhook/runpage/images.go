package runpage

import (
	"fmt"
	"strings"

	"github.com/patchwright/patchwright/agent/ledger"
)

// showIssueImages lists the issue's images, each shown to the model or
// dropped and why; the URLs are the issue author's text, so cleaned.
func showIssueImages(r ledger.Record) (event, error) {
	p, err := decode[ledger.IssueImages](r)
	shown := 0
	var b strings.Builder
	for _, im := range p.Images {
		if im.Shown {
			shown++
			fmt.Fprintf(&b, "shown: %s (%d bytes in, %d×%d PNG, sha256 %s)\n", im.Source, im.BytesIn, im.Width, im.Height, im.SHA256)
		} else {
			fmt.Fprintf(&b, "not shown: %s (%s)\n", im.Source, im.Dropped)
		}
	}
	e := event{Kind: "images", Title: "Images in the issue",
		Meta: fmt.Sprintf("%d of %d shown to the model", shown, len(p.Images)), Body: newBlock(clean(b.String()))}
	return e, err
}
