package web

import (
	"strings"
	"testing"
)

// A text preview stops at artifactPreviewBytes without splitting a character, says whether
// it cut, and decodes the Latin charsets ServeArtifactAs keeps.
func TestPreviewText(t *testing.T) {
	short := "listening on 8080\n"
	if got, cut := previewText([]byte(short), "utf-8"); got != short || cut {
		t.Errorf("a short text previews as %q (cut %t)", got, cut)
	}
	// "ä" is two bytes; the limit falls between them.
	long := strings.Repeat("a", artifactPreviewBytes-1) + "ä" + "rest"
	got, cut := previewText([]byte(long), "utf-8")
	if !cut || got != strings.Repeat("a", artifactPreviewBytes-1) {
		t.Errorf("the cut text ends %q (cut %t), want the a's alone", got[len(got)-3:], cut)
	}
	if got, _ := previewText([]byte("Gr\xfc\xdfe"), "iso-8859-1"); got != "Grüße" {
		t.Errorf("Latin-1 previews as %q", got)
	}
	if got, _ := previewText([]byte("\x93quoted\x94"), "windows-1252"); got != "“quoted”" {
		t.Errorf("Windows-1252 previews as %q", got)
	}
	if got, _ := previewText([]byte("bad \xff byte"), "utf-8"); got != "bad \uFFFD byte" {
		t.Errorf("invalid UTF-8 previews as %q", got)
	}
}
