package protocol

// TitleMaxChars is the most code points of a thread's title (§ 3: the first line of the
// opening ask, cut there), for a form that asks for the title on its own.
const TitleMaxChars = titleMaxChars

// RoomsTakingThreads are those of rooms (as listed by ListRooms, each room's parent among
// them) in which a new thread may be opened: CheckRoomTakesThread's rule — not an archived
// room, nor a room inside an archived one — for a form that offers only rooms that would
// take the thread. Opening the thread still checks the rule itself.
func RoomsTakingThreads(rooms []*RoomView) []*RoomView {
	archived := map[string]bool{}
	for _, r := range rooms {
		archived[r.ID] = r.Archived
	}
	open := make([]*RoomView, 0, len(rooms))
	for _, r := range rooms {
		if r.Archived || (r.Parent != nil && archived[*r.Parent]) {
			continue
		}
		open = append(open, r)
	}
	return open
}
