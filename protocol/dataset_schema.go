package protocol

import (
	"context"
	"embed"
	"encoding/json"
	"slices"
	"strings"
)

// The JSON Schemas (draft 2020-12) of the dataset's line types (§ 15), one file per type in
// schema/, served at /v1/schema/{type}.json. TestDatasetLinesMatchTheirSchemas validates
// every line of a real export against them.

//go:embed schema/*.json
var datasetSchemas embed.FS

// DatasetSchema is the schema of the line type typ, false for no such type.
func DatasetSchema(typ string) ([]byte, bool) {
	if !slices.Contains(DatasetLineTypes, typ) {
		return nil, false
	}
	b, err := datasetSchemas.ReadFile("schema/" + typ + ".json")
	return b, err == nil
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

// GetSchema answers {type}: the schema of that line type; no token is needed.
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
	schema, ok := DatasetSchema(typ)
	if !ok {
		return nil, Refuse(ReasonNotFound, "no schema %q: the line types are %s", typ, strings.Join(DatasetLineTypes, ", "))
	}
	return &SchemaResult{Schema: schema}, nil
}
