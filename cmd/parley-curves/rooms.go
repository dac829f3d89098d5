package main

import (
	"context"
	"fmt"

	"github.com/parleyforum/parley/protocol"
	"github.com/parleyforum/parley/storage"
)

// The seeded forum's threads are spread over rooms (PROTOCOL.md § 16), and the room-filtered
// reads ask for one room of a fixed size: the room "team" holds threads 1 to 50 and the room
// inside it, "team-inner", threads 51 to 100 — 1,000 messages at every size of the forum, the
// rare thread 77 and the reader's threads among them. The rest of the forum goes round the
// rooms general, north and south. A read filtered to team finds the same at 10,000 messages as
// at 1,000,000; if it costs more at 1,000,000, it read what the rest of the forum holds.
const (
	roomName      = "team"
	innerRoomName = "team-inner"
	roomThreads   = 100 // threads 1 to 100 are in team and team-inner
)

// bulkRooms are the rooms the threads after roomThreads go round, general first.
var bulkRooms = []string{"general", "north", "south"}

// spreadOverRooms makes the rooms and moves the seeded threads into them, in one statement,
// then refreshes the planner's statistics, as benchdata.Seed does after its inserts.
func (f *forum) spreadOverRooms(ctx context.Context, db *storage.DB) error {
	admin := protocol.OperatorActor()
	rooms := []string{
		`{"name":"` + roomName + `","title":"The team"}`,
		`{"name":"` + innerRoomName + `","title":"Inside the team","parent":"` + roomName + `"}`,
		`{"name":"north","title":"North"}`,
		`{"name":"south","title":"South"}`,
	}
	f.teamRooms = map[string]bool{}
	for i, r := range rooms {
		res, err := f.svc.CreateRoom(ctx, admin, []byte(r))
		if err != nil {
			return fmt.Errorf("room %s: %w", r, err)
		}
		if i < 2 {
			f.teamRooms[res.Room.ID] = true
		}
	}
	move := `UPDATE threads SET room_id = CASE
			WHEN id <= ?half THEN (SELECT id FROM rooms WHERE name = ?room)
			WHEN id <= ?threads THEN (SELECT id FROM rooms WHERE name = ?inner)
			WHEN id % 3 = 0 THEN (SELECT id FROM rooms WHERE name = ?b0)
			WHEN id % 3 = 1 THEN (SELECT id FROM rooms WHERE name = ?b1)
			ELSE (SELECT id FROM rooms WHERE name = ?b2) END`
	args := struct {
		Half    int    `bun:"half"`
		Threads int    `bun:"threads"`
		Room    string `bun:"room"`
		Inner   string `bun:"inner"`
		B0      string `bun:"b0"`
		B1      string `bun:"b1"`
		B2      string `bun:"b2"`
	}{roomThreads / 2, roomThreads, roomName, innerRoomName, bulkRooms[0], bulkRooms[1], bulkRooms[2]}
	if _, err := db.NewRaw(move, &args).Exec(ctx); err != nil {
		return fmt.Errorf("moving the threads into rooms: %w", err)
	}
	analyze := "ANALYZE"
	if db.Kind() == storage.Postgres {
		analyze = "VACUUM (ANALYZE) threads, messages"
	}
	_, err := db.ExecContext(ctx, analyze)
	return err
}

// inRoom reports whether every thread listed is in team or team-inner.
func (f *forum) inRoom(threads []*protocol.ThreadView) bool {
	for _, t := range threads {
		if !f.teamRooms[t.Room] {
			return false
		}
	}
	return true
}

// hitsInRoom reports whether every message found is in a seeded thread of team or team-inner.
func hitsInRoom(hits []*protocol.SearchHitView) bool {
	for _, h := range hits {
		if !teamThread(h.Thread.ID) {
			return false
		}
	}
	return true
}

// teamThread reports whether the thread key names one of the seeded threads in team or
// team-inner.
func teamThread(key string) bool {
	id, ok := protocol.ParseIDString(key, "th_")
	return ok && id >= 1 && id <= roomThreads
}
