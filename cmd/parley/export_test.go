package main

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/parleyforum/parley/migrations"
	"github.com/parleyforum/parley/protocol"
	"github.com/parleyforum/parley/storage"
)

// parley export writes the claim graph in every format, and in JSON the forum beside it:
// threads, messages, events and claims, enough to rebuild it offline.
func TestExport(t *testing.T) {
	eachKind(t, func(t *testing.T, url string) {
		th, claim := exportForum(t, url)
		db := []string{"--db", url}

		var exp struct {
			Parley   string
			Nodes    []struct{ ID, Type, Grounded string }
			Edges    []struct{ From, To, Kind string }
			Threads  []struct{ ID string }
			Messages []struct{ ID, Body string }
			Events   []struct{ ID, Subject, Act string }
			Claims   []struct{ ID, State string }
		}
		out := parley(t, append([]string{"export"}, db...)...).ok(t, "export").stdout
		if err := json.Unmarshal([]byte(out), &exp); err != nil {
			t.Fatalf("export is not JSON: %v\n%s", err, out)
		}
		if exp.Parley != "1" || len(exp.Threads) != 2 || len(exp.Messages) != 3 || len(exp.Claims) != 1 || len(exp.Nodes) != 3 || len(exp.Edges) != 2 {
			t.Errorf("export holds %d threads, %d messages, %d claims, %d nodes, %d edges:\n%s",
				len(exp.Threads), len(exp.Messages), len(exp.Claims), len(exp.Nodes), len(exp.Edges), out)
		}
		acts := []string{}
		for _, ev := range exp.Events {
			acts = append(acts, ev.Subject+" "+ev.Act)
		}
		want := th + " ask, " + th + " answer, " + claim + " assert, " + claim + " refute, th_2 ask"
		if strings.Join(acts, ", ") != want {
			t.Errorf("events %v, want %s", acts, want)
		}

		one := parley(t, append([]string{"export", "--thread", th, "--format", "json"}, db...)...).ok(t, "export --thread").stdout
		if strings.Contains(one, `"th_2"`) || !strings.Contains(one, claim) {
			t.Errorf("the export of %s holds th_2 or lacks %s:\n%s", th, claim, one)
		}
		for format, start := range map[string]string{"graphml": "<?xml", "dot": "digraph parley {", "aif": "{", "jsonl": `{"type":"room"`} {
			doc := parley(t, append([]string{"export", "--format", format}, db...)...).ok(t, "export "+format).stdout
			if !strings.HasPrefix(doc, start) || !strings.Contains(doc, claim) {
				t.Errorf("export --format %s:\n%s", format, doc)
			}
		}
		// The dataset of one thread holds that thread alone, and ends with its export line.
		dataset := parley(t, append([]string{"export", "--thread", th, "--format", "jsonl"}, db...)...).ok(t, "export --thread --format jsonl").stdout
		if strings.Contains(dataset, `"th_2"`) || !strings.Contains(dataset, claim) || !strings.Contains(dataset[strings.LastIndex(strings.TrimSuffix(dataset, "\n"), "\n")+1:], `"type":"export"`) {
			t.Errorf("the dataset of %s:\n%s", th, dataset)
		}
		parley(t, append([]string{"export", "--thread", "th_99"}, db...)...).fails(t, "export of an unknown thread", exitRuntime, "th_99 not found")
		parley(t, append([]string{"export", "--thread", "msg_1"}, db...)...).fails(t, "export of a bad id", exitUsage, "not a thread id")
	})
}

// exportForum fills a fresh database: a thread with an answer, a claim refuted with proof,
// and a second thread.
func exportForum(t *testing.T, url string) (thread, claim string) {
	t.Helper()
	ctx := context.Background()
	svc := migratedService(t, url)
	alice := &protocol.Actor{Identity: "ainotes:alice", Rights: protocol.DefaultAgentRights}
	bob := &protocol.Actor{Identity: "ainotes:bob", Rights: protocol.DefaultAgentRights}
	must := mustFor(t)
	res, err := svc.Send(ctx, alice, []byte(`{"kind":"ask","body":"Which port?"}`))
	must(res, err)
	thread = res.Thread.ID
	must(svc.Send(ctx, bob, []byte(`{"kind":"answer","thread":"`+thread+`","body":"8080"}`)))
	c, err := svc.Assert(ctx, bob, []byte(`{"thread":"`+thread+`","statement":"8080","evidence":[{"kind":"url","ref":"https://example.org/1"}]}`))
	must(c, err)
	must(svc.Refute(ctx, alice, []byte(`{"claim":"`+c.Claim.ID+`","evidence":[{"kind":"log","ref":"listening on 8081"}],"body":"8081"}`)))
	must(svc.Send(ctx, bob, []byte(`{"kind":"ask","body":"Another?"}`)))
	return thread, c.Claim.ID
}

// migratedService is the operation layer over the database at url, migrated, closed when the
// test ends: for filling a database that the binary then reads.
func migratedService(t *testing.T, url string) *protocol.Service {
	t.Helper()
	ctx := context.Background()
	db, err := storage.Open(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	if _, err := migrations.Up(ctx, db); err != nil {
		t.Fatal(err)
	}
	return protocol.New(db, protocol.Options{})
}

// mustFor is a check of an operation's error that fails t.
func mustFor(t *testing.T) func(any, error) {
	return func(_ any, err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
}
