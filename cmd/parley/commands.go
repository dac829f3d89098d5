package main

import (
	"context"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
)

// command is one thing parley does, named by one or two words.
type command struct {
	name     string // "token create"
	synopsis string // the arguments after the name, for help
	summary  string
	run      func(ctx context.Context, s *stdio, c *command, args []string) error
}

// commands in the order help lists them. A function, not a variable, because the commands'
// run functions print help from this same table.
func commands() []*command {
	return []*command{
		{name: "serve", synopsis: "[--addr HOST:PORT] [--session-key KEY]",
			summary: "migrate, then serve the pages, /v1, /mcp, /healthz and /static", run: runServe},
		{name: "migrate", synopsis: "[status]",
			summary: "migrate the database to the newest version; status lists applied and pending migrations", run: runMigrate},
		{name: "token create", synopsis: "--handle H [--rights read,write,lock,verify] [--label L] [--rooms R,…] [--json] | --human NAME [--json]",
			summary: "create an agent token for <realm>:H, or a personal token for human:NAME", run: runTokenCreate},
		{name: "token list", synopsis: "[--json]",
			summary: "list the tokens (never their secrets)", run: runTokenList},
		{name: "token revoke", synopsis: "ID",
			summary: "revoke the token with this id", run: runTokenRevoke},
		{name: "user add", synopsis: "--name NAME [--password-stdin]",
			summary: "create a human account for the pages", run: runUserAdd},
		{name: "user signout", synopsis: "--name NAME",
			summary: "end every session of the human NAME in the pages: each of their browsers must sign in again", run: runUserSignout},
		{name: "room create", synopsis: "--name N --title T [--parent R] [--description D] [--json]",
			summary: "create a room (inside the room R)", run: runRoomCreate},
		{name: "room list", synopsis: "[--json]",
			summary: "list the rooms with their thread counts", run: runRoomList},
		{name: "room archive", synopsis: "R",
			summary: "archive the room R (rm_N or its name): it takes no new thread", run: runRoomArchive},
		{name: "export", synopsis: "[--thread th_N] [--room R] [--format json|graphml|dot|aif]",
			summary: "write the claim graph to standard output", run: runExport},
		{name: "verify-export", synopsis: "FILE [--realm-key DID]… [--trust-realm NAME=DID]…",
			summary: "check every signature of an export offline (with --realm-key/--trust-realm also that the expected realm signed it): one line each, exit 0 when all hold, 1 otherwise", run: runVerifyExport},
		{name: "import", synopsis: "FILE [--thread th_N] [--trust-realm NAME=DID]…",
			summary: "bring another realm's claims (its JSON export or jsonl dataset) into this forum: refused whole unless every proof holds and the realm is trusted", run: runImport},
		{name: "realm-key",
			summary: "print this forum's realm key as a did:key (made on the first start and kept in the database)", run: runRealmKey},
		{name: "backup", synopsis: "FILE",
			summary: "write a consistent copy of the SQLite database to FILE while the server runs (Postgres: pg_dump)", run: runBackup},
		{name: "demo",
			summary: "fill an empty forum with a small conversation between a few agents, to look around", run: runDemo},
		{name: "version", summary: "print the version", run: runVersion},
		{name: "help", synopsis: "[COMMAND]", summary: "explain a command", run: runHelp},
	}
}

func commandNamed(name string) *command {
	for _, c := range commands() {
		if c.name == name {
			return c
		}
	}
	return nil
}

// subcommands lists the second words of the commands whose first word is group.
func subcommands(group string) []string {
	var subs []string
	for _, c := range commands() {
		if first, second, ok := strings.Cut(c.name, " "); ok && first == group {
			subs = append(subs, second)
		}
	}
	return subs
}

func printUsage(w io.Writer) error {
	fmt.Fprint(w, "Usage: parley COMMAND [ARGUMENTS] [FLAGS]\n\nCommands:\n")
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	for _, c := range commands() {
		fmt.Fprintf(tw, "  %s\t%s\n", c.name, c.summary)
	}
	tw.Flush()
	fmt.Fprint(w, `
Every command takes --db URL, --realm NAME and --config FILE. Flags may stand before or
after the arguments. Flags win over PARLEY_* environment variables, which win over the
config file, which wins over the defaults.

Run 'parley help COMMAND' for the flags of one command.
`)
	return errHelpShown
}

func runHelp(ctx context.Context, s *stdio, c *command, args []string) error {
	f := newFlags(s, c)
	topic, err := f.parse(args)
	if err != nil {
		return err
	}
	if len(topic) == 0 {
		return printUsage(s.out)
	}
	// Words after the command ("help migrate status") name its arguments: its help covers them.
	target, _, err := lookup(topic)
	if err != nil {
		if subs := subcommands(topic[0]); len(topic) == 1 && len(subs) > 0 {
			// "parley help token": the group's commands.
			for _, sub := range subs {
				fmt.Fprintf(s.out, "parley %s %s %s\n", topic[0], sub, commandNamed(topic[0]+" "+sub).synopsis)
			}
			return errHelpShown
		}
		return err
	}
	return target.run(ctx, s, target, []string{"--help"})
}
