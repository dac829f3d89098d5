package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"

	"golang.org/x/term"

	"github.com/parleyforum/parley/protocol"
	"github.com/parleyforum/parley/storage"
	"github.com/parleyforum/parley/web/password"
)

func runUserAdd(ctx context.Context, s *stdio, c *command, args []string) error {
	f := newFlags(s, c)
	name := f.String("name", "", "the account's `NAME`: it acts as human:NAME")
	isAdmin := f.Bool("admin", false, "the account may hand out and revoke tokens in the pages")
	fromStdin := f.Bool("password-stdin", false, "read the password from standard input (one line) instead of a prompt")
	if err := f.parseFlagsOnly(args); err != nil {
		return err
	}
	if !protocol.ValidHandle(*name) {
		return usagef("user add: give --name NAME (lower-case letters, digits, '.', '_', '-'; up to 64), not %q", *name)
	}
	// Refuse before connecting: a prompt that cannot be answered should not wait for a
	// database first.
	if !*fromStdin && !term.IsTerminal(int(s.in.Fd())) {
		return usagef("user add: standard input is not a terminal: give the password with --password-stdin")
	}
	cfg, err := f.config()
	if err != nil {
		return err
	}
	db, err := openMigrated(ctx, cfg)
	if err != nil {
		return err
	}
	defer db.Close()
	// Asking for a password that cannot be used would waste the operator's typing.
	if _, err := db.UserByName(ctx, *name); err == nil {
		return userExists(*name)
	} else if !errors.Is(err, storage.ErrNotFound) {
		return err
	}

	var pw string
	if *fromStdin {
		pw, err = readPasswordLine(s.in)
	} else {
		pw, err = promptPassword(s, *name)
	}
	if err != nil {
		return err
	}
	if err := password.Check(pw); err != nil {
		return usagef("user add: %v", err)
	}
	hash, err := password.Hash(pw)
	if err != nil {
		return err
	}
	create := db.CreateUser
	if *isAdmin {
		create = db.CreateAdmin
	}
	if _, err := create(ctx, *name, hash); errors.Is(err, storage.ErrAlreadyExists) {
		return userExists(*name)
	} else if err != nil {
		return fmt.Errorf("creating user %s: %w", *name, err)
	}
	fmt.Fprintf(s.out, "created user %s (%s)\n", *name, protocol.HumanIdentity(*name))
	return nil
}

// runUserSignout ends every session of one human (storage/sessions.go): a stolen cookie, a
// lost laptop. The account stays; its owner signs in again.
func runUserSignout(ctx context.Context, s *stdio, c *command, args []string) error {
	f := newFlags(s, c)
	name := f.String("name", "", "the account's `NAME`")
	if err := f.parseFlagsOnly(args); err != nil {
		return err
	}
	if !protocol.ValidHandle(*name) {
		return usagef("user signout: give --name NAME (lower-case letters, digits, '.', '_', '-'; up to 64), not %q", *name)
	}
	cfg, err := f.config()
	if err != nil {
		return err
	}
	db, err := openMigrated(ctx, cfg)
	if err != nil {
		return err
	}
	defer db.Close()
	u, err := db.UserByName(ctx, *name)
	if errors.Is(err, storage.ErrNotFound) {
		return fmt.Errorf("there is no user named %s", *name)
	} else if err != nil {
		return err
	}
	n, err := db.EndSessions(ctx, u.ID)
	if err != nil {
		return fmt.Errorf("ending the sessions of %s: %w", *name, err)
	}
	sessions := "sessions"
	if n == 1 {
		sessions = "session"
	}
	fmt.Fprintf(s.out, "ended %d %s of %s\n", n, sessions, protocol.HumanIdentity(*name))
	return nil
}

func userExists(name string) error {
	return fmt.Errorf("a user named %s already exists", name)
}

// readPasswordLine reads the password from r: everything up to the end of the first line.
// One trailing newline (from echo or a here-string) is not part of the password; a second
// line means the input is not what the operator thinks it is.
func readPasswordLine(r io.Reader) (string, error) {
	data, err := io.ReadAll(io.LimitReader(r, password.MaxBytes+3))
	if err != nil {
		return "", fmt.Errorf("reading the password from standard input: %v", err)
	}
	data = bytes.TrimSuffix(data, []byte("\n"))
	data = bytes.TrimSuffix(data, []byte("\r"))
	if bytes.ContainsAny(data, "\r\n") {
		return "", usagef("user add: --password-stdin reads one line, and standard input has several")
	}
	return string(data), nil
}

// promptPassword asks twice on the terminal, without echo.
func promptPassword(s *stdio, name string) (string, error) {
	fd := int(s.in.Fd())
	fmt.Fprintf(s.err, "Password for %s: ", name)
	first, err := term.ReadPassword(fd)
	fmt.Fprintln(s.err)
	if err != nil {
		return "", fmt.Errorf("reading the password: %v", err)
	}
	fmt.Fprint(s.err, "Repeat it: ")
	second, err := term.ReadPassword(fd)
	fmt.Fprintln(s.err)
	if err != nil {
		return "", fmt.Errorf("reading the password: %v", err)
	}
	if !bytes.Equal(first, second) {
		return "", usagef("user add: the two passwords differ")
	}
	return string(first), nil
}
