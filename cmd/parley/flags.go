package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"regexp"
	"strings"
	"text/tabwriter"
)

// cmdline is the flag set of one command, with the flags every command takes already on it.
type cmdline struct {
	*flag.FlagSet
	cmd *command
	s   *stdio
}

// newFlags starts the flag set of c with --db, --realm and --config.
func newFlags(s *stdio, c *command) *cmdline {
	fs := flag.NewFlagSet("parley "+c.name, flag.ContinueOnError)
	// The flag package's own messages span several lines; parse reports its errors in one.
	fs.SetOutput(io.Discard)
	f := &cmdline{FlagSet: fs, cmd: c, s: s}
	f.option("db")
	f.option("realm")
	fs.String("config", "", "read settings from this TOML `FILE` (also "+configEnv+")")
	return f
}

// option adds the flag of the named entry of the options table. Its default is shown in
// help only: which value wins is decided by load, which needs to know whether the flag was
// given at all.
func (f *cmdline) option(name string) {
	for _, o := range options {
		if o.flag == name {
			usage := o.usage
			if o.env != "" {
				usage += " (also " + o.env + ")"
			}
			if o.repeat {
				f.Var(&listFlag{}, o.flag, usage)
				return
			}
			f.String(o.flag, o.def, usage)
			return
		}
	}
	panic("parley: no option " + name)
}

// parse reads args, in which flags may stand before, between and after the positional
// arguments, and returns the positional ones. Everything after "--" is positional.
//
// The flag package stops at the first positional argument; parse takes it and goes on with
// the rest. (A flag whose value is "--" must therefore be written --flag=--.)
func (f *cmdline) parse(args []string) ([]string, error) {
	var positional []string
	for {
		if err := f.Parse(args); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				f.printHelp()
				return nil, errHelpShown
			}
			// The flag package names flags with one dash; OPERATOR.md and the help use two.
			msg := oneDash.ReplaceAllString(err.Error(), "$1--$2")
			return nil, usagef("%s: %s (see parley help %s)", f.cmd.name, msg, f.cmd.name)
		}
		rest := f.Args()
		if len(rest) == 0 {
			return positional, nil
		}
		if consumed := len(args) - len(rest); consumed > 0 && args[consumed-1] == "--" {
			return append(positional, rest...), nil
		}
		positional = append(positional, rest[0])
		args = rest[1:]
	}
}

// oneDash finds a flag named with one dash in the flag package's messages.
var oneDash = regexp.MustCompile(`(^| )-([a-z])`)

// given maps the flags set on the command line to their values.
func (f *cmdline) given() map[string]string {
	set := map[string]string{}
	f.Visit(func(fl *flag.Flag) { set[fl.Name] = fl.Value.String() })
	return set
}

// config is the configuration for this command: its flags over the environment over the
// config file over the defaults.
func (f *cmdline) config() (Config, error) {
	cfg, err := load(f.given(), f.s.environ)
	if err != nil {
		return cfg, usagef("%v", err)
	}
	return cfg, nil
}

// parseFlagsOnly parses the flags of a command that takes no positional arguments.
func (f *cmdline) parseFlagsOnly(args []string) error {
	positional, err := f.parse(args)
	if err != nil {
		return err
	}
	return f.noArguments(positional)
}

// noArguments refuses positional arguments for a command that takes none.
func (f *cmdline) noArguments(positional []string) error {
	if len(positional) > 0 {
		return usagef("%s: unexpected argument %q (see parley help %s)", f.cmd.name, positional[0], f.cmd.name)
	}
	return nil
}

// printHelp writes the command's synopsis and flags, spelt with two dashes as OPERATOR.md
// spells them.
func (f *cmdline) printHelp() {
	w := f.s.out
	fmt.Fprintf(w, "Usage: parley %s %s\n\n%s\n\nFlags:\n", f.cmd.name, f.cmd.synopsis, f.cmd.summary)
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	f.VisitAll(func(fl *flag.Flag) {
		name, usage := flag.UnquoteUsage(fl)
		if name != "" {
			name = " " + name
		}
		if fl.DefValue != "" && fl.DefValue != "false" {
			usage += fmt.Sprintf(" (default %s)", fl.DefValue)
		}
		fmt.Fprintf(tw, "  --%s%s\t%s\n", fl.Name, name, strings.TrimSpace(usage))
	})
	tw.Flush()
}

// listFlag is a flag that may be given more than once: its value is every value given,
// joined by commas.
type listFlag struct{ values []string }

func (l *listFlag) String() string { return strings.Join(l.values, ",") }

func (l *listFlag) Set(v string) error {
	l.values = append(l.values, v)
	return nil
}
