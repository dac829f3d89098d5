package main

import (
	"context"
	"errors"
)

// runExport takes the flags of the documented export so that scripts written against
// OPERATOR.md get the honest answer below rather than a flag error. The claim graph it
// writes comes with the claims.
func runExport(ctx context.Context, s *stdio, c *command, args []string) error {
	f := newFlags(s, c)
	f.String("thread", "", "export only this thread (th_N)")
	f.String("format", "json", "json, graphml, dot or aif")
	if err := f.parseFlagsOnly(args); err != nil {
		return err
	}
	return errors.New("export: not available yet")
}
