// Command parley is the Parley server and its operator's tool: one binary that serves the
// forum, migrates its database and manages its tokens and accounts. OPERATOR.md is the
// contract of its command line.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
)

func main() {
	s := &stdio{in: os.Stdin, out: os.Stdout, err: os.Stderr, environ: os.Environ()}
	os.Exit(run(context.Background(), os.Args[1:], s))
}

// stdio is what a command reads and writes, besides the database.
type stdio struct {
	in      *os.File // a file, so that a command can tell whether it is a terminal
	out     io.Writer
	err     io.Writer
	environ []string
}

// Exit statuses.
const (
	exitOK      = 0
	exitRuntime = 1 // the command was right but failed: database unreachable, unknown id …
	exitUsage   = 2 // the command was wrong: bad flag, missing value, unknown command …
)

// usageError marks an error the operator fixes by changing the command line or the
// configuration; every other error is a runtime error.
type usageError struct{ msg string }

func (e usageError) Error() string { return e.msg }

func usagef(format string, args ...any) error { return usageError{fmt.Sprintf(format, args...)} }

// errHelpShown ends a command that printed its help because it was asked to.
var errHelpShown = errors.New("help shown")

// run executes one command line and returns the exit status. Whatever fails, the operator
// gets one line on standard error, never a stack trace.
func run(ctx context.Context, args []string, s *stdio) int {
	err := dispatch(ctx, args, s)
	if err == nil || errors.Is(err, errHelpShown) {
		return exitOK
	}
	fmt.Fprintf(s.err, "parley: %s\n", oneLine(err.Error()))
	if errors.As(err, new(usageError)) {
		return exitUsage
	}
	return exitRuntime
}

// dispatch finds the command named by the first one or two words and runs it on the rest.
func dispatch(ctx context.Context, args []string, s *stdio) error {
	if len(args) == 0 {
		return usagef("no command given (see parley help)")
	}
	switch args[0] {
	case "-h", "-help", "--help":
		return printUsage(s.out)
	}
	leading, args, err := leadingFlags(args)
	if err != nil {
		return err
	}
	c, rest, err := lookup(args)
	if err != nil {
		return err
	}
	return c.run(ctx, s, c, append(leading, rest...))
}

// leadingFlags takes the flags every command has (--db, --realm, --config) from before the
// command's name, so that "parley --db URL token list" works as "parley token list --db URL".
// Other flags belong to one command, which is not known yet: they must come after it.
func leadingFlags(args []string) (leading, rest []string, err error) {
	for len(args) > 0 && strings.HasPrefix(args[0], "-") {
		name, _, hasValue := strings.Cut(strings.TrimLeft(args[0], "-"), "=")
		switch {
		case name != "db" && name != "realm" && name != "config":
			return nil, nil, usagef("%s: this flag comes after the command: parley COMMAND %s … (see parley help)", args[0], args[0])
		case hasValue:
			leading, args = append(leading, args[0]), args[1:]
		case len(args) < 2:
			return nil, nil, usagef("%s needs a value", args[0])
		default:
			leading, args = append(leading, args[0], args[1]), args[2:]
		}
	}
	if len(args) == 0 {
		return nil, nil, usagef("no command given (see parley help)")
	}
	return leading, args, nil
}

// lookup finds the command for args and returns the arguments after its name.
func lookup(args []string) (*command, []string, error) {
	if len(args) > 1 {
		if c := commandNamed(args[0] + " " + args[1]); c != nil {
			return c, args[2:], nil
		}
	}
	if c := commandNamed(args[0]); c != nil {
		return c, args[1:], nil
	}
	if subs := subcommands(args[0]); len(subs) > 0 {
		if len(args) == 1 || strings.HasPrefix(args[1], "-") {
			return nil, nil, usagef("%s needs a subcommand: %s (see parley help %s)", args[0], strings.Join(subs, ", "), args[0])
		}
		return nil, nil, usagef("unknown command %q: %s has %s (see parley help %s)",
			args[0]+" "+args[1], args[0], strings.Join(subs, ", "), args[0])
	}
	return nil, nil, usagef("unknown command %q (see parley help)", args[0])
}

// oneLine folds a multi-line message (some driver errors have several) into one line.
func oneLine(msg string) string {
	return strings.Join(strings.Fields(msg), " ")
}
