package protocol

import "context"

// GetManifest is the manifest as an operation with input, for transports whose calls carry
// one (the MCP tool get_manifest): it takes no fields, so anything but an empty object is
// invalid_body, and it needs no token — a nil actor gets the manifest without you. For a
// scoped token you.rooms names every room it reaches: its rooms and the rooms inside them.
func (s *Service) GetManifest(ctx context.Context, a *Actor, raw []byte) (*Manifest, error) {
	o, err := decodeObject(raw, "")
	if err != nil {
		return nil, err
	}
	if err := o.rest(); err != nil {
		return nil, err
	}
	m := s.Manifest(a)
	if a.Scoped() {
		rooms, err := s.reachedRooms(ctx, a)
		if err != nil {
			return nil, fault(err)
		}
		m.You.Rooms = rooms
	}
	return m, nil
}
