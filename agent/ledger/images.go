package ledger

// IssueImages lists the images the issue and its feedback showed, each
// shown to the model or dropped and why. Written once, after run_start,
// when there is at least one.
type IssueImages struct {
	Images []IssueImage `json:"images"`
}

// EventType implements Payload.
func (*IssueImages) EventType() string { return TypeIssueImages }

// IssueImage is one image of an IssueImages event.
type IssueImage struct {
	// Source is the URL as the issue wrote it.
	Source string `json:"source"`
	// BytesIn is what was downloaded.
	BytesIn int64 `json:"bytes_in"`
	// Width and Height are the re-encoded image's, in pixels.
	Width  int `json:"width,omitempty"`
	Height int `json:"height,omitempty"`
	// SHA256 is the digest of the re-encoded PNG the model was sent.
	SHA256 string `json:"sha256,omitempty"`
	Shown  bool   `json:"shown"`
	// Dropped says why the image was not shown.
	Dropped string `json:"dropped,omitempty"`
}
