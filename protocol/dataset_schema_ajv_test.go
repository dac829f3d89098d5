package protocol_test

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"

	"github.com/parleyforum/parley/protocol"
	"github.com/parleyforum/parley/storage"
	"github.com/parleyforum/parley/storage/storagetest"
)

// The schemas as a researcher's tools read them: Ajv (JSON Schema draft 2020-12, strict mode,
// formats asserted by ajv-formats; both devDependencies of package.json, installed by npm ci
// as make test does) compiles every schema as served, validates every line of a real dataset
// against them and refuses each bad line of schemaBadLines. It needs node and node_modules:
// without them it fails, never skips.
func TestDatasetSchemasUnderAjv(t *testing.T) {
	node, err := exec.LookPath("node")
	if err != nil {
		t.Fatal("node is missing: install Node.js, then npm ci in the project (make test does both checks)")
	}
	storagetest.Each(t, func(t *testing.T, db *storage.DB) {
		f := newDatasetForum(t, db)
		dir := t.TempDir()
		schemas := filepath.Join(dir, "schema")
		if err := os.Mkdir(schemas, 0o700); err != nil {
			t.Fatal(err)
		}
		for _, typ := range protocol.DatasetLineTypes {
			raw, _ := protocol.DatasetSchemaFor(typ, protocol.DefaultLimits())
			if err := os.WriteFile(filepath.Join(schemas, typ+".json"), raw, 0o600); err != nil {
				t.Fatal(err)
			}
		}
		cases := struct {
			Valid   []string `json:"valid"`
			Invalid []struct {
				Name string `json:"name"`
				Line string `json:"line"`
			} `json:"invalid"`
		}{Valid: schemaGoodLines}
		data := f.dataset(t, storage.Scope{}, 0)
		for _, line := range bytes.Split(bytes.TrimSuffix(data, []byte("\n")), []byte("\n")) {
			cases.Valid = append(cases.Valid, string(line))
		}
		for _, b := range schemaBadLines {
			cases.Invalid = append(cases.Invalid, struct {
				Name string `json:"name"`
				Line string `json:"line"`
			}{b.name, b.line})
		}
		raw, err := json.Marshal(cases)
		if err != nil {
			t.Fatal(err)
		}
		casesFile := filepath.Join(dir, "cases.json")
		if err := os.WriteFile(casesFile, raw, 0o600); err != nil {
			t.Fatal(err)
		}
		var stdout, stderr bytes.Buffer
		cmd := exec.Command(node, filepath.Join("testdata", "ajv", "check.mjs"), schemas, casesFile)
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		runErr := cmd.Run()
		var res struct {
			Compiled []string `json:"compiled"`
			Valid    int      `json:"valid"`
			Refused  int      `json:"refused"`
			Errors   []string `json:"errors"`
		}
		if err := json.Unmarshal(stdout.Bytes(), &res); err != nil {
			t.Fatalf("node testdata/ajv/check.mjs: %v (%v)\n%s%s\n(node_modules is installed by npm ci, as make test does)", runErr, err, stdout.String(), stderr.String())
		}
		for _, e := range res.Errors {
			t.Error(e)
		}
		if len(res.Compiled) != len(protocol.DatasetLineTypes) || res.Valid != len(cases.Valid) || res.Refused != len(cases.Invalid) {
			t.Errorf("Ajv compiled %v, passed %d of %d valid lines, refused %d of %d bad ones", res.Compiled, res.Valid, len(cases.Valid), res.Refused, len(cases.Invalid))
		}
		for _, typ := range protocol.DatasetLineTypes {
			if !slices.Contains(res.Compiled, "/v1/schema/"+typ+".json") {
				t.Errorf("no schema compiled with the $id /v1/schema/%s.json: %v", typ, res.Compiled)
			}
		}
	})
}
