// Command vulndb builds a Go vulnerability database that govulncheck reads with
// -db file://DIR, from the OSV files of one pinned version of the golang.org/x/vulndb module
// fetched through the Go module proxy. vuln.go.dev itself need not be reachable: the proxy
// serves the database's source, and this turns it into the layout of
// https://go.dev/security/vuln/database#api:
//
//	DIR/index/db.json       {"modified": …}
//	DIR/index/modules.json  [{"path": …, "vulns": [{"id": …, "modified": …}]}]
//	DIR/ID/<id>.json        each OSV entry as published
//
// Usage: go run ./tests/vulncheck/vulndb -version v0.0.0-… -out bin/vulndb
package main

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"time"
)

// module is the vulnerability database's source repository, as the module proxy serves it.
const module = "golang.org/x/vulndb"

func main() {
	version := flag.String("version", "", "the `VERSION` of "+module+" to build from (a pseudo-version)")
	out := flag.String("out", "", "the `DIR` to write the database to; replaced when it exists")
	flag.Parse()
	if *version == "" || *out == "" || flag.NArg() > 0 {
		fmt.Fprintln(os.Stderr, "usage: vulndb -version VERSION -out DIR")
		os.Exit(2)
	}
	if err := build(*version, *out); err != nil {
		fmt.Fprintln(os.Stderr, "vulndb:", err)
		os.Exit(1)
	}
}

func build(version, out string) error {
	src, err := download(version)
	if err != nil {
		return err
	}
	entries, err := readEntries(filepath.Join(src, "data", "osv"))
	if err != nil {
		return err
	}
	if len(entries) == 0 {
		return fmt.Errorf("%s@%s has no OSV entries in data/osv", module, version)
	}
	published, err := commitTime(version)
	if err != nil {
		return err
	}
	if err := os.RemoveAll(out); err != nil {
		return err
	}
	if err := write(out, entries, published); err != nil {
		return err
	}
	fmt.Printf("vulndb: %d entries of %s@%s in %s\n", len(entries), module, version, out)
	return nil
}

// download fetches the module through the go command (and so through GOPROXY, with its
// checksum verified) and returns the directory it was extracted to.
func download(version string) (string, error) {
	gocmd := os.Getenv("GO") // the Makefile's go command, which may not be on PATH
	if gocmd == "" {
		gocmd = "go"
	}
	cmd := exec.Command(gocmd, "mod", "download", "-json", module+"@"+version)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	raw, err := cmd.Output()
	var got struct{ Dir, Error string }
	if jerr := json.Unmarshal(raw, &got); jerr == nil && got.Error != "" {
		return "", fmt.Errorf("go mod download %s@%s: %s", module, version, got.Error)
	}
	if err != nil {
		return "", fmt.Errorf("go mod download %s@%s: %v: %s", module, version, err, stderr.String())
	}
	if got.Dir == "" {
		return "", fmt.Errorf("go mod download %s@%s named no directory", module, version)
	}
	return got.Dir, nil
}

// entry is what the index needs of an OSV entry; the entry itself is copied as it is.
type entry struct {
	ID       string    `json:"id"`
	Modified time.Time `json:"modified"`
	Affected []struct {
		Package struct {
			Name string `json:"name"`
		} `json:"package"`
	} `json:"affected"`
	raw []byte
}

func readEntries(dir string) ([]entry, error) {
	names, err := filepath.Glob(filepath.Join(dir, "*.json"))
	if err != nil {
		return nil, err
	}
	entries := make([]entry, 0, len(names))
	for _, name := range names {
		raw, err := os.ReadFile(name)
		if err != nil {
			return nil, err
		}
		var e entry
		if err := json.Unmarshal(raw, &e); err != nil {
			return nil, fmt.Errorf("%s: %v", name, err)
		}
		if e.ID+".json" != filepath.Base(name) {
			return nil, fmt.Errorf("%s holds the entry %q: the file must be named after its id", name, e.ID)
		}
		e.raw = raw
		entries = append(entries, e)
	}
	return entries, nil
}

// pseudoTime is the commit time inside a pseudo-version (v0.0.0-20261105234957-e22db6528018).
var pseudoTime = regexp.MustCompile(`-(\d{14})-[0-9a-f]{12}$`)

// commitTime is when the pinned version was committed. The OSV files in the repository carry
// no modification time of their own (the zero time; the published database sets it), so the
// database as a whole is dated by its commit.
func commitTime(version string) (time.Time, error) {
	m := pseudoTime.FindStringSubmatch(version)
	if m == nil {
		return time.Time{}, fmt.Errorf("%s is not a pseudo-version; pin %s by a commit's pseudo-version", version, module)
	}
	return time.Parse("20060102150405", m[1])
}

type moduleVulns struct {
	Path  string      `json:"path"`
	Vulns []vulnIndex `json:"vulns"`
}

// vulnIndex leaves out the optional "fixed" version: without it govulncheck reads every
// entry of a module and decides from the entry's own ranges, which is always right.
type vulnIndex struct {
	ID       string    `json:"id"`
	Modified time.Time `json:"modified"`
}

func write(out string, entries []entry, published time.Time) error {
	if err := os.MkdirAll(filepath.Join(out, "ID"), 0o755); err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Join(out, "index"), 0o755); err != nil {
		return err
	}
	modified := published
	byModule := map[string]*moduleVulns{}
	for _, e := range entries {
		if err := os.WriteFile(filepath.Join(out, "ID", e.ID+".json"), e.raw, 0o644); err != nil {
			return err
		}
		if e.Modified.After(modified) {
			modified = e.Modified
		}
		for _, a := range e.Affected {
			path := a.Package.Name
			if path == "" {
				return fmt.Errorf("entry %s names an affected package without a name", e.ID)
			}
			m := byModule[path]
			if m == nil {
				m = &moduleVulns{Path: path}
				byModule[path] = m
			}
			if !slices.ContainsFunc(m.Vulns, func(v vulnIndex) bool { return v.ID == e.ID }) {
				m.Vulns = append(m.Vulns, vulnIndex{ID: e.ID, Modified: e.Modified})
			}
		}
	}
	modules := make([]*moduleVulns, 0, len(byModule))
	for _, m := range byModule {
		slices.SortFunc(m.Vulns, func(a, b vulnIndex) int { return strings.Compare(a.ID, b.ID) })
		modules = append(modules, m)
	}
	slices.SortFunc(modules, func(a, b *moduleVulns) int { return strings.Compare(a.Path, b.Path) })
	if err := writeJSON(filepath.Join(out, "index", "modules.json"), modules); err != nil {
		return err
	}
	return writeJSON(filepath.Join(out, "index", "db.json"), struct {
		Modified time.Time `json:"modified"`
	}{modified.UTC()})
}

func writeJSON(name string, v any) error {
	raw, err := json.Marshal(v)
	if err != nil {
		return err
	}
	return os.WriteFile(name, raw, 0o644)
}
