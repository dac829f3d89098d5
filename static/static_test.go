package static

import (
	"encoding/json"
	"io/fs"
	"os"
	"strings"
	"testing"
)

func TestStylesheet(t *testing.T) {
	b, err := fs.ReadFile(FS(), "css/parley.css")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), "body") {
		t.Errorf("css/parley.css (%d bytes) does not style the body", len(b))
	}
}

// TestVendoredFilesArePresent fails for a tree where `make assets` has not run: such a build
// would serve its pages without htmx.
func TestVendoredFilesArePresent(t *testing.T) {
	if err := Check(); err != nil {
		t.Fatal(err)
	}
}

// TestHtmxIsThePinnedVersion catches a copy left over from before package.json changed.
func TestHtmxIsThePinnedVersion(t *testing.T) {
	raw, err := os.ReadFile("../package.json")
	if err != nil {
		t.Fatal(err)
	}
	var pkg struct {
		Dependencies map[string]string `json:"dependencies"`
	}
	if err := json.Unmarshal(raw, &pkg); err != nil {
		t.Fatalf("package.json: %v", err)
	}
	pinned := pkg.Dependencies["htmx.org"]
	if pinned == "" || strings.ContainsAny(pinned, "^~<>*x ") {
		t.Fatalf("package.json pins htmx.org to %q, want an exact version", pinned)
	}
	js, err := fs.ReadFile(FS(), "vendor/htmx.min.js")
	if err != nil {
		t.Fatalf("%v: run make assets", err)
	}
	if !strings.Contains(string(js), `version:"`+pinned+`"`) {
		t.Errorf("static/vendor/htmx.min.js is not htmx %s, the version package.json pins: run make assets", pinned)
	}
}

// TestSSEExtensionIsThePinnedVersion catches a copy of htmx's SSE extension other than the
// one package.json pins. The minified file names no version, so it is compared with the
// file of the package npm installed, whose package.json must name the pinned version.
func TestSSEExtensionIsThePinnedVersion(t *testing.T) {
	var pkg, installed struct {
		Version      string            `json:"version"`
		Dependencies map[string]string `json:"dependencies"`
	}
	for path, into := range map[string]any{"../package.json": &pkg, "../node_modules/htmx-ext-sse/package.json": &installed} {
		raw, err := os.ReadFile(path)
		if err != nil {
			t.Fatalf("%v: run make assets", err)
		}
		if err := json.Unmarshal(raw, into); err != nil {
			t.Fatalf("%s: %v", path, err)
		}
	}
	pinned := pkg.Dependencies["htmx-ext-sse"]
	if pinned == "" || strings.ContainsAny(pinned, "^~<>*x ") {
		t.Fatalf("package.json pins htmx-ext-sse to %q, want an exact version", pinned)
	}
	if installed.Version != pinned {
		t.Fatalf("node_modules holds htmx-ext-sse %s, package.json pins %s: run make assets", installed.Version, pinned)
	}
	want, err := os.ReadFile("../node_modules/htmx-ext-sse/dist/sse.min.js")
	if err != nil {
		t.Fatal(err)
	}
	got, err := fs.ReadFile(FS(), "vendor/htmx-ext-sse.min.js")
	if err != nil {
		t.Fatalf("%v: run make assets", err)
	}
	if string(got) != string(want) {
		t.Errorf("static/vendor/htmx-ext-sse.min.js is not htmx-ext-sse %s, the version package.json pins: run make assets", pinned)
	}
}
