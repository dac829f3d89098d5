package protocol

import (
	"embed"
	"slices"
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
