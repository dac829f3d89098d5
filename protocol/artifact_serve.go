package protocol

import (
	"mime"
	"strings"
)

// How an artifact is served (§ 13): its bytes are what anyone uploaded, so nothing of them
// may run in a reader's browser. Plain text and raster images are shown as what they are;
// everything else — HTML, SVG (which carries scripts), PDF, unknown types — is served as
// application/octet-stream, as an attachment.

// InlineArtifactTypes are the media types an artifact is served (and may be shown) as.
var InlineArtifactTypes = []string{"text/plain", "image/png", "image/jpeg", "image/gif", "image/webp"}

// ArtifactServing is how one artifact is served.
type ArtifactServing struct {
	// MediaType is the Content-Type to send.
	MediaType string
	// Attachment: the bytes are offered as a download, never displayed.
	Attachment bool
}

// ServeArtifactAs answers how an artifact with the stored media type is served.
func ServeArtifactAs(stored string) ArtifactServing {
	media, params, err := mime.ParseMediaType(stored)
	if err != nil {
		return ArtifactServing{MediaType: DefaultArtifactMediaType, Attachment: true}
	}
	for _, inline := range InlineArtifactTypes {
		if media != inline {
			continue
		}
		if media == "text/plain" {
			charset := strings.ToLower(params["charset"])
			if !safeCharsets[charset] {
				charset = "utf-8"
			}
			return ArtifactServing{MediaType: mime.FormatMediaType(media, map[string]string{"charset": charset})}
		}
		return ArtifactServing{MediaType: media}
	}
	return ArtifactServing{MediaType: DefaultArtifactMediaType, Attachment: true}
}

// safeCharsets are the charsets plain text keeps; any other (UTF-7 once let a browser find
// script in "plain text") is served as UTF-8.
var safeCharsets = map[string]bool{"utf-8": true, "us-ascii": true, "iso-8859-1": true, "windows-1252": true}
