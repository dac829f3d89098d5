package protocol_test

import (
	"bytes"
	"context"
	"encoding/json"
	"encoding/xml"
	"fmt"
	"strings"
	"testing"

	"github.com/parleyforum/parley/graph"
	"github.com/parleyforum/parley/protocol"
	"github.com/parleyforum/parley/storage"
	"github.com/parleyforum/parley/storage/storagetest"
)

// An imported claim carries its origin in every graph format (§ 14), exported and read as the
// graph: the JSON graph's node, GraphML's and DOT's attributes origin_realm, origin_claim and
// origin_thread, AIF's I-node; this forum's own claims carry none.
func TestImportedOriginInEveryGraphFormat(t *testing.T) {
	storagetest.Each(t, func(t *testing.T, db *storage.DB) {
		ctx := context.Background()
		beta, _, _ := betaWithAlphasClaim(t, db)
		own := mustClaim(t, beta, agent("carol", "read,write"), "assert", `{"thread":"`+
			send(t, beta, agent("carol", "read,write"), envelope("ask", "", "And here?")).Thread.ID+`","statement":"our own","evidence":`+proof+`}`)
		var imported *protocol.ClaimView
		for _, id := range []string{"cl_1", "cl_2"} {
			if c := mustClaim(t, beta, reader, "read", `{"claim":"`+id+`"}`); c.Origin != nil {
				imported = c
			}
		}
		if imported == nil || imported.Origin.Realm != "alpha" || imported.Origin.Claim == "" || imported.Origin.Thread == "" {
			t.Fatalf("the imported claim's origin: %+v", imported)
		}
		want := graph.Origin{Realm: imported.Origin.Realm, Claim: imported.Origin.Claim, Thread: imported.Origin.Thread}

		documents := map[string][]byte{}
		for _, format := range []string{"json", "graphml", "dot", "aif"} {
			var buf bytes.Buffer
			if err := beta.WriteExport(ctx, 0, format, &buf); err != nil {
				t.Fatal(err)
			}
			documents["export "+format] = buf.Bytes()
			res, err := beta.Graph(ctx, reader, []byte(`{"format":"`+format+`"}`))
			if err != nil {
				t.Fatal(err)
			}
			if format == "json" {
				data, _ := json.Marshal(res)
				documents["graph json"] = data
				continue
			}
			_, doc, err := res.Document()
			if err != nil {
				t.Fatal(err)
			}
			documents["graph "+format] = doc
		}
		for name, doc := range documents {
			origins, err := originsIn(strings.Fields(name)[1], doc)
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			if got := origins[imported.ID]; got != want {
				t.Errorf("%s: the imported claim %s has the origin %+v, want %+v", name, imported.ID, got, want)
			}
			if got, ok := origins[own.ID]; !ok || got != (graph.Origin{}) {
				t.Errorf("%s: this forum's claim %s has the origin %+v (found %v)", name, own.ID, got, ok)
			}
		}
	})
}

// originsIn reads each claim's origin from a document of format: claim id → origin (empty
// for a claim without one).
func originsIn(format string, doc []byte) (map[string]graph.Origin, error) {
	out := map[string]graph.Origin{}
	switch format {
	case "json":
		var g struct {
			Nodes []graph.Node `json:"nodes"`
		}
		if err := json.Unmarshal(doc, &g); err != nil {
			return nil, err
		}
		for _, n := range g.Nodes {
			if n.Type == graph.TypeClaim {
				out[n.ID] = graph.Origin{Realm: n.OriginRealm(), Claim: n.OriginClaim(), Thread: n.OriginThread()}
			}
		}
	case "aif":
		var a struct {
			Nodes []graph.AIFNode `json:"nodes"`
		}
		if err := json.Unmarshal(doc, &a); err != nil {
			return nil, err
		}
		for _, n := range a.Nodes {
			if n.Type == "I" && strings.HasPrefix(n.NodeID, "cl_") {
				out[n.NodeID] = graph.Origin{}
				if n.Origin != nil {
					out[n.NodeID] = *n.Origin
				}
			}
		}
	case "graphml":
		var g struct {
			Keys []struct {
				ID   string `xml:"id,attr"`
				Name string `xml:"attr.name,attr"`
			} `xml:"key"`
			Nodes []struct {
				ID   string `xml:"id,attr"`
				Data []struct {
					Key   string `xml:"key,attr"`
					Value string `xml:",chardata"`
				} `xml:"data"`
			} `xml:"graph>node"`
		}
		if err := xml.Unmarshal(doc, &g); err != nil {
			return nil, err
		}
		names := map[string]string{}
		for _, k := range g.Keys {
			names[k.ID] = k.Name
		}
		for _, n := range g.Nodes {
			if !strings.HasPrefix(n.ID, "cl_") {
				continue
			}
			var o graph.Origin
			for _, d := range n.Data {
				switch names[d.Key] {
				case "origin_realm":
					o.Realm = d.Value
				case "origin_claim":
					o.Claim = d.Value
				case "origin_thread":
					o.Thread = d.Value
				}
			}
			out[n.ID] = o
		}
	case "dot":
		for _, line := range strings.Split(string(doc), "\n") {
			id, rest, ok := strings.Cut(strings.TrimSpace(line), " [")
			if !ok || !strings.HasPrefix(id, `"cl_`) {
				continue
			}
			var o graph.Origin
			for attr, field := range map[string]*string{"origin_realm": &o.Realm, "origin_claim": &o.Claim, "origin_thread": &o.Thread} {
				if _, value, found := strings.Cut(rest, ", "+attr+`="`); found {
					*field, _, _ = strings.Cut(value, `"`)
				}
			}
			out[strings.Trim(id, `"`)] = o
		}
	default:
		return nil, fmt.Errorf("no reader for %s", format)
	}
	return out, nil
}
