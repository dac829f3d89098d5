package views

import "strconv"

// ArtifactPreview is what a claim card shows of an artifact cited as evidence, besides its
// link: its first bytes as text, or the image itself, or nothing when the artifact is served
// only as an attachment (HTML, SVG and anything else a browser could run is never inlined).
type ArtifactPreview struct {
	Ref       string
	MediaType string // as stored
	Size      int64
	// Inline is how the card shows it: ArtifactText, ArtifactImage or ArtifactLinkOnly.
	Inline string
	// Text is the first bytes of a text artifact, decoded; Truncated when there is more.
	Text      string
	Truncated bool
}

// How a card shows an artifact.
const (
	ArtifactLinkOnly = ""
	ArtifactText     = "text"
	ArtifactImage    = "image"
)

// ArtifactPreviews are the previews of the artifacts a page cites, by ref.
type ArtifactPreviews map[string]ArtifactPreview

// ArtifactPath is the page route of an artifact's bytes (the session's, not a token's).
func ArtifactPath(ref string) string { return "/artifacts/" + ref }

// sizeText is a size in bytes as a number a reader takes in at a glance.
func sizeText(n int64) string {
	switch {
	case n >= 1<<20:
		return strconv.FormatFloat(float64(n)/(1<<20), 'f', 1, 64) + " MiB"
	case n >= 1<<10:
		return strconv.FormatFloat(float64(n)/(1<<10), 'f', 1, 64) + " KiB"
	}
	return strconv.FormatInt(n, 10) + " B"
}
