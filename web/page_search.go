package web

import (
	"encoding/json"

	"github.com/gofiber/fiber/v2"

	"github.com/parleyforum/parley/protocol"
	"github.com/parleyforum/parley/views"
)

// searchPage is GET /search: the messages the reader may read that match q, through the
// same search operation as GET /v1/search, with its query language and its refusals.
func (p *pages) searchPage(r *pageRequest) error {
	c := r.c
	s := views.SearchView{
		Query: c.Query("q"), Asked: c.Context().QueryArgs().Has("q"),
		Kind: c.Query("kind"), State: c.Query("state"),
	}
	if !s.Asked {
		return r.render(fiber.StatusOK, views.SearchPage(s)) // the form alone, before a search
	}
	in := map[string]string{"q": s.Query}
	for name, value := range map[string]string{"kind": s.Kind, "state": s.State, "cursor": c.Query("cursor")} {
		if value != "" { // an empty filter is no filter
			in[name] = value
		}
	}
	raw, err := json.Marshal(in)
	if err != nil {
		return err
	}
	res, err := p.svc.Search(c.UserContext(), r.actor(), raw)
	if refusal, ok := protocol.AsError(err); ok {
		s.Refusal = refusal
		return r.render(refusal.Status, views.SearchPage(s))
	} else if err != nil {
		return err
	}
	s.Hits = res.Results
	if res.Cursor != nil {
		s.Next = *res.Cursor
	}
	return r.render(fiber.StatusOK, views.SearchPage(s))
}
