package storage

import (
	"context"
	"slices"
	"strings"
	"time"

	"github.com/uptrace/bun"
)

// Room is a room of the forum (PROTOCOL.md § 16). Rooms nest one level: ParentID is nil for
// a room at the top, and a room inside another has no rooms inside it.
type Room struct {
	bun.BaseModel `bun:"table:rooms,alias:room"`

	ID          int64     `bun:"id,pk,autoincrement"`
	Name        string    `bun:"name,notnull,unique"`
	Title       string    `bun:"title,notnull"`
	Description string    `bun:"description,notnull"`
	ParentID    *int64    `bun:"parent_id"`
	Archived    bool      `bun:"archived,notnull"`
	CreatedAt   time.Time `bun:"created_at,notnull"`
}

// GeneralRoom is the room every thread is in unless it is opened in or moved to another.
const GeneralRoom int64 = 1

// RoomStats is a room with what listing it shows: how many threads it holds (its own, not
// those of the rooms inside it), how many of them wait for a confirmation, and when the last
// of them changed.
type RoomStats struct {
	Room         `bun:",extend"`
	Threads      int        `bun:"threads,scanonly"`
	Unconfirmed  int        `bun:"unconfirmed,scanonly"`
	LastActivity *time.Time `bun:"last_activity,scanonly"`
}

// Scope is who may see what, as a condition on rooms: the rooms a caller reaches, narrowed
// to one room when a reader asks for one. A room includes the rooms inside it. The zero
// value holds every room and adds nothing to a query.
//
// It is a predicate that goes inside every query that lists or finds threads (and their
// messages, events and claims), never a filter applied to a page after it is read: a page is
// then always full and a cursor never skips.
type Scope struct {
	// Reach is the rooms a scoped token is scoped to (with the rooms inside them); nil
	// reaches every room. An empty, non-nil Reach reaches nothing.
	Reach []int64
	// Room narrows to one room and the rooms inside it; 0 for every room.
	Room int64
	// Rooms, when not nil, is what Reach and Room come to, read from the rooms table
	// (Forum.resolvedScope): the ids of every room the scope holds. A query that has them
	// names its rooms as values, which the planner weighs by the rooms' share of the
	// threads; under the subquery on rooms it cannot, and on a large forum it ranked
	// every match of a search, or walked every thread, before keeping the room's.
	Rooms []int64
}

// Everything reports whether the scope holds every room, so that it adds no condition.
func (s Scope) Everything() bool { return s.Reach == nil && s.Room == 0 }

// RoomCondition is the condition that the column col (a room id) names a room within the
// scope, as SQL with its arguments; "" when the scope holds every room. Every other
// condition of this file is built on it.
func (s Scope) RoomCondition(col string) (string, []any) {
	if s.Rooms != nil && !s.Everything() {
		if len(s.Rooms) == 0 {
			return "1 = 0", nil
		}
		return col + " IN (?)", []any{bun.In(s.Rooms)}
	}
	var parts []string
	var args []any
	if s.Reach != nil {
		if len(s.Reach) == 0 {
			parts = append(parts, "1 = 0")
		} else {
			parts = append(parts, col+" IN (SELECT sr.id FROM rooms AS sr WHERE sr.id IN (?) OR sr.parent_id IN (?))")
			args = append(args, bun.In(s.Reach), bun.In(s.Reach))
		}
	}
	if s.Room != 0 {
		parts = append(parts, col+" IN (SELECT fr.id FROM rooms AS fr WHERE fr.id = ? OR fr.parent_id = ?)")
		args = append(args, s.Room, s.Room)
	}
	return strings.Join(parts, " AND "), args
}

// resolvedScope is f's scope with its rooms read into Rooms, so that the query that follows
// names them as values; the scope itself when it holds every room. The rooms are read just
// before the query, not in its snapshot: a room opened inside the scope in between holds no
// thread the query could miss unless one is moved into it in that instant, and then the
// query answers as it would have a moment earlier. Nothing outside the scope ever enters.
func (f *Forum) resolvedScope(ctx context.Context) (Scope, error) {
	s := f.scope
	if s.Everything() || s.Rooms != nil {
		return s, nil
	}
	cond, args := s.RoomCondition("id")
	ids := []int64{}
	err := f.q.NewSelect().Table("rooms").Column("id").Where(cond, args...).Order("id").Scan(ctx, &ids)
	if err != nil {
		return s, translate(err)
	}
	s.Rooms = ids
	return s, nil
}

// holdsRoom reports whether the room is within the scope. A room the scope names itself
// (a token's own room, the room asked for) is answered without a query; a room inside one
// of them is looked up in the rooms table, on the same condition as the lists.
func (s Scope) holdsRoom(ctx context.Context, q bun.IDB, room int64) (bool, error) {
	switch {
	case s.Everything():
		return true, nil
	case s.Rooms != nil:
		return slices.Contains(s.Rooms, room), nil
	case (s.Reach == nil || slices.Contains(s.Reach, room)) && (s.Room == 0 || s.Room == room):
		return true, nil
	}
	cond, args := s.RoomCondition("id")
	ok, err := q.NewSelect().Table("rooms").Where("id = ?", room).Where(cond, args...).Exists(ctx)
	return ok, translate(err)
}

// ThreadCondition is the condition that the column col (a thread id) names a thread within
// the scope; "" when the scope holds every room.
func (s Scope) ThreadCondition(col string) (string, []any) {
	cond, args := s.RoomCondition("st.room_id")
	if cond == "" {
		return "", nil
	}
	return col + " IN (SELECT st.id FROM threads AS st WHERE " + cond + ")", args
}

// onRooms adds the room condition on col to q.
func (s Scope) onRooms(q *bun.SelectQuery, col string) *bun.SelectQuery {
	if cond, args := s.RoomCondition(col); cond != "" {
		q = q.Where(cond, args...)
	}
	return q
}

// onThreads adds the thread condition on col to q.
func (s Scope) onThreads(q *bun.SelectQuery, col string) *bun.SelectQuery {
	if cond, args := s.ThreadCondition(col); cond != "" {
		q = q.Where(cond, args...)
	}
	return q
}

// and appends the room condition on col to a raw SQL condition (" AND …"), with its
// arguments.
func (s Scope) and(sql string, args []any, col string) (string, []any) {
	if cond, more := s.RoomCondition(col); cond != "" {
		sql += " AND " + cond
		args = append(args, more...)
	}
	return sql, args
}

// ThreadInScope reports whether the thread id exists within the scope: the single-thread
// check, built on the same condition as the lists.
func (f *Forum) ThreadInScope(ctx context.Context, id int64, s Scope) (bool, error) {
	q := f.q.NewSelect().Model((*Thread)(nil)).Where("id = ?", id)
	ok, err := s.onRooms(q, "room_id").Exists(ctx)
	return ok, translate(err)
}

// ThreadScoped reads one thread, ErrNotFound when it does not exist or is outside the scope.
func (f *Forum) ThreadScoped(ctx context.Context, id int64, s Scope) (*Thread, error) {
	t := new(Thread)
	q := f.q.NewSelect().Model(t).Where("id = ?", id)
	err := s.onRooms(q, "room_id").Scan(ctx)
	return t, translate(err)
}

// CreateRoom stores a new room and sets its id and time. A name that is taken is
// ErrAlreadyExists.
func (f *Forum) CreateRoom(ctx context.Context, r *Room) error {
	r.CreatedAt = Now()
	_, err := f.q.NewInsert().Model(r).Returning("id").Exec(ctx)
	return translate(err)
}

// UpdateRoom writes a room's title, description and archived flag.
func (f *Forum) UpdateRoom(ctx context.Context, r *Room) error {
	res, err := f.q.NewUpdate().Model(r).Column("title", "description", "archived").WherePK().Exec(ctx)
	if err != nil {
		return translate(err)
	}
	if n, err := res.RowsAffected(); err == nil && n == 0 {
		return ErrNotFound
	}
	return nil
}

// RoomByID reads one room within the scope (ErrNotFound outside it).
func (f *Forum) RoomByID(ctx context.Context, id int64, s Scope) (*Room, error) {
	r := new(Room)
	q := f.q.NewSelect().Model(r).Where("room.id = ?", id)
	err := s.onRooms(q, "room.id").Scan(ctx)
	return r, translate(err)
}

// RoomByName reads one room by its name, within the scope (ErrNotFound outside it).
func (f *Forum) RoomByName(ctx context.Context, name string, s Scope) (*Room, error) {
	r := new(Room)
	q := f.q.NewSelect().Model(r).Where("room.name = ?", name)
	err := s.onRooms(q, "room.id").Scan(ctx)
	return r, translate(err)
}

// HasInnerRooms reports whether rooms are inside the room id.
func (f *Forum) HasInnerRooms(ctx context.Context, id int64) (bool, error) {
	ok, err := f.q.NewSelect().Model((*Room)(nil)).Where("parent_id = ?", id).Exists(ctx)
	return ok, translate(err)
}

// Rooms lists the rooms within the scope with their counts, each room at the top followed by
// the rooms inside it, by name.
func (f *Forum) Rooms(ctx context.Context, s Scope) ([]RoomStats, error) {
	out := []RoomStats{}
	q := f.q.NewSelect().Model(&out).
		ColumnExpr("room.*").
		ColumnExpr("(SELECT count(*) FROM threads AS ct WHERE ct.room_id = room.id) AS threads").
		ColumnExpr("(SELECT count(*) FROM threads AS cu WHERE cu.room_id = room.id AND cu.state_confirmed_at IS NULL) AS unconfirmed").
		ColumnExpr("(SELECT max(ca.updated_at) FROM threads AS ca WHERE ca.room_id = room.id) AS last_activity").
		OrderExpr("COALESCE((SELECT pr.name FROM rooms AS pr WHERE pr.id = room.parent_id), room.name), room.parent_id IS NOT NULL, room.name")
	err := s.onRooms(q, "room.id").Scan(ctx)
	return out, translate(err)
}

// RoomIDs lists the ids of the rooms within the scope, in order of id.
func (f *Forum) RoomIDs(ctx context.Context, s Scope) ([]int64, error) {
	var out []int64
	q := f.q.NewSelect().Model((*Room)(nil)).Column("room.id").Order("room.id")
	err := s.onRooms(q, "room.id").Scan(ctx, &out)
	return out, translate(err)
}

// MoveThread puts a thread into another room, with the event that records it, and gives it
// a new inbox position so that readers whose cursor is past its last one see it.
func (f *Forum) MoveThread(ctx context.Context, t *Thread, room int64, ev *Event) error {
	if err := f.InsertEvent(ctx, ev); err != nil {
		return err
	}
	t.RoomID = room
	return f.UpdateThread(ctx, t, true)
}
