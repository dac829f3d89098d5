package web

import (
	"encoding/json"

	"github.com/gofiber/fiber/v2"

	"github.com/parleyforum/parley/protocol"
	"github.com/parleyforum/parley/views"
)

// threadList is GET /: the threads, the newest activity first, filtered by state and by
// whether a human still has to confirm them.
func (p *pages) threadList(r *pageRequest) error {
	c := r.c
	l := views.ThreadList{State: c.Query("state"), Unconfirmed: c.Query("unconfirmed") == "1"}
	var res *protocol.ListThreadsResult
	var err error
	if c.Query("order") == protocol.OrderAttention {
		// § 17: what needs a moderator first; through list_threads, with its checks.
		l.Order = protocol.OrderAttention
		in := map[string]string{"order": l.Order}
		for name, value := range map[string]string{"state": l.State, "cursor": c.Query("cursor")} {
			if value != "" {
				in[name] = value
			}
		}
		raw, _ := json.Marshal(in)
		res, err = p.svc.ListThreads(c.UserContext(), r.actor(), raw)
	} else {
		res, err = p.svc.Browse(c.UserContext(), r.actor(), protocol.BrowseQuery{
			State: protocol.State(l.State), Unconfirmed: l.Unconfirmed, Cursor: c.Query("cursor"),
		})
	}
	if refusal, ok := protocol.AsError(err); ok {
		l.Refusal = refusal
		return r.render(refusal.Status, views.ThreadListPage(l))
	} else if err != nil {
		return err
	}
	l.Threads = res.Threads
	if res.Cursor != nil {
		l.Next = *res.Cursor
	}
	return r.render(fiber.StatusOK, views.ThreadListPage(l))
}
