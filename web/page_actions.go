package web

import (
	"encoding/json"
	"regexp"

	"github.com/a-h/templ"
	"github.com/gofiber/fiber/v2"

	"github.com/parleyforum/parley/protocol"
	"github.com/parleyforum/parley/views"
)

// Moderation in place: confirm, mark and a human's message of any kind. Each is a plain
// form post that redirects back (303) and, sent by htmx, an answer that swaps only the parts
// that changed. A refusal of the operation layer is shown beside the control that was used,
// in the reader's language: with htmx as a fragment swapped into its error slot, without it
// as the page again with the form as it was sent.

// confirm is POST /threads/{id}/confirm.
func (p *pages) confirm(r *pageRequest) error {
	id, ok := threadParam(r)
	if !ok {
		return r.notFound()
	}
	if r.c.FormValue("view") == "queue" {
		// In the queue a confirm leaves its result line, with an Undo.
		done, row, err := p.confirmItem(r, id)
		if err != nil {
			return p.refusedInQueue(r, id, err)
		}
		return p.confirmedInQueue(r, done, row)
	}
	_, err := p.svc.Confirm(r.c.UserContext(), r.actor(), threadInput(id, nil))
	return p.moderated(r, id, "confirm", views.FormState{}, err)
}

// mark is POST /threads/{id}/mark.
func (p *pages) mark(r *pageRequest) error {
	id, ok := threadParam(r)
	if !ok {
		return r.notFound()
	}
	state := r.c.FormValue("state")
	_, err := p.svc.Mark(r.c.UserContext(), r.actor(), threadInput(id, map[string]any{"state": state}))
	return p.moderated(r, id, "mark", views.FormState{State: state}, err)
}

// moderated answers a confirm or a mark, on the thread page or in the queue (form field
// view): after success the thread's state panel and timeline, or the queue's row.
func (p *pages) moderated(r *pageRequest, id, action string, form views.FormState, err error) error {
	inQueue := r.c.FormValue("view") == "queue"
	view := "thread"
	if inQueue {
		view = "queue"
	}
	refusal, refused := protocol.AsError(err)
	if err != nil && !refused {
		return err
	}
	if refused {
		form.ID, form.Refusal = controlID(action, id, view), refusal
		if r.htmx() {
			return r.refusedFragment(form.ID, refusal)
		}
		if inQueue {
			return p.renderQueue(r, refusal.Status, form)
		}
		return p.renderThread(r, id, refusal.Status, form)
	}
	if !r.htmx() {
		if inQueue && r.c.FormValue("undo") == "yes" {
			r.keepUndone(id, form.State) // the queue shows its result lines again, this one undone
		}
		if inQueue {
			return r.redirect("/moderation")
		}
		return r.redirect("/threads/" + id)
	}
	tp, err := p.readThread(r, id)
	if err != nil {
		return err
	}
	if inQueue && r.c.FormValue("undo") == "yes" {
		return r.render(fiber.StatusOK, views.UndoneResult(views.Confirmed{Subject: id, State: string(tp.Thread.State)}))
	}
	if inQueue {
		return r.render(fiber.StatusOK, views.QueueRow(protocol.Proposal{Thread: tp.Thread}, views.FormState{}))
	}
	return r.render(fiber.StatusOK, templ.Join(views.ThreadState(*tp), oob(views.Timeline(tp.Events))))
}

// reply is POST /threads/{id}/messages: the human sends an envelope of any of the nine
// kinds, under the message named by parent or where its kind attaches by default.
func (p *pages) reply(r *pageRequest) error {
	c := r.c
	id, ok := threadParam(r)
	if !ok {
		return r.notFound()
	}
	form := views.FormState{Kind: c.FormValue("kind"), Body: c.FormValue("body")}
	env := map[string]any{"kind": form.Kind, "thread": id, "body": form.Body}
	parent := c.FormValue("parent")
	if parent != "" {
		env["parent"] = parent
	}
	raw, _ := json.Marshal(env) // strings only: cannot fail
	sent, err := p.svc.Send(c.UserContext(), r.actor(), raw)
	if refusal, ok := protocol.AsError(err); ok {
		if !messageKey.MatchString(parent) || refusal.Reason == protocol.ReasonNotFound {
			parent = "" // no form stands under a message that is not in the thread
		}
		form.ID, form.Refusal = views.ComposeID(parent), refusal
		if r.htmx() {
			return r.refusedFragment(form.ID, refusal)
		}
		return p.renderThread(r, id, refusal.Status, form, parent)
	} else if err != nil {
		return err
	}
	if !r.htmx() {
		return r.redirect("/threads/" + sent.Thread.ID + "#" + sent.Message.ID)
	}
	tp, err := p.readThread(r, sent.Thread.ID)
	if err != nil {
		return err
	}
	return r.render(fiber.StatusOK, templ.Join(views.Messages(*tp), oob(views.ThreadState(*tp)), oob(views.Timeline(tp.Events)), oob(views.MessageCount(tp.Thread))))
}

// renderThread shows the thread page again with a refused form as it was sent, in the
// refusal's status; replyTo keeps a reply form under its message open.
func (p *pages) renderThread(r *pageRequest, id string, status int, form views.FormState, replyTo ...string) error {
	tp, err := p.readThread(r, id)
	if err != nil {
		return p.refusedRead(r, err)
	}
	tp.Form = form
	if len(replyTo) > 0 {
		tp.ReplyTo = replyTo[0]
	}
	return r.render(status, views.ThreadPageView(*tp))
}

// refusedFragment answers htmx with the refusal alone, swapped into the error slot of the
// control that was used (HX-Retarget), in the refusal's status.
func (r *pageRequest) refusedFragment(formID string, refusal *protocol.Error) error {
	r.c.Set("HX-Retarget", "#"+formID+"-error")
	r.c.Set("HX-Reswap", "outerHTML")
	return r.render(refusal.Status, views.ErrorSlot(formID, refusal))
}

// controlID is the id of the control used: the views name them.
func controlID(action, thread, view string) string { return views.ControlID(action, thread, view) }

// oob marks a swapped part as out of band: htmx puts it in place of the element with its id.
func oob(c templ.Component) templ.Component { return views.OutOfBand(c) }

// threadParam is the thread of the route in its prefixed form (th_7 for 7 too); ok is false
// for anything that is not a thread id, which the pages then answer as not found.
func threadParam(r *pageRequest) (string, bool) {
	m := threadKey.FindStringSubmatch(r.c.Params("id"))
	if m == nil {
		return "", false
	}
	return "th_" + m[1], true
}

var threadKey = regexp.MustCompile(`^(?:th_)?([0-9]{1,19})$`)

// hideMessage is POST /threads/{id}/messages/{msg}/hide with the field reason: the human
// hides the message from every agent (PROTOCOL.md § 18).
func (p *pages) hideMessage(r *pageRequest) error {
	return p.setHidden(r, true)
}

// unhideMessage is POST /threads/{id}/messages/{msg}/unhide.
func (p *pages) unhideMessage(r *pageRequest) error {
	return p.setHidden(r, false)
}

// setHidden hides or unhides; after success the message tree and the timeline (htmx) or the
// thread page at the message (a plain post).
func (p *pages) setHidden(r *pageRequest, hide bool) error {
	id, ok := threadParam(r)
	msg := r.c.Params("msg")
	if !ok || !messageKey.MatchString(msg) {
		return r.notFound()
	}
	in := map[string]any{"message": msg}
	form, op := views.FormState{ID: "unhide-" + msg}, p.svc.Unhide
	if hide {
		public := r.c.FormValue("public") != ""
		in["reason"], in["public"] = r.c.FormValue("reason"), public
		form, op = views.FormState{ID: "hide-" + msg, Body: r.c.FormValue("reason"), Public: public}, p.svc.Hide
	}
	_, err := op(r.c.UserContext(), r.actor(), jsonInput(in))
	if refusal, refused := protocol.AsError(err); refused {
		form.Refusal = refusal
		if r.htmx() {
			return r.refusedFragment(form.ID, refusal)
		}
		return p.renderThread(r, id, refusal.Status, form)
	} else if err != nil {
		return err
	}
	if !r.htmx() {
		return r.redirect("/threads/" + id + "#" + msg)
	}
	tp, err := p.readThread(r, id)
	if err != nil {
		return err
	}
	return r.render(fiber.StatusOK, templ.Join(views.Messages(*tp), oob(views.Timeline(tp.Events)), oob(views.MessageCount(tp.Thread)),
		oob(views.ThreadHeading(tp.Thread))))
}
