package main

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"strings"

	"github.com/parleyforum/parley/graph"
	"github.com/parleyforum/parley/signed"
)

// runVerifyExport checks every proof of an export offline (PROTOCOL.md § 14): the export's
// own proof by the realm key, each key's binding, each signed stance's document, and each
// version 1 signature — in the JSON of parley export, GraphML, AIF or the JSON Lines
// dataset (also its hash, order and counts) — or the proof of any
// JSON document secured by an eddsa-jcs-2022 DataIntegrityProof. It needs no database and
// no server. It prints one line per proof and a summary that names the realm key that signed
// first, and fails (exit 1) when one does not hold. With --realm-key or --trust-realm the
// export's proof and every binding must also be made by one of those keys: a proof holds for
// whoever made it, and an export re-signed whole under another key holds for that key.
// A graph read (GET /v1/graph, the graph page's downloads) carries no custody: it is said so,
// and its stance documents are checked alone.
func runVerifyExport(ctx context.Context, s *stdio, c *command, args []string) error {
	f := newFlags(s, c)
	realmKeys, trusted := &listFlag{}, &listFlag{}
	f.Var(realmKeys, "realm-key", "fail unless the export and its bindings are signed by this realm key (a `DID`, as the realm's parley realm-key prints it); repeatable")
	f.Var(trusted, "trust-realm", "fail unless the export and its bindings are signed by the key of the realm they name, `NAME=DID`; repeatable, or name=did,…")
	positional, err := f.parse(args)
	if err != nil {
		return err
	}
	if len(positional) != 1 {
		return usagef("verify-export: name the one FILE to check (see parley help verify-export)")
	}
	expected, err := expectedRealms(realmKeys.values, trusted.String())
	if err != nil {
		return usagef("verify-export: %v", err)
	}
	report, err := checkExportFile(positional[0])
	if err != nil {
		return fmt.Errorf("verify-export: %s: %w", positional[0], err)
	}
	report.Expect(expected)
	if report.GraphRead {
		fmt.Fprintln(s.out, graphReadNote)
	}
	for _, l := range report.Lines {
		if l.Err != nil {
			fmt.Fprintf(s.out, "FAIL %s: %v\n", l.What, l.Err)
			continue
		}
		fmt.Fprintf(s.out, "ok   %s\n", l.What)
	}
	failed := report.Failed()
	fmt.Fprintf(s.out, "%s: %d proofs hold, %d fail, %d stances unsigned\n", signedBy(report, expected), len(report.Lines)-failed, failed, report.Unsigned)
	if why := report.ExpectFailure(expected); why != "" {
		return fmt.Errorf("verify-export: %s", why)
	}
	if failed > 0 {
		return fmt.Errorf("verify-export: %d of %d proofs do not hold", failed, len(report.Lines))
	}
	if len(report.Lines) == 0 {
		return fmt.Errorf("verify-export: %s carries no proof to check", positional[0])
	}
	return nil
}

// graphReadNote is what verify-export says of a graph read.
const graphReadNote = "this is a graph read, not an export: no custody to check; its stance documents are checked alone (an export carries custody: parley export, GET /v1/export)"

// signedBy begins the summary line: the realm key that signed, first, and whether it was the
// one expected.
func signedBy(r *graph.CustodyReport, expected graph.ExpectedRealms) string {
	var who string
	switch {
	case r.GraphRead:
		return "a graph read, no custody"
	case r.Signer == "" && r.RealmKey != "":
		return "the realm key " + r.RealmKey + " of realm " + r.Realm + ", whose proof does not hold"
	case r.Signer == "":
		return "no realm key"
	case r.Realm == "":
		who = "signed by " + r.Signer
	default:
		who = "signed by the realm key " + r.Signer + " of realm " + r.Realm
	}
	switch {
	case expected.Empty():
		return who + " (not pinned: --realm-key DID checks it)"
	case r.ExpectFailure(expected) != "":
		return who + ", expected " + expected.String()
	}
	return who + ", as expected"
}

// expectedRealms reads --realm-key and --trust-realm.
func expectedRealms(keys []string, trusted string) (graph.ExpectedRealms, error) {
	var e graph.ExpectedRealms
	for _, k := range keys {
		k = strings.TrimSpace(k)
		if _, err := signed.ParseDIDKey(k); err != nil || strings.Contains(k, "#") {
			return e, fmt.Errorf("--realm-key %q is not a realm key (did:key:z6Mk…, as parley realm-key prints it)", k)
		}
		e.Keys = append(e.Keys, k)
	}
	named, err := parseTrustRealms(trusted)
	if err != nil {
		return e, err
	}
	if len(named) > 0 {
		e.Named = named
	}
	return e, nil
}

// checkExportFile checks the file: a dataset (JSON Lines) as it is read, without holding it,
// anything else whole.
func checkExportFile(path string) (*graph.CustodyReport, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	first, err := bufio.NewReaderSize(f, 1<<20).ReadBytes('\n')
	if err != nil && len(first) == 0 {
		return nil, fmt.Errorf("%s is empty", path)
	}
	if graph.LooksLikeDataset(first) {
		if _, err := f.Seek(0, 0); err != nil {
			return nil, err
		}
		return graph.CheckDataset(f)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	return graph.CheckCustody(data)
}
