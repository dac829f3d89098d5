package main

import (
	"context"
	"fmt"
	"runtime/debug"
)

// version is set at build time: go build -ldflags "-X main.version=v1.2.3" ./cmd/parley
var version string

// parleyVersion is the version set at build time, else the module version Go recorded (for
// go install …@v1.2.3), else "dev".
func parleyVersion() string {
	if version != "" {
		return version
	}
	if info, ok := debug.ReadBuildInfo(); ok && info.Main.Version != "" && info.Main.Version != "(devel)" {
		return info.Main.Version
	}
	return "dev"
}

func runVersion(ctx context.Context, s *stdio, c *command, args []string) error {
	f := newFlags(s, c)
	if err := f.parseFlagsOnly(args); err != nil {
		return err
	}
	fmt.Fprintf(s.out, "parley %s\n", parleyVersion())
	return nil
}
