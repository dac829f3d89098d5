package web

import (
	"encoding/json"
	"regexp"

	"github.com/gofiber/fiber/v2"

	"github.com/parleyforum/parley/protocol"
	"github.com/parleyforum/parley/views"
)

// threadPage is GET /threads/{id}: the message tree, the state with its origin and
// confirmation, whose turn it is and the timeline; ?reply=msg_N opens the reply form under
// that message.
func (p *pages) threadPage(r *pageRequest) error {
	id, ok := threadParam(r)
	if !ok {
		return r.notFound()
	}
	from := p.liveFrom(r, id) // before the page is read: its stream repeats nothing it misses
	tp, err := p.readThread(r, id)
	if err != nil {
		return p.refusedRead(r, err)
	}
	tp.LiveFrom = from
	if m := r.c.Query("reply"); messageKey.MatchString(m) {
		tp.ReplyTo = m
	}
	return r.render(fiber.StatusOK, views.ThreadPageView(*tp))
}

// messageKey is the form of a message id the pages put into element ids.
var messageKey = regexp.MustCompile(`^msg_[0-9]{1,19}$`)

// readThread reads a thread with its messages and every event, as the reader's actor.
func (p *pages) readThread(r *pageRequest, id string) (*views.ThreadPage, error) {
	ctx, a := r.c.UserContext(), r.actor()
	read, err := p.svc.ReadThread(ctx, a, threadInput(id, nil))
	if err != nil {
		return nil, err
	}
	tp := &views.ThreadPage{Thread: read.Thread, Messages: read.Messages, Claims: read.Claims, BodyMaxChars: p.svc.Limits().BodyMaxChars}
	if tp.LockLabels, err = p.svc.LockLabels(ctx, a, authors(read.Messages)); err != nil {
		return nil, err
	}
	// The labels of the whole thread: the page shows the first page of its claims.
	if tp.Grounded, err = p.svc.GroundedLabelsOf(ctx, a, read.Thread.ID); err != nil {
		return nil, err
	}
	if tp.Artifacts, err = p.artifactPreviews(r, read.Claims); err != nil {
		return nil, err
	}
	extra := map[string]any{}
	for {
		evs, err := p.svc.ReadEvents(ctx, a, threadInput(read.Thread.ID, extra))
		if err != nil {
			return nil, err
		}
		tp.Events = append(tp.Events, evs.Events...)
		if !evs.More {
			return tp, nil
		}
		extra["since"] = evs.Cursor
	}
}

// authors are the identities that wrote in the tree, each once.
func authors(tree []*protocol.MessageView) []string {
	seen := map[string]bool{}
	var out []string
	var walk func([]*protocol.MessageView)
	walk = func(ms []*protocol.MessageView) {
		for _, m := range ms {
			if !seen[m.From.Identity] {
				seen[m.From.Identity] = true
				out = append(out, m.From.Identity)
			}
			walk(m.Replies)
		}
	}
	walk(tree)
	return out
}

// threadInput is the JSON input of an operation on thread id, with more fields.
func threadInput(id string, more map[string]any) []byte {
	return operationInput("thread", id, more)
}

// operationInput is the JSON input of an operation on the thread or claim id, with more
// fields.
func operationInput(field, id string, more map[string]any) []byte {
	in := map[string]any{field: id}
	for k, v := range more {
		in[k] = v
	}
	return jsonInput(in)
}

// jsonInput is an operation's JSON input.
func jsonInput(in map[string]any) []byte {
	raw, _ := json.Marshal(in) // strings and ids only: cannot fail
	return raw
}

// refusedRead answers a read that the operation layer refused: a thread that does not exist
// (or an id of the wrong form) is a 404 page; faults go to the error handler.
func (p *pages) refusedRead(r *pageRequest, err error) error {
	if refusal, ok := protocol.AsError(err); ok {
		switch refusal.Reason {
		case protocol.ReasonNotFound, protocol.ReasonInvalidBody:
			return r.notFound()
		}
		return r.message(refusal.Status, "page.forbidden", "reason."+string(refusal.Reason))
	}
	return err
}
