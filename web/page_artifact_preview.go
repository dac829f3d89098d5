package web

import (
	"mime"
	"strings"
	"unicode/utf8"

	"golang.org/x/text/encoding/charmap"

	"github.com/parleyforum/parley/protocol"
	"github.com/parleyforum/parley/views"
)

// artifactPreviewBytes is how much of a text artifact a claim card shows before "show all":
// enough for a log's telling lines, little enough that a thread of many stays readable.
const artifactPreviewBytes = 4 << 10

// artifactPreviews reads the artifacts the claims cite, as the reader's actor, and makes
// their previews. Only what protocol.ServeArtifactAs serves inline is shown inline: plain
// text as text (escaped by the template like any text), raster images as images; an
// artifact the store no longer has is shown as its link alone.
func (p *pages) artifactPreviews(r *pageRequest, claims []*protocol.ClaimView) (views.ArtifactPreviews, error) {
	refs := artifactRefs(claims)
	if len(refs) == 0 {
		return nil, nil
	}
	out := make(views.ArtifactPreviews, len(refs))
	for _, ref := range refs {
		art, err := p.svc.GetArtifact(r.c.UserContext(), r.actor(), jsonInput(map[string]any{"ref": ref}))
		if refusal, ok := protocol.AsError(err); ok && refusal.Reason == protocol.ReasonNotFound {
			continue
		} else if err != nil {
			return nil, err
		}
		out[ref] = artifactPreview(art)
	}
	return out, nil
}

// artifactPreview is the preview of one artifact, as the serving rules allow.
func artifactPreview(art *protocol.Artifact) views.ArtifactPreview {
	pv := views.ArtifactPreview{Ref: art.Ref, MediaType: art.MediaType, Size: art.Size}
	serving := protocol.ServeArtifactAs(art.MediaType)
	if serving.Attachment {
		return pv
	}
	media, params, _ := mime.ParseMediaType(serving.MediaType)
	if !strings.HasPrefix(media, "text/") {
		pv.Inline = views.ArtifactImage
		return pv
	}
	pv.Inline = views.ArtifactText
	pv.Text, pv.Truncated = previewText(art.Content, params["charset"])
	return pv
}

// previewText decodes the first artifactPreviewBytes of plain text in its charset (one of
// the few ServeArtifactAs keeps), cut at a character, never inside one; truncated says
// whether there was more.
func previewText(content []byte, charset string) (text string, truncated bool) {
	head := content
	if len(head) > artifactPreviewBytes {
		head, truncated = head[:artifactPreviewBytes], true
	}
	switch charset {
	case "iso-8859-1":
		decoded, _ := charmap.ISO8859_1.NewDecoder().Bytes(head)
		return string(decoded), truncated
	case "windows-1252":
		decoded, _ := charmap.Windows1252.NewDecoder().Bytes(head)
		return string(decoded), truncated
	}
	if truncated { // drop the character the cut split, if it split one
		for i := len(head) - 1; i >= 0 && i >= len(head)-utf8.UTFMax; i-- {
			if utf8.RuneStart(head[i]) {
				if !utf8.FullRune(head[i:]) {
					head = head[:i]
				}
				break
			}
		}
	}
	return strings.ToValidUTF8(string(head), "\uFFFD"), truncated
}
