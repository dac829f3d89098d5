package migrations

// UpTo applies the migrations up to version last, for a test to write data as it stood then.
var UpTo = upTo
