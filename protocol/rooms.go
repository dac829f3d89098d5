package protocol

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/parleyforum/parley/storage"
)

// § 16: rooms (profile rooms). A room decides who hears a thread; the thread's subject stays
// its own. The rules, by name:
//
//   - ScopeOf: which rooms a caller reaches. Every read and write keeps to it, inside the
//     query (storage.Forum.In): a thread outside is not_found, exactly as one that does not
//     exist.
//   - CheckRoomTakesThread: an archived room (or one inside an archived room) takes no new
//     thread, by ask or by move (invalid_transition); its threads stay readable.
//   - A scoped token's lock moderates within its rooms only, and the rooms inside them:
//     authority (§ 6) is only ever asked of a thread the caller reaches (ScopeOf), so the
//     lock right carries down into inner rooms and never sideways into another room.
//   - CheckRoomParent: rooms nest one level.
//   - Rooms are written by human administrators (requireRoomAdmin); a thread changes room
//     only by a human's move, which writes an event.

func init() {
	profiles = append(profiles, ProfileInfo{Name: "rooms", Version: "1",
		About: "Threads live in rooms (rm_<n>; rm_1 general), nested one level. ask takes room (rm_<n>, <n> or name); " +
			"list_threads, inbox, search, feed and graph take room (a room includes its inner rooms). " +
			"A scoped token reaches only its rooms and their inner rooms (you.rooms); anything else is not_found."})
}

// RoomKey is the wire form of a room id.
func RoomKey(id int64) string { return "rm_" + strconv.FormatInt(id, 10) }

// RoomView is a room as returned: § 16's fields, and in lists the room's own thread count
// (not its inner rooms'), how many of them wait for a confirmation, and when the last of
// them changed (null when it has none).
type RoomView struct {
	ID           string     `json:"id"`
	Name         string     `json:"name"`
	Title        string     `json:"title"`
	Description  string     `json:"description"`
	Parent       *string    `json:"parent"`
	Archived     bool       `json:"archived"`
	CreatedAt    time.Time  `json:"created_at"`
	Threads      int        `json:"threads"`
	Unconfirmed  int        `json:"unconfirmed"`
	LastActivity *time.Time `json:"last_activity"`
}

func roomView(r *storage.Room) *RoomView {
	v := &RoomView{ID: RoomKey(r.ID), Name: r.Name, Title: r.Title, Description: r.Description,
		Archived: r.Archived, CreatedAt: r.CreatedAt.UTC()}
	if r.ParentID != nil {
		p := RoomKey(*r.ParentID)
		v.Parent = &p
	}
	return v
}

// ScopeOf is which rooms a caller reaches, as the predicate every query keeps to — the one
// place that decides it. The cases, in order:
//
//  1. A human, signed in or with a personal token, reaches every room.
//  2. A token without rooms reaches every room.
//  3. A token scoped to rooms reaches those rooms and the rooms inside them, nothing else.
func ScopeOf(a *Actor) storage.Scope {
	switch {
	case a == nil:
		return storage.Scope{Reach: []int64{}} // reaches nothing; operations refuse before
	case a.Human:
		return storage.Scope{}
	case a.Rooms == nil:
		return storage.Scope{}
	default:
		return storage.Scope{Reach: a.Rooms, Rooms: a.reached}
	}
}

// Scoped reports whether the actor reaches only some rooms.
func (a *Actor) Scoped() bool { return a != nil && !a.Human && a.Rooms != nil }

// reader is the queries outside a transaction, kept to what a reaches.
func (s *Service) reader(a *Actor) *storage.Forum { return s.db.Read().In(ScopeOf(a)) }

// CheckRoomTakesThread refuses a new thread (by ask or by move) in an archived room or in a
// room inside an archived one.
func CheckRoomTakesThread(r *storage.Room, parent *storage.Room) *Error {
	if r.Archived || (parent != nil && parent.Archived) {
		return Refuse(ReasonInvalidTransition, "room %s is archived; it takes no new thread", r.Name)
	}
	return nil
}

// CheckRoomParent refuses a room inside a room that is itself inside another: rooms nest
// one level.
func CheckRoomParent(parent *storage.Room) *Error {
	if parent.ParentID != nil {
		return Refuse(ReasonInvalidBody, "field parent: room %s is inside another room; rooms nest one level", parent.Name).Detailed("room_parent_nested", "Name", parent.Name)
	}
	return nil
}

// ParseRoomRef reads a room reference: "rm_<n>", "<n>" or a room's name. It returns the id,
// or 0 and the name.
func ParseRoomRef(ref string) (int64, string, bool) {
	if strings.HasPrefix(ref, "rm_") || (ref != "" && strings.Trim(ref, "0123456789") == "") {
		id, ok := ParseIDString(ref, "rm_")
		return id, "", ok
	}
	if ValidHandle(ref) {
		return 0, ref, true
	}
	return 0, "", false
}

// boolean takes an optional true/false field.
func (o *object) boolean(field string) (bool, bool, *Error) {
	raw, ok := o.take(field)
	if !ok {
		return false, false, nil
	}
	switch strings.TrimSpace(string(raw)) {
	case "true":
		return true, true, nil
	case "false":
		return false, true, nil
	}
	return false, false, Refuse(ReasonInvalidBody, "field %s must be true or false", o.name(field))
}

// room takes the optional room field: "rm_<n>", the JSON integer <n>, a string of
// digits, or a name.
func (o *object) room(field string) (string, bool, *Error) {
	raw, ok := o.take(field)
	if !ok {
		return "", false, nil
	}
	bad := Refuse(ReasonInvalidBody, "field %s must be rm_<n>, a positive integer, a string of digits or a room's name", o.name(field))
	if n, isNumber := wholeNumber(raw); isNumber && !strings.HasPrefix(strings.TrimSpace(string(raw)), `"`) {
		if n <= 0 {
			return "", false, bad
		}
		return RoomKey(n), true, nil
	}
	o.fields[field] = raw // put back for str
	ref, _, err := o.str(field)
	if err != nil {
		return "", false, bad
	}
	if _, _, good := ParseRoomRef(ref); !good {
		return "", false, bad
	}
	return ref, true, nil
}

// findRoom resolves a room reference within what read reaches: a room outside is not_found,
// as one that does not exist.
func findRoom(ctx context.Context, read *storage.Forum, scope storage.Scope, ref string) (*storage.Room, error) {
	id, name, ok := ParseRoomRef(ref)
	if !ok {
		return nil, Refuse(ReasonInvalidBody, "field room must be rm_<n>, a positive integer, a string of digits or a room's name")
	}
	var r *storage.Room
	var err error
	if id != 0 {
		r, err = read.RoomByID(ctx, id, scope)
	} else {
		r, err = read.RoomByName(ctx, name, scope)
	}
	if errors.Is(err, storage.ErrNotFound) {
		return nil, Refuse(ReasonNotFound, "room %s not found", ref).Detailed("room_not_found", "Room", ref)
	}
	if err != nil {
		return nil, fault(err)
	}
	return r, nil
}

// roomScope is the caller's scope narrowed to the room ref ("" for none): the room filter of
// the lists, the inbox, search, the feed and the graph. A room includes its inner rooms.
func (s *Service) roomScope(ctx context.Context, a *Actor, ref string) (storage.Scope, error) {
	scope := ScopeOf(a)
	if ref == "" {
		return scope, nil
	}
	r, err := findRoom(ctx, s.db.Read(), scope, ref)
	if err != nil {
		return scope, err
	}
	// The rooms the scope comes to are now fewer: the queries read them again.
	scope.Room, scope.Rooms = r.ID, nil
	return scope, nil
}

// RoomScope is roomScope for the pages.
func (s *Service) RoomScope(ctx context.Context, a *Actor, ref string) (storage.Scope, error) {
	return s.roomScope(ctx, a, ref)
}

// RoomsResult is the rooms a caller reaches.
type RoomsResult struct {
	Rooms []*RoomView `json:"rooms"`
}

// ListRooms answers {}: the rooms the caller reaches, each room at the top followed by the
// rooms inside it, with their thread counts and last activity.
func (s *Service) ListRooms(ctx context.Context, a *Actor, raw []byte) (*RoomsResult, error) {
	o, err := input(a, raw)
	if err != nil {
		return nil, err
	}
	if err := o.rest(); err != nil {
		return nil, err
	}
	if err := requireActor(a, RightRead); err != nil {
		return nil, err
	}
	rows, err2 := s.db.Read().Rooms(ctx, ScopeOf(a))
	if err2 != nil {
		return nil, fault(err2)
	}
	res := &RoomsResult{Rooms: []*RoomView{}}
	for i := range rows {
		v := roomView(&rows[i].Room)
		v.Threads, v.Unconfirmed, v.LastActivity = rows[i].Threads, rows[i].Unconfirmed, utc(rows[i].LastActivity)
		res.Rooms = append(res.Rooms, v)
	}
	return res, nil
}

// RoomResult is one room.
type RoomResult struct {
	Room *RoomView `json:"room"`
}

// MaxRoomTitleChars and MaxRoomDescriptionChars bound a room's texts.
const (
	MaxRoomTitleChars       = 100
	MaxRoomDescriptionChars = 500
)

// requireRoomAdmin: rooms are written by human administrators — a human whose account is an
// administrator's.
func (s *Service) requireRoomAdmin(ctx context.Context, a *Actor) error {
	return s.requireAdmin(ctx, a, "rooms are written by human administrators")
}

// requireAdmin: a human whose account is an administrator's, or the operator at the command
// line; anyone else is refused token_right_missing with why.
func (s *Service) requireAdmin(ctx context.Context, a *Actor, why string) error {
	if err := requireActor(a, RightRead); err != nil {
		return err
	}
	if a.Operator {
		return nil
	}
	if !a.Human {
		return Refuse(ReasonTokenRightMissing, "%s", why)
	}
	name := strings.TrimPrefix(a.Identity, HumanRealm+":")
	u, err := s.db.UserByName(ctx, name)
	switch {
	case errors.Is(err, storage.ErrNotFound):
		return Refuse(ReasonTokenRightMissing, "%s", why)
	case err != nil:
		return fault(err)
	case !u.Admin:
		return Refuse(ReasonTokenRightMissing, "%s", why)
	}
	return nil
}

// CheckRoomName refuses a name a room may not have (§ 16): one that is no handle-like slug, and
// one that reads as a room's id — a number, or rm_ and anything, in any case — since a
// reference of that form names a room by its id (ParseRoomRef), and a room so named could
// never be found by its name, nor told apart from the room with that id (parley token create
// --rooms rm_9 would reach room 9, not the room named rm_9).
func CheckRoomName(name string) *Error {
	switch {
	case strings.HasPrefix(strings.ToLower(name), "rm_"):
		return Refuse(ReasonInvalidBody, "field name must not begin with rm_: rm_<n> names a room by its id").Detailed("room_name_id")
	case !ValidHandle(name):
		return Refuse(ReasonInvalidBody, "field name must match ^[a-z0-9][a-z0-9._-]{0,63}$").Detailed("room_name_pattern")
	case strings.Trim(name, "0123456789") == "":
		return Refuse(ReasonInvalidBody, "field name must not be a number: a number names a room by its id").Detailed("room_name_number")
	}
	return nil
}

// RoomNamePattern is CheckRoomName for a browser, as an input's pattern (with maxlength 64):
// a slug that begins with a letter other than r; a number followed by anything but digits; or
// r, rm, or either followed by anything but what makes rm_. It uses no lookahead, so that Go's
// regexp checks it against CheckRoomName too (TestRoomNamePatternAgrees).
const RoomNamePattern = `[a-qs-z][a-z0-9._\-]*|[0-9]+[a-z._\-][a-z0-9._\-]*|r|r[a-ln-z0-9._\-][a-z0-9._\-]*|rm|rm[a-z0-9.\-][a-z0-9._\-]*`

// roomText checks a room's title or description: at most max code points, every character
// one that can be shown; a title must not be empty.
func roomText(field, s string, max int, required bool) *Error {
	if required {
		if err := checkText(field, s, max); err != nil {
			return err
		}
	} else if n := utf8.RuneCountInString(s); n > max {
		return Refuse(ReasonInvalidBody, "field %s has more than %d characters", field, max).Detailed(field+"_too_long", "Max", max, "Count", n)
	}
	if !utf8.ValidString(s) || strings.ContainsRune(s, 0) {
		return Refuse(ReasonInvalidBody, "field %s has a character that cannot be shown", field)
	}
	return nil
}

// CreateRoom answers {name, title, description?, parent?}: a human administrator opens a
// room (at the top, or inside a room at the top).
func (s *Service) CreateRoom(ctx context.Context, a *Actor, raw []byte) (*RoomResult, error) {
	o, err := input(a, raw)
	if err != nil {
		return nil, err
	}
	name, _, err := o.str("name")
	if err != nil {
		return nil, err
	}
	if err := CheckRoomName(name); err != nil {
		return nil, err
	}
	title, hasTitle, err := o.str("title")
	if err != nil {
		return nil, err
	}
	if !hasTitle {
		return nil, Refuse(ReasonInvalidBody, "field title is missing")
	}
	if err := roomText("title", title, MaxRoomTitleChars, true); err != nil {
		return nil, err
	}
	desc, _, err := o.str("description")
	if err != nil {
		return nil, err
	}
	if err := roomText("description", desc, MaxRoomDescriptionChars, false); err != nil {
		return nil, err
	}
	parentRef, hasParent, err := o.room("parent")
	if err != nil {
		return nil, err
	}
	if err := o.rest(); err != nil {
		return nil, err
	}
	if err := s.requireRoomAdmin(ctx, a); err != nil {
		return nil, err
	}
	room := &storage.Room{Name: name, Title: title, Description: desc}
	var res *RoomResult
	wctx, cancel := writing(ctx)
	defer cancel()
	err2 := s.writeTx(wctx, answering(&res, func(ctx context.Context, f *storage.Forum) error {
		if hasParent {
			parent, err := findRoom(ctx, f, storage.Scope{}, parentRef)
			if err != nil {
				return err
			}
			if err := CheckRoomParent(parent); err != nil {
				return err
			}
			room.ParentID = &parent.ID
		}
		err := f.CreateRoom(ctx, room)
		if errors.Is(err, storage.ErrAlreadyExists) {
			return Refuse(ReasonInvalidBody, "field name: a room named %s exists", name).Detailed("room_name_taken", "Name", name)
		}
		if err != nil {
			return err
		}
		res = &RoomResult{Room: roomView(room)}
		return nil
	}))
	if err2 != nil {
		return nil, fault(err2)
	}
	// A token scoped to the new room's parent now reaches it too: this instance's verified
	// tokens, which carry their rooms, are read again (the others hear it announced).
	s.db.TokenRoomsChanged()
	return res, nil
}

// UpdateRoom answers {room, title?, description?, archived?}: a human administrator renames,
// describes, archives or reopens a room.
func (s *Service) UpdateRoom(ctx context.Context, a *Actor, raw []byte) (*RoomResult, error) {
	o, err := input(a, raw)
	if err != nil {
		return nil, err
	}
	ref, hasRoom, err := o.room("room")
	if err != nil {
		return nil, err
	}
	if !hasRoom {
		return nil, Refuse(ReasonInvalidBody, "field room is missing")
	}
	title, hasTitle, err := o.str("title")
	if err != nil {
		return nil, err
	}
	if hasTitle {
		if err := roomText("title", title, MaxRoomTitleChars, true); err != nil {
			return nil, err
		}
	}
	desc, hasDesc, err := o.str("description")
	if err != nil {
		return nil, err
	}
	if hasDesc {
		if err := roomText("description", desc, MaxRoomDescriptionChars, false); err != nil {
			return nil, err
		}
	}
	archived, hasArchived, err := o.boolean("archived")
	if err != nil {
		return nil, err
	}
	if err := o.rest(); err != nil {
		return nil, err
	}
	if err := s.requireRoomAdmin(ctx, a); err != nil {
		return nil, err
	}
	var res *RoomResult
	wctx, cancel := writing(ctx)
	defer cancel()
	err2 := s.writeTx(wctx, answering(&res, func(ctx context.Context, f *storage.Forum) error {
		var room *storage.Room
		var err error
		if room, err = findRoom(ctx, f, storage.Scope{}, ref); err != nil {
			return err
		}
		if hasTitle {
			room.Title = title
		}
		if hasDesc {
			room.Description = desc
		}
		if hasArchived {
			room.Archived = archived
		}
		if err := f.UpdateRoom(ctx, room); err != nil {
			return err
		}
		res = &RoomResult{Room: roomView(room)}
		return nil
	}))
	if err2 != nil {
		return nil, fault(err2)
	}
	return res, nil
}

// MoveThread answers {thread, room}: a human puts a thread into another room, with an event
// (act move, the state unchanged, room the room moved to). A thread moved into the room it
// is in changes nothing and writes no event.
func (s *Service) MoveThread(ctx context.Context, a *Actor, raw []byte) (*ModerationResult, error) {
	o, id, err := threadInput(a, raw)
	if err != nil {
		return nil, err
	}
	ref, hasRoom, err := o.room("room")
	if err != nil {
		return nil, err
	}
	if !hasRoom {
		return nil, Refuse(ReasonInvalidBody, "field room is missing")
	}
	if err := o.rest(); err != nil {
		return nil, err
	}
	if err := requireActor(a, RightWrite); err != nil {
		return nil, err
	}
	if !a.Human {
		return nil, Refuse(ReasonTokenRightMissing, "move is for humans only")
	}
	var res *ModerationResult
	wctx, cancel := writing(ctx)
	defer cancel()
	err2 := s.writeTx(wctx, answering(&res, func(ctx context.Context, f *storage.Forum) error {
		f.In(ScopeOf(a))
		t, err := f.ThreadForUpdate(ctx, id)
		if err != nil {
			return notFound(err, "thread %s not found", ThreadKey(id))
		}
		room, err := findRoom(ctx, f, ScopeOf(a), ref)
		if err != nil {
			return err
		}
		var parent *storage.Room
		if room.ParentID != nil {
			if parent, err = f.RoomByID(ctx, *room.ParentID, storage.Scope{}); err != nil {
				return err
			}
		}
		res = &ModerationResult{Thread: threadViewFor(t, a)}
		if room.ID == t.RoomID {
			return nil
		}
		if err := CheckRoomTakesThread(room, parent); err != nil {
			return err
		}
		now := storage.Now()
		state := t.State
		ev := &storage.Event{
			ThreadID: t.ID, Subject: ThreadKey(t.ID), Act: ActMove, FromState: &state, ToState: state,
			Origin: MarkingOf(a).Origin, ActorIdentity: a.Identity, Label: a.DisplayLabel(),
			Confirmed: true, ConfirmedAt: &now, At: now, RoomID: &room.ID,
		}
		t.UpdatedAt = now
		if err := f.MoveThread(ctx, t, room.ID, ev); err != nil {
			return err
		}
		res = &ModerationResult{Thread: threadViewFor(t, a), Event: eventView(ev)}
		return nil
	}))
	if err2 != nil {
		return nil, fault(err2)
	}
	if res.Event != nil {
		s.announce(res.Thread)
	}
	return res, nil
}

// OperatorActor is the operator of the command line (parley room …): a human who may write
// rooms, as the one who holds the database. No request over the network is ever this actor.
func OperatorActor() *Actor {
	return &Actor{Identity: HumanIdentity("operator"), Human: true, Rights: AllRightsSet(), Operator: true}
}

// ActMove is the act of the event a move writes.
const ActMove = "move"

// openingRoom resolves the room of an ask that opens a thread (general when none is named):
// within what the caller reaches, and one that takes new threads.
//
// § 16 opens a thread without a room in general, whoever asks, so a token scoped to other
// rooms is refused there as anywhere it does not reach (not_found); since it did not name
// the room, its refusal names the rooms it may name instead.
func openingRoom(ctx context.Context, f *storage.Forum, a *Actor, ref string) (int64, error) {
	named := ref != ""
	if !named {
		ref = RoomKey(storage.GeneralRoom)
	}
	room, err := findRoom(ctx, f, ScopeOf(a), ref)
	if refusal, ok := AsError(err); ok && !named && refusal.Reason == ReasonNotFound && a.Scoped() {
		return 0, withReachedRooms(ctx, f, a, refusal)
	}
	if err != nil {
		return 0, err
	}
	var parent *storage.Room
	if room.ParentID != nil {
		if parent, err = f.RoomByID(ctx, *room.ParentID, storage.Scope{}); err != nil {
			return 0, err
		}
	}
	if err := CheckRoomTakesThread(room, parent); err != nil {
		return 0, err
	}
	return room.ID, nil
}

// withReachedRooms adds to the refusal of an ask that named no room the rooms a scoped
// caller reaches, those it may name in the envelope's field room. It names only what the
// caller reaches (its manifest's you.rooms says as much), so the refusal still tells nothing
// of rooms beyond them.
func withReachedRooms(ctx context.Context, f *storage.Forum, a *Actor, refusal *Error) error {
	rooms, err := f.Rooms(ctx, ScopeOf(a))
	if err != nil {
		return fault(err)
	}
	names := make([]string, 0, len(rooms))
	for _, r := range rooms {
		names = append(names, r.Name)
	}
	return Refuse(ReasonNotFound, "%s: this token reaches only the rooms %s; name one of them in the field room",
		refusal.Message, strings.Join(names, ", ")).Detailed(refusal.Detail, refusal.DetailArgs...)
}

// reachedRooms lists the keys of the rooms a scoped actor reaches, for the manifest's
// you.rooms; nil for an actor that reaches every room.
func (s *Service) reachedRooms(ctx context.Context, a *Actor) ([]string, error) {
	if !a.Scoped() {
		return nil, nil
	}
	ids, err := s.db.Read().RoomIDs(ctx, ScopeOf(a))
	if err != nil {
		return nil, err
	}
	keys := make([]string, 0, len(ids))
	for _, id := range ids {
		keys = append(keys, RoomKey(id))
	}
	return keys, nil
}

// ParseTokenRooms reads the stored form of a token's rooms ("2,5"); "" is nil, every room.
func ParseTokenRooms(stored string) []int64 { return storage.TokenRoomIDs(stored) }

// ResolveTokenRooms turns room references (names, rm_<n>, <n>) into the stored form of a
// token's rooms; every room must exist. An empty list is "", every room.
func (s *Service) ResolveTokenRooms(ctx context.Context, refs []string) (string, error) {
	var ids []string
	seen := map[int64]bool{}
	for _, ref := range refs {
		ref = strings.TrimSpace(ref)
		if ref == "" {
			continue
		}
		r, err := findRoom(ctx, s.db.Read(), storage.Scope{}, ref)
		if err != nil {
			return "", err
		}
		if !seen[r.ID] {
			seen[r.ID] = true
			ids = append(ids, strconv.FormatInt(r.ID, 10))
		}
	}
	return strings.Join(ids, ","), nil
}

// TokenRoomNames names the rooms of a token's stored rooms, for listings; nil for every room.
func (s *Service) TokenRoomNames(ctx context.Context, stored string) ([]string, error) {
	ids := ParseTokenRooms(stored)
	if ids == nil {
		return nil, nil
	}
	names := []string{}
	for _, id := range ids {
		r, err := s.db.Read().RoomByID(ctx, id, storage.Scope{})
		if err != nil {
			if errors.Is(err, storage.ErrNotFound) {
				names = append(names, RoomKey(id))
				continue
			}
			return nil, fault(err)
		}
		names = append(names, r.Name)
	}
	return names, nil
}
