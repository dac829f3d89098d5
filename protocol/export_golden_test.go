package protocol_test

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"testing"

	"github.com/parleyforum/parley/protocol"
	"github.com/parleyforum/parley/storage"
	"github.com/parleyforum/parley/storage/storagetest"
)

var updateGolden = flag.Bool("update-golden", false, "rewrite protocol/testdata/export/*, the exports of the golden forum")

// The export formats are streamed from the database (§ 19); what they write is what the
// whole-graph builders wrote before, byte for byte: testdata/export/ holds the exports of the
// golden forum as those builders wrote them, with what differs from one run to the next —
// times, signatures, the realm's key, the hash that covers them — replaced by placeholders.
// The JSON formats (json, aif) carry their proof last now; it is compared apart (TestExport-
// ProofIsLast), and left out here.
func TestExportsEqualTheGoldenOnes(t *testing.T) {
	storagetest.Each(t, func(t *testing.T, db *storage.DB) {
		f := newGoldenForum(t, db)
		for _, format := range []string{"json", "graphml", "dot", "aif"} {
			for _, thread := range []struct {
				name string
				id   int64
			}{{"forum", 0}, {"thread", f.generalID}} {
				name := format + "." + thread.name
				t.Run(name, func(t *testing.T) {
					var buf bytes.Buffer
					if err := f.svc.WriteExport(context.Background(), thread.id, format, &buf); err != nil {
						t.Fatal(err)
					}
					got := normalizeExport(buf.Bytes())
					path := filepath.Join("testdata", "export", name)
					if *updateGolden {
						if err := os.WriteFile(path, got, 0o644); err != nil {
							t.Fatal(err)
						}
						return
					}
					want, err := os.ReadFile(path)
					if err != nil {
						t.Fatal(err)
					}
					if !bytes.Equal(got, want) {
						t.Errorf("the %s export differs from %s:\n%s", name, path, firstDifference(got, want))
					}
				})
			}
		}
	})
}

// goldenForum is the dataset's forum (every kind of row, signed, unsigned and version 1
// stances, a hidden message, rooms) and claims of two threads whose ids interleave, so that
// the order of a forum's graph — anchors by id, then claims by id — differs from thread order.
type goldenForum struct {
	*datasetForum
	generalID int64
}

func newGoldenForum(t *testing.T, db *storage.DB) *goldenForum {
	t.Helper()
	f := &goldenForum{datasetForum: newDatasetForum(t, db)}
	alice, bob := agent("alice", "read,write"), agent("bob", "read,write")
	mustClaim(t, f.svc, bob, "assert", jsonOf(map[string]any{"thread": f.general, "statement": "a \"quoted\" <statement> & a\nsecond line\twith a tab",
		"evidence": json.RawMessage(proof)}))
	later := mustClaim(t, f.svc, alice, "assert", jsonOf(map[string]any{"thread": f.inResearch, "statement": "research finds more",
		"evidence": json.RawMessage(proof), "supersedes": []string{f.researchClaim}}))
	mustClaim(t, f.svc, bob, "attest", jsonOf(map[string]any{"claim": later.ID, "note": "seen it", "evidence": json.RawMessage(proof)}))
	mustClaim(t, f.svc, alice, "assert", jsonOf(map[string]any{"thread": f.general, "statement": "the port is 8082",
		"evidence": json.RawMessage(proof), "supersedes": []string{f.newer}}))
	id, ok := protocol.ParseIDString(f.datasetForum.general, "th_")
	if !ok {
		t.Fatal(f.datasetForum.general)
	}
	f.generalID = id
	return f
}

var (
	rfc3339Times = regexp.MustCompile(`\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?(Z|[+-]\d\d:\d\d)`)
	aifTimes     = regexp.MustCompile(`\d{4}-\d\d-\d\d \d\d:\d\d:\d\d`)
	multikeys    = regexp.MustCompile(`z6Mk[1-9A-HJ-NP-Za-km-z]{40,}`)
	proofValues  = regexp.MustCompile(`z[1-9A-HJ-NP-Za-km-z]{80,}`)
	base64Sigs   = regexp.MustCompile(`[A-Za-z0-9+/]{86}==`)
	sha256Hex    = regexp.MustCompile(`[0-9a-f]{64}`)
)

// normalizeExport replaces what differs between two runs over the same forum: times,
// signatures and hashes by placeholders, each key by a name in order of first appearance;
// and leaves out a JSON export's own proof (its place is checked apart).
func normalizeExport(data []byte) []byte {
	data = withoutExportProof(data)
	data = rfc3339Times.ReplaceAll(data, []byte("TIME"))
	data = aifTimes.ReplaceAll(data, []byte("TIME"))
	keys := map[string]string{}
	data = multikeys.ReplaceAllFunc(data, func(k []byte) []byte {
		name, ok := keys[string(k)]
		if !ok {
			name = fmt.Sprintf("KEY%d", len(keys)+1)
			keys[string(k)] = name
		}
		return []byte(name)
	})
	data = proofValues.ReplaceAll(data, []byte("PROOFVALUE"))
	data = base64Sigs.ReplaceAll(data, []byte("SIGNATURE"))
	return sha256Hex.ReplaceAll(data, []byte("SHA256"))
}

// withoutExportProof is an indented JSON export without its top-level member "proof", wherever
// it stands; other documents come back as they are.
func withoutExportProof(data []byte) []byte {
	start := bytes.Index(data, []byte("\n  \"proof\": {\n"))
	if start < 0 || !bytes.HasPrefix(data, []byte("{\n")) {
		return data
	}
	end := bytes.Index(data[start+1:], []byte("\n  }"))
	if end < 0 {
		return data
	}
	end += start + 1 + len("\n  }")
	out := append([]byte{}, data[:start]...)
	rest := data[end:]
	if bytes.HasPrefix(rest, []byte(",")) {
		rest = rest[1:] // it stood before another member
	} else {
		out = bytes.TrimSuffix(out, []byte(",")) // it was the last member
	}
	return append(out, rest...)
}

// firstDifference shows where two documents part, with a little of each.
func firstDifference(got, want []byte) string {
	i := 0
	for i < len(got) && i < len(want) && got[i] == want[i] {
		i++
	}
	from := max(0, i-200)
	return fmt.Sprintf("at byte %d of %d (want %d):\ngot  …%s…\nwant …%s…", i, len(got), len(want),
		got[from:min(len(got), i+200)], want[from:min(len(want), i+200)])
}
