package protocol

import (
	"bytes"
	"context"
	"embed"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
)

// The JSON Schemas (draft 2020-12) of the dataset's line types (§ 15), one file per type in
// schema/, served at /v1/schema/{type}.json, each with its $id there. They say what the
// protocol says of each line — its enums, lengths, id and key forms, evidence kinds with
// their refs' forms — and pass Ajv's strict mode (TestDatasetSchemasUnderAjv). The files hold
// the reference limits of § 8; a schema is served with this instance's (schemaLimits).
// TestDatasetLinesMatchTheirSchemas validates every line of a real export against them, and
// TestDatasetSchemasSayWhatTheRulesSay holds them to the rules' own tables.

//go:embed schema/*.json
var datasetSchemas embed.FS

// DatasetSchema is the schema of the line type typ as the project holds it (with the
// reference limits), false for no such type.
func DatasetSchema(typ string) ([]byte, bool) {
	if !slices.Contains(DatasetLineTypes, typ) {
		return nil, false
	}
	b, err := datasetSchemas.ReadFile("schema/" + typ + ".json")
	return b, err == nil
}

// schemaLimits are the members of the schemas that carry a limit of § 8, each by its JSON
// pointer in every schema that has it: the files hold the reference value, a served schema
// this instance's.
var schemaLimits = []struct {
	pointer string
	limit   func(*Limits) int
}{
	{"/$defs/text/maxLength", func(l *Limits) int { return l.BodyMaxChars }},
	{"/properties/body/maxLength", func(l *Limits) int { return l.BodyMaxChars }},
	{"/$defs/party/properties/extension/maxLength", func(l *Limits) int { return l.ExtensionMaxChars }},
	{"/$defs/provenance/properties/model/maxLength", func(l *Limits) int { return l.ProvenanceFieldMaxChars }},
	{"/$defs/provenance/properties/client/maxLength", func(l *Limits) int { return l.ProvenanceFieldMaxChars }},
	{"/$defs/evidence/maxItems", func(l *Limits) int { return l.EvidenceMaxItems }},
	{"/$defs/evidenceItem/properties/ref/maxLength", func(l *Limits) int { return l.EvidenceRefMaxChars }},
	{"/properties/message_count/maximum", func(l *Limits) int { return l.ThreadMaxMessages }},
	{"/properties/quorum/properties/verifiers/maximum", func(l *Limits) int { return l.ClaimMaxStances }},
}

// DatasetSchemaFor is the schema of the line type typ with the limits l, false for no such
// type. With the reference limits it is the file as it is.
func DatasetSchemaFor(typ string, l Limits) ([]byte, bool) {
	raw, ok := DatasetSchema(typ)
	if !ok {
		return nil, false
	}
	var doc any
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	if err := dec.Decode(&doc); err != nil {
		panic(fmt.Sprintf("protocol: schema/%s.json: %v", typ, err)) // embedded and tested
	}
	changed := false
	for _, sl := range schemaLimits {
		if schemaMember(doc, sl.pointer, json.Number(fmt.Sprint(sl.limit(&l)))) {
			changed = true
		}
	}
	if !changed {
		return raw, true
	}
	out, err := json.MarshalIndent(doc, "", "  ")
	if err != nil {
		panic(fmt.Sprintf("protocol: schema/%s.json: %v", typ, err))
	}
	return append(out, '\n'), true
}

// schemaMember sets the member at pointer (a JSON pointer of object members) of doc to v when
// it is there, and reports whether that changed it.
func schemaMember(doc any, pointer string, v json.Number) bool {
	names := strings.Split(strings.TrimPrefix(pointer, "/"), "/")
	for _, name := range names[:len(names)-1] {
		m, ok := doc.(map[string]any)
		if !ok {
			return false
		}
		doc = m[name]
	}
	m, ok := doc.(map[string]any)
	last := names[len(names)-1]
	if !ok || m[last] == nil || m[last] == v {
		return false
	}
	m[last] = v
	return true
}

// SchemaResult is one line type's schema, which HTTP sends as the document itself.
type SchemaResult struct {
	Schema json.RawMessage
}

// MarshalJSON writes the schema.
func (r *SchemaResult) MarshalJSON() ([]byte, error) { return r.Schema, nil }

// IsDocument: the schema goes out as a document of its own media type.
func (r *SchemaResult) IsDocument() bool { return true }

// Document is the schema with its media type.
func (r *SchemaResult) Document() (string, []byte, error) {
	return "application/schema+json", r.Schema, nil
}

// GetSchema answers {type}: the schema of that line type with this instance's limits; no
// token is needed.
func (s *Service) GetSchema(_ context.Context, a *Actor, raw []byte) (*SchemaResult, error) {
	o, err := decodeObject(raw, "")
	if err != nil {
		return nil, err
	}
	typ, _, err := o.str("type")
	if err != nil {
		return nil, err
	}
	if err := o.rest(); err != nil {
		return nil, err
	}
	schema, ok := DatasetSchemaFor(typ, s.limits)
	if !ok {
		return nil, Refuse(ReasonNotFound, "no schema %q: the line types are %s", typ, strings.Join(DatasetLineTypes, ", "))
	}
	return &SchemaResult{Schema: schema}, nil
}
