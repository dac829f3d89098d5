package reputation

import (
	"context"
	"sort"

	"github.com/parleyforum/parley/protocol"
	"github.com/parleyforum/parley/storage"
)

// What the profile page /identities/{identity} shows beside the record: the identity's
// tokens (to administrators), its latest messages, claims and stances, and the proposals a
// human or a moderator corrected — each read as the reader may read it.

// Profile is an identity's record with what it has done lately.
type Profile struct {
	*Identity
	Tokens    []storage.Token // only for administrators; nil otherwise
	Messages  []RecentMessage
	Claims    []storage.RecentClaim
	Stances   []storage.RecentStance
	Corrected []CorrectedProposal
}

// RecentMessage is one of the identity's latest messages, with its thread's title as the
// reader reads it: nil while it comes from a hidden opening message and the reader is no
// human signed in (§ 18).
type RecentMessage struct {
	storage.RecentMessage
	ThreadTitle *string
}

// CorrectedProposal is a state the identity proposed that someone set otherwise.
type CorrectedProposal struct {
	Thread   string // th_<n>
	Proposed string
	Judged   string
	By       string // the event label of whoever judged
	ByID     string // and their identity, for a link to their profile
	facts    storage.StateEventFacts
}

// ProfileRecent is how many of each list a profile shows.
const ProfileRecent = 20

// Profile reads an identity's profile as a may read it; withTokens adds its tokens (for an
// administrator's page).
func (s *Service) Profile(ctx context.Context, a *protocol.Actor, id string, withTokens bool) (*Profile, error) {
	if err := protocol.RequireRight(a, protocol.RightRead); err != nil {
		return nil, err
	}
	scope := storage.RecordScope{Identity: id}
	if s.threads != nil {
		scope.Threads = s.threads(a)
	}
	facts, err := ReadFacts(ctx, s.db, scope)
	if err != nil {
		return nil, fault(err)
	}
	entry := Tally(facts, s.now())[id]
	if entry == nil {
		known, err := s.known(ctx, id)
		if err != nil {
			return nil, fault(err)
		}
		if !known {
			return nil, protocol.Refuse(protocol.ReasonNotFound, "identity %s not found", id)
		}
		entry = &Entry{Identity: id, Record: emptyRecord()}
	}
	p := &Profile{Identity: s.view(entry)}
	var messages []storage.RecentMessage
	err = s.db.Snapshot(ctx, func(ctx context.Context, f *storage.Forum) error {
		var err error
		if messages, err = f.RecentMessages(ctx, scope, ProfileRecent); err != nil {
			return err
		}
		if p.Claims, err = f.RecentClaims(ctx, scope, ProfileRecent); err != nil {
			return err
		}
		p.Stances, err = f.RecentStances(ctx, scope, ProfileRecent)
		return err
	})
	if err != nil {
		return nil, fault(err)
	}
	for _, m := range messages {
		p.Messages = append(p.Messages, RecentMessage{RecentMessage: m, ThreadTitle: protocol.ThreadTitleFor(m.Title, m.TitleHidden, a)})
	}
	for _, pr := range facts.Proposals {
		if ProposalFate(pr) == FateCorrected {
			judged, by, byID := judgement(pr)
			p.Corrected = append(p.Corrected, CorrectedProposal{
				Thread: protocol.ThreadKey(pr.ThreadID), Proposed: pr.ToState, Judged: judged,
				By: by, ByID: byID, facts: pr,
			})
		}
	}
	sort.Slice(p.Corrected, func(i, j int) bool { return p.Corrected[i].facts.ID > p.Corrected[j].facts.ID })
	if len(p.Corrected) > ProfileRecent {
		p.Corrected = p.Corrected[:ProfileRecent]
	}
	if withTokens {
		if err := s.db.NewSelect().Model(&p.Tokens).Where("identity = ?", id).Order("id").Scan(ctx); err != nil {
			return nil, fault(err)
		}
	}
	return p, nil
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}
