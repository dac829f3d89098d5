package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/parleyforum/parley/protocol"
	"github.com/parleyforum/parley/storage"
)

type createdToken struct {
	Token    string   `json:"token"`
	Identity string   `json:"identity"`
	Rights   []string `json:"rights"`
	Label    *string  `json:"label"`
	ID       int64    `json:"id"`
}

func decodeCreated(t *testing.T, out string) createdToken {
	t.Helper()
	// The exact set of keys is the contract: decode loosely and compare the keys too.
	var keys map[string]json.RawMessage
	if err := json.Unmarshal([]byte(out), &keys); err != nil {
		t.Fatalf("token create --json printed %q: %v", out, err)
	}
	got := slices.Sorted(maps.Keys(keys))
	if diff := cmp.Diff([]string{"id", "identity", "label", "rights", "token"}, got); diff != "" {
		t.Errorf("token create --json keys (-want +got):\n%s", diff)
	}
	var c createdToken
	if err := json.Unmarshal([]byte(out), &c); err != nil {
		t.Fatal(err)
	}
	return c
}

func TestTokenCommands(t *testing.T) {
	eachKind(t, func(t *testing.T, url string) {
		// An empty database: the command migrates it first. The secret comes alone on one line.
		out := parley(t, "token", "create", "--handle", "alice", "--db", url).ok(t, "token create").stdout
		plain := strings.TrimSuffix(out, "\n")
		if strings.ContainsAny(plain, " \n\t") || !strings.HasPrefix(plain, "parley_") || !strings.HasSuffix(out, "\n") {
			t.Fatalf("token create printed %q, want the secret alone on one line", out)
		}

		// Flags after and before, rights in any order, a label.
		out = parley(t, "token", "create", "--db", url, "--json", "--rights", "verify,read,lock,write", "--label", "KI Mod", "--handle", "mod").
			ok(t, "token create --json").stdout
		mod := decodeCreated(t, out)
		if mod.Identity != "ainotes:mod" || !slices.Equal(mod.Rights, []string{"read", "write", "lock", "verify"}) ||
			mod.Label == nil || *mod.Label != "KI Mod" || mod.ID == 0 || !strings.HasPrefix(mod.Token, "parley_") {
			t.Errorf("token create --json = %+v", mod)
		}

		// Default rights, no label: label is null. Another realm.
		bot := decodeCreated(t, parley(t, "--db="+url, "token", "create", "--handle=bot", "--json", "--realm", "lab").
			output(t))
		if bot.Identity != "lab:bot" || !slices.Equal(bot.Rights, []string{"read", "write"}) || bot.Label != nil {
			t.Errorf("token create --json with defaults = %+v", bot)
		}

		// A human's personal token holds every right.
		human := decodeCreated(t, parley(t, "token", "create", "--human", "carol", "--json", "--db", url).ok(t, "human token").stdout)
		if human.Identity != "human:carol" || !slices.Equal(human.Rights, []string{"read", "write", "lock", "verify"}) || human.Label != nil {
			t.Errorf("token create --human --json = %+v", human)
		}

		secrets := []string{plain, mod.Token, bot.Token, human.Token}
		checkSecretsNotStored(t, url, secrets)

		// The listing names every token, never a secret or its hash.
		list := parley(t, "token", "list", "--db", url).ok(t, "token list").stdout
		for _, want := range []string{"ainotes:alice", "ainotes:mod", "lab:bot", "human:carol", "KI Mod", "read,write,lock,verify"} {
			if !strings.Contains(list, want) {
				t.Errorf("token list does not show %q:\n%s", want, list)
			}
		}
		jsonList := parley(t, "token", "list", "--json", "--db", url).ok(t, "token list --json").stdout
		for _, s := range secrets {
			for _, out := range []string{list, jsonList} {
				if strings.Contains(out, s) || strings.Contains(out, protocol.HashTokenSecret(s)) {
					t.Fatalf("token list shows a secret or its hash:\n%s", out)
				}
			}
		}
		var listed []struct {
			ID        int64      `json:"id"`
			Identity  string     `json:"identity"`
			Human     bool       `json:"human"`
			Rights    []string   `json:"rights"`
			Label     *string    `json:"label"`
			CreatedAt time.Time  `json:"created_at"`
			RevokedAt *time.Time `json:"revoked_at"`
		}
		if err := json.Unmarshal([]byte(jsonList), &listed); err != nil {
			t.Fatalf("token list --json printed %q: %v", jsonList, err)
		}
		if len(listed) != 4 || listed[1].ID != mod.ID || !listed[3].Human || listed[0].Human || listed[1].CreatedAt.IsZero() {
			t.Errorf("token list --json = %+v", listed)
		}

		// Revoke with the id before the flags, and with the flags before the id.
		parley(t, "token", "revoke", strconv.FormatInt(mod.ID, 10), "--db", url).ok(t, "token revoke ID --db")
		parley(t, "token", "revoke", "--db", url, strconv.FormatInt(bot.ID, 10)).ok(t, "token revoke --db ID")
		parley(t, "token", "revoke", "--db", url, strconv.FormatInt(bot.ID, 10)).ok(t, "revoking again")
		db := openDB(t, url)
		for _, s := range []string{mod.Token, bot.Token} {
			if _, err := db.TokenByHash(context.Background(), protocol.HashTokenSecret(s)); !errors.Is(err, storage.ErrRevoked) {
				t.Errorf("a revoked token is found by its hash: err = %v", err)
			}
		}
		if _, err := db.TokenByHash(context.Background(), protocol.HashTokenSecret(human.Token)); err != nil {
			t.Errorf("revoking other tokens touched the human's: %v", err)
		}
		if err := json.Unmarshal([]byte(parley(t, "token", "list", "--json", "--db", url).stdout), &listed); err != nil {
			t.Fatal(err)
		}
		if listed[1].RevokedAt == nil || listed[2].RevokedAt == nil || listed[0].RevokedAt != nil {
			t.Errorf("token list --json after revoking = %+v", listed)
		}

		parley(t, "token", "revoke", "999", "--db", url).fails(t, "revoking an unknown id", exitRuntime, "no token with ID 999")
	})
}

// checkSecretsNotStored reads every column of every token row: the secrets appear nowhere,
// their hashes do.
func checkSecretsNotStored(t *testing.T, url string, secrets []string) {
	t.Helper()
	db := openDB(t, url)
	var rows []map[string]any
	if err := db.NewSelect().Table("tokens").Scan(context.Background(), &rows); err != nil {
		t.Fatal(err)
	}
	if len(rows) != len(secrets) {
		t.Fatalf("%d token rows, want %d", len(rows), len(secrets))
	}
	stored := fmt.Sprint(rows)
	for _, s := range secrets {
		if strings.Contains(stored, s) {
			t.Fatalf("the tokens table holds a secret: %s", stored)
		}
		if !strings.Contains(stored, protocol.HashTokenSecret(s)) {
			t.Errorf("the tokens table lacks the hash of a secret: %s", stored)
		}
	}
}
