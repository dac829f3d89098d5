package protocol_test

import (
	"bytes"
	"context"
	"encoding/json"
	"sync"
	"testing"
	"time"

	"github.com/parleyforum/parley/protocol"
	"github.com/parleyforum/parley/signed"
	"github.com/parleyforum/parley/storage"
	"github.com/parleyforum/parley/storage/storagetest"
)

// realmAgent is an agent of realm with rights.
func realmAgent(realm, handle string, rights ...protocol.Right) *protocol.Actor {
	r := protocol.Rights{protocol.RightRead: true, protocol.RightWrite: true}
	for _, right := range rights {
		r[right] = true
	}
	return &protocol.Actor{Identity: realm + ":" + handle, Rights: r}
}

// alphaExport is realm alpha's JSON export of one claim by alice, attested by bob with a
// signed stance and verified by vera: verified there, at alpha's quorum of 1.
func alphaExport(t *testing.T, db *storage.DB) (export []byte, realmKey string) {
	t.Helper()
	return alphaExportAs(t, db, "json")
}

// alphaExportAs is alphaExport in format (json, or the jsonl dataset).
func alphaExportAs(t *testing.T, db *storage.DB, format string) (export []byte, realmKey string) {
	t.Helper()
	ctx := context.Background()
	svc := protocol.New(db, protocol.Options{Realm: "alpha", Limits: generous()})
	alice, bob, vera := realmAgent("alpha", "alice"), newSigner(t, svc, realmAgent("alpha", "bob"), 'b'), realmAgent("alpha", "vera", protocol.RightVerify)
	th := send(t, svc, alice, envelope("ask", "", "Does the build pass?")).Thread.ID
	const statement = "the build passes on main"
	claim := mustClaim(t, svc, alice, "assert", `{"thread":"`+th+`","statement":"`+statement+`","evidence":[{"kind":"log","ref":"PASS"}]}`).ID
	evidence := []protocol.Evidence{{Kind: "log", Ref: "PASS again"}}
	doc := protocol.StanceDocument("attest", "alpha", claim, statement, bob.actor.Identity, evidence, nil, nil)
	proof := stanceProof(t, signed.NewSigner(bob.priv), doc, time.Now())
	mustClaim(t, svc, bob.actor, "attest", jsonOf(map[string]any{"claim": claim, "evidence": evidence, "proof": proof}))
	if c := mustClaim(t, svc, vera, "verify", `{"claim":"`+claim+`"}`); c.State != protocol.ClaimVerified {
		t.Fatalf("alpha's claim is %s, not verified", c.State)
	}
	var buf bytes.Buffer
	if err := svc.WriteExport(ctx, 0, format, &buf); err != nil {
		t.Fatal(err)
	}
	key, err := svc.RealmKey(ctx)
	if err != nil {
		t.Fatal(err)
	}
	return buf.Bytes(), key.DID()
}

// The imported claim's state is this forum's: with a quorum of 2, alpha's one seal leaves it
// supported, a proposal of its foreign authors, until a second verifier here seals it.
func TestImportReplaysByThisForumsRules(t *testing.T) {
	storagetest.Each(t, func(t *testing.T, db *storage.DB) {
		export, didA := alphaExport(t, db)
		limits := generous()
		limits.VerifyQuorum = 2
		beta := protocol.New(storagetest.Open(t, db.Kind()), protocol.Options{Realm: "beta", Limits: limits, TrustRealms: map[string]string{"alpha": didA}})
		res, err := beta.ImportExport(context.Background(), protocol.OperatorActor(), export, 0)
		if err != nil {
			t.Fatal(err)
		}
		c := mustClaim(t, beta, reader, "read", `{"claim":"`+res.Claims[0].ID+`"}`)
		if c.State != protocol.ClaimSupported || c.Confirmed || c.Quorum.Verifiers != 1 || c.Quorum.Of != 2 ||
			c.Verifications[0].By.Identity != "alpha:vera" || c.Attestations[0].Document == nil {
			t.Fatalf("beta reads alpha's verified claim as %+v", c)
		}
		sealed := mustClaim(t, beta, realmAgent("beta", "walt", protocol.RightVerify), "verify", `{"claim":"`+c.ID+`"}`)
		if sealed.State != protocol.ClaimVerified {
			t.Errorf("a second verifier here leaves the imported claim %s", sealed.State)
		}
	})
}

// Two imports of one export at once write it once; the other answers it is here, or asks
// to be run again.
func TestImportAtOnceWritesOnce(t *testing.T) {
	storagetest.Each(t, func(t *testing.T, db *storage.DB) {
		export, didA := alphaExport(t, db)
		beta := protocol.New(storagetest.Open(t, db.Kind()), protocol.Options{Realm: "beta", Limits: generous(), TrustRealms: map[string]string{"alpha": didA}})
		var wg sync.WaitGroup
		errs := make([]error, 4)
		for i := range errs {
			wg.Go(func() { _, errs[i] = beta.ImportExport(context.Background(), protocol.OperatorActor(), export, 0) })
		}
		wg.Wait()
		ok := 0
		for _, err := range errs {
			if err == nil {
				ok++
			} else if e, refused := protocol.AsError(err); !refused || e.Reason != protocol.ReasonInvalidTransition {
				t.Errorf("an import beside others failed: %v", err)
			}
		}
		var buf bytes.Buffer
		if err := beta.WriteExport(context.Background(), 0, "json", &buf); err != nil {
			t.Fatal(err)
		}
		var exp struct{ Threads, Claims []json.RawMessage }
		json.Unmarshal(buf.Bytes(), &exp)
		if ok == 0 || len(exp.Claims) != 1 || len(exp.Threads) != 1 {
			t.Errorf("%d of 4 imports at once succeeded, writing %d claims in %d threads", ok, len(exp.Claims), len(exp.Threads))
		}
	})
}

// A key speaks for one identity, across realms too: bob's key, registered here by a local
// identity, refuses alpha's export whole; and only a human administrator imports.
func TestImportRefusesAKeyHeldHere(t *testing.T) {
	storagetest.Each(t, func(t *testing.T, db *storage.DB) {
		export, didA := alphaExport(t, db)
		betaDB := storagetest.Open(t, db.Kind())
		beta := protocol.New(betaDB, protocol.Options{Realm: "beta", Limits: generous(), TrustRealms: map[string]string{"alpha": didA}})
		newSigner(t, beta, realmAgent("beta", "mallory"), 'b')
		_, err := beta.ImportExport(context.Background(), protocol.OperatorActor(), export, 0)
		wantRefused(t, err, protocol.ReasonInvalidTransition)
		_, err = beta.Import(context.Background(), realmAgent("beta", "root", protocol.RightLock, protocol.RightVerify), export)
		wantRefused(t, err, protocol.ReasonTokenRightMissing)
		_, err = beta.Import(context.Background(), protocol.HumanActor("ann"), export)
		wantRefused(t, err, protocol.ReasonTokenRightMissing) // ann has no administrator's account
		if n := len(allThreads(t, beta)); n != 0 {
			t.Errorf("the refused imports wrote %d threads", n)
		}
	})
}

// An import may name the thread its claims land in (POST /v1/imports's member thread, parley
// import --thread): an open thread of this forum takes them; a thread that does not exist,
// or a member that is no thread id, is refused and nothing is written.
func TestImportIntoANamedThread(t *testing.T) {
	storagetest.Each(t, func(t *testing.T, db *storage.DB) {
		ctx := context.Background()
		export, didA := alphaExport(t, db)
		betaDB := storagetest.Open(t, db.Kind())
		if _, err := betaDB.CreateAdmin(ctx, "root", "$argon2id$x"); err != nil {
			t.Fatal(err)
		}
		beta := protocol.New(betaDB, protocol.Options{Realm: "beta", Limits: generous(), TrustRealms: map[string]string{"alpha": didA}})
		here := send(t, beta, realmAgent("beta", "carol"), envelope("ask", "", "What did alpha find?")).Thread.ID
		withThread := func(thread any) []byte {
			var top map[string]any
			if err := json.Unmarshal(export, &top); err != nil {
				t.Fatal(err)
			}
			top["thread"] = thread
			out, _ := json.Marshal(top)
			return out
		}
		for _, c := range []struct {
			name   string
			thread any
			want   protocol.Reason
		}{
			{"a thread that does not exist", "th_999", protocol.ReasonNotFound},
			{"a message id", "msg_1", protocol.ReasonInvalidBody},
			{"a number", 1, protocol.ReasonInvalidBody},
		} {
			t.Run(c.name, func(t *testing.T) {
				_, err := beta.Import(ctx, human("root"), withThread(c.thread))
				wantRefused(t, err, c.want)
				if n := len(allThreads(t, beta)); n != 1 {
					t.Errorf("the refused import left %d threads, want carol's alone", n)
				}
			})
		}
		res, err := beta.Import(ctx, human("root"), withThread(here))
		if err != nil {
			t.Fatal(err)
		}
		if len(res.Threads) != 1 || res.Threads[0] != here || len(res.Claims) != 1 || !res.Claims[0].New {
			t.Fatalf("the import into %s answered %+v", here, res)
		}
		if c := mustClaim(t, beta, reader, "read", `{"claim":"`+res.Claims[0].ID+`"}`); c.Thread != here || c.Origin == nil || c.Origin.Realm != "alpha" {
			t.Errorf("the imported claim reads in %s with origin %+v, want %s and alpha", c.Thread, c.Origin, here)
		}
		if n := len(allThreads(t, beta)); n != 1 {
			t.Errorf("the import into %s made %d threads, want it alone", here, n)
		}
	})
}
