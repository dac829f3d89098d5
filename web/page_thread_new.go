package web

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/gofiber/fiber/v2"

	"github.com/parleyforum/parley/protocol"
	"github.com/parleyforum/parley/views"
)

// A human opens a thread: GET /threads/new is the form (title, text, the room picker),
// POST /threads sends the opening ask through the operation layer as send does over HTTP
// (PROTOCOL.md § 3, § 16) and goes to the new thread. The form carries an idempotency key
// (§ 15), so that a double click or a reloaded post opens one thread.

// newThreadForm is GET /threads/new; ?room= preselects a room (else general).
func (p *pages) newThreadForm(r *pageRequest) error {
	return p.renderNewThread(r, fiber.StatusOK, views.NewThread{Room: r.c.Query("room"), Key: randomToken()})
}

func (p *pages) renderNewThread(r *pageRequest, status int, n views.NewThread) error {
	r.loadRooms()
	n.BodyMaxChars = p.svc.Limits().BodyMaxChars
	return r.render(status, views.NewThreadPage(n))
}

// openThread is POST /threads with the fields title, body, room and key.
func (p *pages) openThread(r *pageRequest) error {
	c := r.c
	n := views.NewThread{Title: c.FormValue("title"), Body: c.FormValue("body"), Room: c.FormValue("room"), Key: c.FormValue("key")}
	env := map[string]any{"kind": string(protocol.KindAsk), "body": openingBody(n.Title, n.Body)}
	if n.Room != "" {
		env["room"] = n.Room
	}
	raw := jsonInput(env)
	a := r.actor()
	res, err := p.svc.Idempotently(c.UserContext(), a, n.Key, "send", raw, func(ctx context.Context) (any, error) {
		return p.svc.Send(ctx, a, raw)
	})
	if refusal, ok := protocol.AsError(err); ok {
		n.Refusal, n.Field = refusal, refusedField(n, refusal)
		return p.renderNewThread(r, refusal.Status, n)
	} else if err != nil {
		return err
	}
	thread, err := openedThread(res)
	if err != nil {
		return err
	}
	return r.redirect("/threads/" + thread)
}

// openingBody is the ask's body: the title as its first line (§ 3 titles a thread with it),
// the text below. A text alone is the body as it is.
func openingBody(title, text string) string {
	if strings.TrimSpace(text) == "" {
		return title
	}
	return title + "\n" + text
}

// refusedField is the field of the form a refusal concerns: the room's refusals (no such
// room, § 16's archived room) beside the picker, a refused text beside the title when none
// was given and beside the text otherwise; any other refusal above the form (""). The
// operation names the offending field at the start of its message (§ 2).
func refusedField(n views.NewThread, refusal *protocol.Error) string {
	switch {
	case refusal.Reason == protocol.ReasonInvalidTransition, refusal.Reason == protocol.ReasonNotFound,
		refusal.Reason == protocol.ReasonInvalidBody && strings.HasPrefix(refusal.Message, "field room"):
		return "room"
	case refusal.Reason == protocol.ReasonInvalidBody && strings.HasPrefix(refusal.Message, "field body"):
		if strings.TrimSpace(n.Title) == "" {
			return "title"
		}
		return "body"
	}
	return ""
}

// openedThread is the thread a send opened: from its result, or from the first answer that a
// replay under the form's key repeats.
func openedThread(res any) (string, error) {
	switch res := res.(type) {
	case *protocol.SendResult:
		return res.Thread.ID, nil
	case *protocol.Replayed:
		var first struct {
			Thread struct {
				ID string `json:"id"`
			} `json:"thread"`
		}
		if err := json.Unmarshal(res.Body(), &first); err != nil || first.Thread.ID == "" {
			return "", fmt.Errorf("the replayed answer of a send names no thread: %v", err)
		}
		return first.Thread.ID, nil
	}
	return "", fmt.Errorf("a send answered %T", res)
}
