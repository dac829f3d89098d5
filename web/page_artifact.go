package web

import (
	"github.com/parleyforum/parley/protocol"
)

// artifactPage is GET /artifacts/{ref}: an artifact's bytes for a human reading the pages,
// whose session cookie the token route /v1/artifacts/{ref} does not take. The same operation
// reads it as the reader's actor, and serveArtifact serves it exactly as the API does:
// HTML, SVG and anything else a browser could run only as an attachment.
func (p *pages) artifactPage(r *pageRequest) error {
	art, err := p.svc.GetArtifact(r.c.UserContext(), r.actor(), jsonInput(map[string]any{"ref": r.c.Params("ref")}))
	if err != nil {
		return p.refusedRead(r, err)
	}
	exchangeOf(r.c).ended(art.ArtifactInfo, nil)
	return serveArtifact(r.c, art)
}

// artifactRefs are the refs of the artifacts the claims cite, in their evidence and in the
// evidence of what was said for and against them, each once.
func artifactRefs(claims []*protocol.ClaimView) []string {
	seen := map[string]bool{}
	var refs []string
	add := func(items []protocol.Evidence) {
		for _, e := range items {
			if e.Kind == "artifact" && !seen[e.Ref] {
				seen[e.Ref] = true
				refs = append(refs, e.Ref)
			}
		}
	}
	for _, c := range claims {
		add(c.Evidence)
		for _, group := range [][]*protocol.StanceView{c.Attestations, c.Refutations, c.Verifications} {
			for _, s := range group {
				add(s.Evidence)
			}
		}
	}
	return refs
}
