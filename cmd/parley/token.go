package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/parleyforum/parley/protocol"
	"github.com/parleyforum/parley/storage"
)

func runTokenCreate(ctx context.Context, s *stdio, c *command, args []string) error {
	f := newFlags(s, c)
	handle := f.String("handle", "", "the agent's `HANDLE`: the token acts as <realm>:HANDLE")
	human := f.String("human", "", "a personal token acting as human:`NAME`")
	rightsList := f.String("rights", protocol.DefaultAgentRights.String(), "the agent's `RIGHTS`, of read, write, lock, verify")
	label := f.String("label", "", "the moderation `LABEL` of a lock holder (default: the handle)")
	rooms := f.String("rooms", "", "scope the token to these `ROOMS` (names or rm_N, comma-separated) and the rooms inside them; default every room")
	asJSON := f.Bool("json", false, "print {\"token\",\"identity\",\"rights\",\"label\",\"id\",\"rooms\"} instead of the secret alone")
	if err := f.parseFlagsOnly(args); err != nil {
		return err
	}
	cfg, err := f.config()
	if err != nil {
		return err
	}
	given := f.given()
	nt, err := newTokenFor(cfg.Realm, given, *handle, *human, *rightsList, *label)
	if err != nil {
		return err
	}

	if _, scoped := given["rooms"]; scoped && nt.Human {
		return usagef("token create: a human token reaches every room: drop --rooms")
	}
	db, err := openMigrated(ctx, cfg)
	if err != nil {
		return err
	}
	defer db.Close()
	if *rooms != "" {
		if nt.Rooms, err = protocol.New(db, protocol.Options{Realm: cfg.Realm}).ResolveTokenRooms(ctx, strings.Split(*rooms, ",")); err != nil {
			return refusalError("token create: --rooms", err)
		}
	}
	secret, err := protocol.NewTokenSecret()
	if err != nil {
		return err
	}
	nt.SecretHash = protocol.HashTokenSecret(secret)
	t, err := db.CreateToken(ctx, nt)
	if err != nil {
		return fmt.Errorf("creating the token: %w", err)
	}
	if !*asJSON {
		fmt.Fprintln(s.out, secret)
		return nil
	}
	names, err := tokenRooms(ctx, db, t)
	if err != nil {
		return err
	}
	return json.NewEncoder(s.out).Encode(struct {
		Token    string   `json:"token"`
		Identity string   `json:"identity"`
		Rights   []string `json:"rights"`
		Label    *string  `json:"label"`
		ID       int64    `json:"id"`
		Rooms    []string `json:"rooms,omitempty"` // only for a scoped token: the old form stays
	}{secret, t.Identity, rightsOf(t), t.Label, t.ID, names})
}

// newTokenFor checks the flags of token create and says what token they ask for.
func newTokenFor(realm string, given map[string]string, handle, human, rightsList, label string) (storage.NewToken, error) {
	_, hasHandle := given["handle"]
	_, hasHuman := given["human"]
	_, hasRights := given["rights"]
	_, hasLabel := given["label"]
	switch {
	case hasHandle == hasHuman:
		return storage.NewToken{}, usagef("token create: give either --handle HANDLE or --human NAME")
	case hasHuman && (hasRights || hasLabel):
		return storage.NewToken{}, usagef("token create: a human token holds every right and has no label: drop --rights and --label")
	case hasHuman:
		if !protocol.ValidHandle(human) {
			return storage.NewToken{}, usagef("token create: %q is not a valid name (lower-case letters, digits, '.', '_', '-'; up to 64)", human)
		}
		return storage.NewToken{
			Identity: protocol.HumanIdentity(human),
			Human:    true,
			Rights:   protocol.AllRightsSet().String(),
		}, nil
	}
	if !protocol.ValidHandle(handle) {
		return storage.NewToken{}, usagef("token create: %q is not a valid handle (lower-case letters, digits, '.', '_', '-'; up to 64)", handle)
	}
	rights, err := protocol.ParseRights(rightsList)
	if err != nil {
		return storage.NewToken{}, usagef("token create: %v", err)
	}
	nt := storage.NewToken{Identity: protocol.AgentIdentity(realm, handle), Rights: rights.String()}
	if hasLabel {
		if err := protocol.CheckLabel(label); err != nil {
			return storage.NewToken{}, usagef("token create: %v", err)
		}
		nt.Label = &label
	}
	return nt, nil
}

// rightsOf is a token's rights as a list, in the manifest's order.
func rightsOf(t *storage.Token) []string {
	r, err := protocol.ParseRights(t.Rights)
	if err != nil {
		return strings.Split(t.Rights, ",") // as stored: a listing shows what is there
	}
	return r.List()
}

func runTokenList(ctx context.Context, s *stdio, c *command, args []string) error {
	f := newFlags(s, c)
	asJSON := f.Bool("json", false, "print a JSON array")
	if err := f.parseFlagsOnly(args); err != nil {
		return err
	}
	cfg, err := f.config()
	if err != nil {
		return err
	}
	db, err := openMigrated(ctx, cfg)
	if err != nil {
		return err
	}
	defer db.Close()
	tokens, err := db.Tokens(ctx)
	if err != nil {
		return fmt.Errorf("listing the tokens: %w", err)
	}
	rooms := make([][]string, len(tokens))
	for i := range tokens {
		if rooms[i], err = tokenRooms(ctx, db, &tokens[i]); err != nil {
			return err
		}
	}
	if *asJSON {
		return printTokensJSON(s, tokens, rooms)
	}
	return printTokensTable(s, tokens, rooms)
}

// tokenRooms names the rooms a token is scoped to; nil for every room.
func tokenRooms(ctx context.Context, db *storage.DB, t *storage.Token) ([]string, error) {
	names, err := protocol.New(db, protocol.Options{}).TokenRoomNames(ctx, t.Rooms)
	if err != nil {
		return nil, fmt.Errorf("naming the rooms of token %d: %w", t.ID, err)
	}
	return names, nil
}

// The listing names each token by what it is, never by its secret or the secret's hash.

type listedToken struct {
	ID        int64      `json:"id"`
	Identity  string     `json:"identity"`
	Human     bool       `json:"human"`
	Rights    []string   `json:"rights"`
	Label     *string    `json:"label"`
	CreatedAt time.Time  `json:"created_at"`
	RevokedAt *time.Time `json:"revoked_at"`
	Rooms     []string   `json:"rooms"` // null: every room
}

func printTokensJSON(s *stdio, tokens []storage.Token, rooms [][]string) error {
	out := make([]listedToken, 0, len(tokens))
	for i := range tokens {
		t := &tokens[i]
		out = append(out, listedToken{t.ID, t.Identity, t.Human, rightsOf(t), t.Label, t.CreatedAt.UTC(), utcOrNil(t.RevokedAt), rooms[i]})
	}
	return json.NewEncoder(s.out).Encode(out)
}

func printTokensTable(s *stdio, tokens []storage.Token, rooms [][]string) error {
	tw := tabwriter.NewWriter(s.out, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tIDENTITY\tRIGHTS\tLABEL\tROOMS\tCREATED\tREVOKED")
	for i := range tokens {
		t := &tokens[i]
		label, revoked := "-", "-"
		if t.Label != nil {
			label = *t.Label
		}
		if t.RevokedAt != nil {
			revoked = t.RevokedAt.UTC().Format(time.RFC3339)
		}
		scope := "*"
		if rooms[i] != nil {
			scope = strings.Join(rooms[i], ",")
		}
		fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%s\t%s\t%s\n", t.ID, t.Identity, strings.Join(rightsOf(t), ","),
			label, scope, t.CreatedAt.UTC().Format(time.RFC3339), revoked)
	}
	return tw.Flush()
}

func utcOrNil(t *time.Time) *time.Time {
	if t == nil {
		return nil
	}
	u := t.UTC()
	return &u
}

func runTokenRevoke(ctx context.Context, s *stdio, c *command, args []string) error {
	f := newFlags(s, c)
	positional, err := f.parse(args)
	if err != nil {
		return err
	}
	if len(positional) != 1 {
		return usagef("token revoke: give exactly one token ID (see parley token list)")
	}
	id, err := strconv.ParseInt(positional[0], 10, 64)
	if err != nil || id < 1 {
		return usagef("token revoke: %q is not a token ID (a whole number, see parley token list)", positional[0])
	}
	cfg, err := f.config()
	if err != nil {
		return err
	}
	db, err := openMigrated(ctx, cfg)
	if err != nil {
		return err
	}
	defer db.Close()
	if err := db.RevokeToken(ctx, id); errors.Is(err, storage.ErrNotFound) {
		return fmt.Errorf("no token with ID %d (see parley token list)", id)
	} else if err != nil {
		return fmt.Errorf("revoking token %d: %w", id, err)
	}
	fmt.Fprintf(s.out, "revoked token %d\n", id)
	return nil
}
