package protocol

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"hash"
	"io"
	"sort"
	"time"

	"github.com/parleyforum/parley/graph"
	"github.com/parleyforum/parley/storage"
)

// § 15, the dataset: the forum as JSON Lines, read from one snapshot and written as it is
// read. Each kind of row is read in keyset pages of datasetPage rows (memory holds one page,
// whatever the forum's size), and the lines come in a fixed order — rooms, threads,
// messages, events, claims, stances, keys — each kind by id; the last line counts them,
// holds the SHA-256 of every byte before it and is signed by the realm key.

// DatasetLineTypes are the types of the dataset's lines, in the order they come; "export"
// is the last line.
var DatasetLineTypes = []string{"room", "thread", "message", "event", "claim", "stance", "key", "export"}

// datasetPage is how many rows one read of the database gives.
const datasetPage = 500

// datasetWriter writes lines, hashing every byte and counting the lines by type.
type datasetWriter struct {
	out    *bufio.Writer
	sum    hash.Hash
	counts map[string]int
	buf    bytes.Buffer
}

func newDatasetWriter(w io.Writer) *datasetWriter {
	d := &datasetWriter{out: bufio.NewWriterSize(w, 64<<10), sum: sha256.New(), counts: map[string]int{}}
	for _, t := range DatasetLineTypes[:len(DatasetLineTypes)-1] {
		d.counts[t] = 0
	}
	return d
}

// line writes v (a JSON object) as a line of type typ: {"type": typ, …v's members}.
func (d *datasetWriter) line(typ string, v any) error {
	d.buf.Reset()
	enc := json.NewEncoder(&d.buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return err
	}
	body := d.buf.Bytes() // {…}\n
	head := `{"type":"` + typ + `"`
	if len(body) > 3 { // more than {}\n: the members follow after a comma
		head += ","
	}
	for _, part := range [][]byte{[]byte(head), body[1:]} {
		d.sum.Write(part)
		if _, err := d.out.Write(part); err != nil {
			return err
		}
	}
	d.counts[typ]++
	return nil
}

// datasetRoom is a room's line: the room without the counts the room list adds.
type datasetRoom struct {
	ID          string    `json:"id"`
	Name        string    `json:"name"`
	Title       string    `json:"title"`
	Description string    `json:"description"`
	Parent      *string   `json:"parent"`
	Archived    bool      `json:"archived"`
	CreatedAt   time.Time `json:"created_at"`
}

// datasetClaim is a claim's line: the claim as claim_read returns it, its stances named by
// id (each is a stance line of its own).
type datasetClaim struct {
	*ClaimView
	Attestations  []string `json:"attestations"`
	Refutations   []string `json:"refutations"`
	Verifications []string `json:"verifications"`
}

// datasetStance is a stance's line: the stance as claim_read returns it, with its claim and
// kind, a signed one's document with its proof, a version 1 one's legacy_signature.
type datasetStance struct {
	Claim  string `json:"claim"`
	Stance string `json:"stance"`
	*StanceView
	LegacySignature *SignatureView `json:"legacy_signature,omitempty"`
}

// datasetKey is a key's line, with its binding by the realm key (§ 14).
type datasetKey struct {
	ID        string          `json:"id"`
	Identity  string          `json:"identity"`
	DID       string          `json:"did"`
	PublicKey string          `json:"public_key"`
	CreatedAt time.Time       `json:"created_at"`
	Binding   json.RawMessage `json:"binding"`
}

// writeDataset writes the dataset of what read holds (its scope: scope; threadID: one
// thread, 0: all) to w, as it is read from read's snapshot.
func (s *Service) writeDataset(ctx context.Context, read *storage.Forum, scope storage.Scope, threadID int64, w io.Writer) error {
	d := newDatasetWriter(w)
	// exported_at is the snapshot's time (§ 14), read once the snapshot is fixed: a clock
	// read before its first read let in rows written in between, younger than it.
	exportedAt, err := read.SnapshotTime(ctx)
	if err != nil {
		return err
	}
	err = func() error {
		if err := s.datasetRooms(ctx, read, scope, threadID, d); err != nil {
			return err
		}
		if err := datasetThreads(ctx, read, threadID, d); err != nil {
			return err
		}
		if err := datasetMessages(ctx, read, threadID, d); err != nil {
			return err
		}
		if err := datasetEvents(ctx, read, threadID, d); err != nil {
			return err
		}
		if err := s.datasetClaims(ctx, read, threadID, exportedAt, d); err != nil {
			return err
		}
		keys, err := datasetStances(ctx, read, threadID, d)
		if err != nil {
			return err
		}
		realms, err := s.datasetKeys(ctx, read, keys, d)
		if err != nil {
			return err
		}
		return s.datasetEnd(ctx, d, exportedAt, realms)
	}()
	return fault(err)
}

// datasetRooms writes the rooms: of one thread, its room (and the room that holds it, when
// the scope reaches it); else every room within the scope.
func (s *Service) datasetRooms(ctx context.Context, read *storage.Forum, scope storage.Scope, threadID int64, d *datasetWriter) error {
	var rooms []storage.Room
	if threadID != 0 {
		t, err := read.Thread(ctx, threadID)
		if err != nil {
			return notFound(err, "thread %s not found", ThreadKey(threadID))
		}
		r, err := read.RoomByID(ctx, roomOf(t), scope)
		if err != nil {
			return err
		}
		if r.ParentID != nil {
			if p, err := read.RoomByID(ctx, *r.ParentID, scope); err == nil {
				rooms = append(rooms, *p)
			}
		}
		rooms = append(rooms, *r)
	} else {
		for after := int64(0); ; {
			page, err := read.RoomsAfter(ctx, storage.DatasetPage{After: after, Limit: datasetPage})
			if err != nil {
				return err
			}
			rooms = append(rooms, page...)
			if len(page) < datasetPage {
				break
			}
			after = page[len(page)-1].ID
		}
	}
	for i := range rooms {
		v := roomView(&rooms[i])
		if err := d.line("room", &datasetRoom{ID: v.ID, Name: v.Name, Title: v.Title, Description: v.Description,
			Parent: v.Parent, Archived: v.Archived, CreatedAt: v.CreatedAt}); err != nil {
			return err
		}
	}
	return nil
}

// pages reads the pages of one kind of row and writes each; last is the id of a page's last
// row.
func pages[T any](ctx context.Context, threadID int64, read func(context.Context, storage.DatasetPage) ([]T, error),
	last func(*T) int64, write func([]T) error) error {
	for after := int64(0); ; {
		page, err := read(ctx, storage.DatasetPage{Thread: threadID, After: after, Limit: datasetPage})
		if err != nil {
			return err
		}
		if err := write(page); err != nil {
			return err
		}
		if len(page) < datasetPage {
			return nil
		}
		after = last(&page[len(page)-1])
	}
}

func datasetThreads(ctx context.Context, read *storage.Forum, threadID int64, d *datasetWriter) error {
	return pages(ctx, threadID, read.ThreadsAfter, func(t *storage.Thread) int64 { return t.ID }, func(page []storage.Thread) error {
		for i := range page {
			if err := d.line("thread", threadView(&page[i])); err != nil {
				return err
			}
		}
		return nil
	})
}

// datasetMessages writes the messages as every token reads them: a hidden one without its
// body and provenance (§ 18), as the other formats.
func datasetMessages(ctx context.Context, read *storage.Forum, threadID int64, d *datasetWriter) error {
	return pages(ctx, threadID, read.MessagesAfter, func(m *storage.Message) int64 { return m.ID }, func(page []storage.Message) error {
		for i := range page {
			if err := d.line("message", messageView(&page[i])); err != nil {
				return err
			}
		}
		return nil
	})
}

func datasetEvents(ctx context.Context, read *storage.Forum, threadID int64, d *datasetWriter) error {
	return pages(ctx, threadID, read.EventsAfter, func(e *storage.Event) int64 { return e.ID }, func(page []storage.Event) error {
		for i := range page {
			if err := d.line("event", eventView(&page[i])); err != nil {
				return err
			}
		}
		return nil
	})
}

// datasetClaims writes the claims, each read as claim_read reads it (claimViews): its
// supersedes and the quorum come from its stances and from the claims it superseded, which
// may lie on earlier pages. Their stances are read a few claims at a time (exportGraph).
func (s *Service) datasetClaims(ctx context.Context, read *storage.Forum, threadID int64, now time.Time, d *datasetWriter) error {
	return s.exportGraphOf(ctx, read, threadID, now).eachClaim(false, func(v *ClaimView, _ graph.Label) error {
		return d.line("claim", &datasetClaim{ClaimView: v, Attestations: stanceIDs(v.Attestations),
			Refutations: stanceIDs(v.Refutations), Verifications: stanceIDs(v.Verifications)})
	})
}

func stanceIDs(stances []*StanceView) []string {
	out := make([]string, len(stances))
	for i, st := range stances {
		out[i] = st.ID
	}
	return out
}

// datasetStances writes the stances and answers the keys that made their proofs and
// version 1 signatures.
func datasetStances(ctx context.Context, read *storage.Forum, threadID int64, d *datasetWriter) (map[int64]bool, error) {
	keys := map[int64]bool{}
	err := pages(ctx, threadID, read.StancesAfter, func(st *storage.Stance) int64 { return st.ID }, func(page []storage.Stance) error {
		for i := range page {
			st := &page[i]
			v := stanceView(st)
			line := &datasetStance{Claim: ClaimKey(st.ClaimID), Stance: st.Kind, StanceView: v, LegacySignature: v.Signature}
			v.Signature = nil
			for _, k := range []*int64{st.ProofKeyID, st.SignatureKeyID} {
				if k != nil {
					keys[*k] = true
				}
			}
			if err := d.line("stance", line); err != nil {
				return err
			}
		}
		return nil
	})
	return keys, err
}

// datasetKeys writes the keys that signed the stances, by id, each with its binding, and
// answers the other realms whose keys signed the bindings of imported keys (as the JSON
// export's realms), for the export line.
func (s *Service) datasetKeys(ctx context.Context, read *storage.Forum, used map[int64]bool, d *datasetWriter) (map[string]string, error) {
	realms := map[string]string{}
	ids := make([]int64, 0, len(used))
	for id := range used {
		ids = append(ids, id)
	}
	sort.Slice(ids, func(i, j int) bool { return ids[i] < ids[j] })
	for start := 0; start < len(ids); start += datasetPage {
		chunk := ids[start:min(start+datasetPage, len(ids))]
		keys, err := read.KeysByID(ctx, chunk)
		if err != nil {
			return nil, err
		}
		for _, id := range chunk {
			k, ok := keys[id]
			if !ok || k.DID == nil {
				continue // a key without a did signs nothing; verify-export names its stance unbound
			}
			binding, err := s.binding(ctx, k)
			if err != nil {
				return nil, err
			}
			if k.Binding != nil {
				s.noteForeignRealm(realms, binding)
			}
			if err := d.line("key", &datasetKey{ID: KeyKey(k.ID), Identity: k.Identity, DID: *k.DID,
				PublicKey: k.PublicKey, CreatedAt: k.CreatedAt.UTC(), Binding: binding}); err != nil {
				return nil, err
			}
		}
	}
	return realms, nil
}

// datasetEnd writes the export line: the counts, the SHA-256 of every byte before it, and
// the realm key's proof over the line without it; realms (when imported keys need them) name
// the other realms' keys, as in the JSON export.
func (s *Service) datasetEnd(ctx context.Context, d *datasetWriter, exportedAt time.Time, realms map[string]string) error {
	key, err := s.RealmKey(ctx)
	if err != nil {
		return err
	}
	end := map[string]any{
		"type": "export", "parley": "1", "realm": s.realm, "realm_key": key.DID(),
		"exported_at": exportedAt.Format(time.RFC3339Nano), "counts": d.counts,
		"sha256": hex.EncodeToString(d.sum.Sum(nil)),
	}
	if len(realms) > 0 {
		end["realms"] = realms
	}
	doc, err := json.Marshal(end)
	if err != nil {
		return err
	}
	signed, err := s.SignAsRealm(ctx, doc)
	if err != nil {
		return err
	}
	if _, err := d.out.Write(append(signed, '\n')); err != nil {
		return err
	}
	return d.out.Flush()
}
