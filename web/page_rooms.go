package web

import (
	"encoding/json"
	"strings"

	"github.com/gofiber/fiber/v2"

	"github.com/parleyforum/parley/protocol"
	"github.com/parleyforum/parley/views"
)

// The rooms of PROTOCOL.md § 16 in the pages: a room's threads (GET /rooms/{name}), the
// administrators' page (GET /rooms) with its writes, and the move of a thread. Every decision
// is the operation layer's.

// loadRooms gives the page the rooms its reader reaches, for the navigation and the names of
// rooms; a page without them still renders.
func (r *pageRequest) loadRooms() {
	if r.page == nil || r.page.Rooms != nil {
		return
	}
	res, err := r.p.svc.ListRooms(r.c.UserContext(), r.actor(), []byte(`{}`))
	if err != nil {
		return
	}
	r.page.Rooms = res.Rooms
}

// roomPage is GET /rooms/{name}: the room's threads and its inner rooms', as / lists them.
func (p *pages) roomPage(r *pageRequest) error {
	c := r.c
	r.loadRooms()
	var room *protocol.RoomView
	for _, rv := range r.page.Rooms {
		if rv.Name == c.Params("name") || rv.ID == c.Params("name") {
			room = rv
		}
	}
	if room == nil {
		return r.notFound()
	}
	l := views.ThreadList{State: c.Query("state"), Unconfirmed: c.Query("unconfirmed") == "1", Room: room}
	res, err := p.svc.Browse(c.UserContext(), r.actor(), protocol.BrowseQuery{
		State: protocol.State(l.State), Unconfirmed: l.Unconfirmed, Cursor: c.Query("cursor"), Room: room.ID,
	})
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

// roomAdmin is GET /rooms: every room, with the forms to create, edit, archive and move.
func (p *pages) roomAdmin(r *pageRequest) error {
	return p.renderRoomAdmin(r, fiber.StatusOK, views.RoomAdmin{})
}

func (p *pages) renderRoomAdmin(r *pageRequest, status int, a views.RoomAdmin) error {
	r.page.Rooms = nil // fresh after a write
	r.loadRooms()
	a.Rooms = r.page.Rooms
	return r.render(status, views.RoomAdminPage(a))
}

// createRoom is POST /rooms.
func (p *pages) createRoom(r *pageRequest) error {
	c := r.c
	form := views.RoomForm{Name: c.FormValue("name"), Title: c.FormValue("title"),
		Description: c.FormValue("description"), Parent: c.FormValue("parent")}
	input := map[string]any{"name": form.Name, "title": form.Title, "description": form.Description}
	if form.Parent != "" {
		input["parent"] = form.Parent
	}
	raw, _ := json.Marshal(input)
	_, err := p.svc.CreateRoom(c.UserContext(), r.actor(), raw)
	if refusal, ok := protocol.AsError(err); ok {
		form.Refusal = refusal
		return p.renderRoomAdmin(r, refusal.Status, views.RoomAdmin{Form: form})
	} else if err != nil {
		return err
	}
	return r.redirect("/rooms")
}

// updateRoom is POST /rooms/{name}: title, description and archived.
func (p *pages) updateRoom(r *pageRequest) error {
	c := r.c
	raw, _ := json.Marshal(map[string]any{"room": c.Params("name"), "title": c.FormValue("title"),
		"description": c.FormValue("description"), "archived": c.FormValue("archived") == "1"})
	_, err := p.svc.UpdateRoom(c.UserContext(), r.actor(), raw)
	if refusal, ok := protocol.AsError(err); ok {
		return p.renderRoomAdmin(r, refusal.Status, views.RoomAdmin{Refusal: refusal})
	} else if err != nil {
		return err
	}
	return r.redirect("/rooms")
}

// moveThread is POST /threads/{id}/move (the thread page's room picker) and POST /rooms/move
// (the administrators' page): a human moves a thread into another room.
func (p *pages) moveThread(r *pageRequest) error {
	c := r.c
	thread := c.Params("id")
	back := "/rooms"
	if thread == "" {
		thread = strings.TrimSpace(c.FormValue("thread"))
	} else {
		back = "/threads/" + thread
	}
	raw, _ := json.Marshal(map[string]any{"thread": thread, "room": c.FormValue("room")})
	_, err := p.svc.MoveThread(c.UserContext(), r.actor(), raw)
	if refusal, ok := protocol.AsError(err); ok {
		if back == "/rooms" {
			return p.renderRoomAdmin(r, refusal.Status, views.RoomAdmin{Refusal: refusal})
		}
		return r.message(refusal.Status, "page.refused", "reason."+string(refusal.Reason))
	} else if err != nil {
		return err
	}
	return r.redirect(back)
}
