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

// makeRooms makes the rooms, before the seed, and returns where the seed puts the k-th
// thread (benchdata.Forum.RoomOf): seeded in their rooms, the threads need no move, which
// on SQLite would index their messages a second time.
func (f *forum) makeRooms(ctx context.Context) (string, error) {
	admin := protocol.OperatorActor()
	rooms := []string{
		`{"name":"` + roomName + `","title":"The team"}`,
		`{"name":"` + innerRoomName + `","title":"Inside the team","parent":"` + roomName + `"}`,
		`{"name":"north","title":"North"}`,
		`{"name":"south","title":"South"}`,
	}
	f.teamRooms = map[string]bool{}
	ids := map[string]int64{"general": storage.GeneralRoom}
	for i, r := range rooms {
		res, err := f.svc.CreateRoom(ctx, admin, []byte(r))
		if err != nil {
			return "", fmt.Errorf("room %s: %w", r, err)
		}
		if i < 2 {
			f.teamRooms[res.Room.ID] = true
		}
		id, _, _ := protocol.ParseRoomRef(res.Room.ID)
		ids[res.Room.Name] = id
	}
	return fmt.Sprintf(`CASE WHEN k <= %d THEN %d WHEN k <= %d THEN %d
		WHEN k %% 3 = 0 THEN %d WHEN k %% 3 = 1 THEN %d ELSE %d END`,
		roomThreads/2, ids[roomName], roomThreads, ids[innerRoomName],
		ids[bulkRooms[0]], ids[bulkRooms[1]], ids[bulkRooms[2]]), nil
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
