package main

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/parleyforum/parley/protocol"
)

// The rooms of PROTOCOL.md § 16 at the command line: the operator, who holds the database,
// writes rooms as a human administrator does in the pages; the rules are the operation
// layer's.

func runRoomCreate(ctx context.Context, s *stdio, c *command, args []string) error {
	f := newFlags(s, c)
	name := f.String("name", "", "the room's `NAME`: lower-case letters, digits, '.', '_', '-'")
	title := f.String("title", "", "the room's `TITLE`")
	description := f.String("description", "", "what the room is for")
	parent := f.String("parent", "", "the `ROOM` this room is inside (rm_N or its name)")
	asJSON := f.Bool("json", false, "print the room as JSON")
	if err := f.parseFlagsOnly(args); err != nil {
		return err
	}
	given := f.given()
	if _, ok := given["name"]; !ok {
		return usagef("room create: give --name NAME and --title TITLE")
	}
	if _, ok := given["title"]; !ok {
		return usagef("room create: give --name NAME and --title TITLE")
	}
	input := map[string]any{"name": *name, "title": *title}
	if *description != "" {
		input["description"] = *description
	}
	if *parent != "" {
		input["parent"] = *parent
	}
	return withService(ctx, f, func(svc *protocol.Service) error {
		raw, _ := json.Marshal(input)
		res, err := svc.CreateRoom(ctx, protocol.OperatorActor(), raw)
		if err != nil {
			return refusalError("room create", err)
		}
		if *asJSON {
			return json.NewEncoder(s.out).Encode(res.Room)
		}
		fmt.Fprintf(s.out, "created room %s (%s)\n", res.Room.ID, res.Room.Name)
		return nil
	})
}

func runRoomList(ctx context.Context, s *stdio, c *command, args []string) error {
	f := newFlags(s, c)
	asJSON := f.Bool("json", false, "print {\"rooms\": […]} as JSON")
	if err := f.parseFlagsOnly(args); err != nil {
		return err
	}
	return withService(ctx, f, func(svc *protocol.Service) error {
		res, err := svc.ListRooms(ctx, protocol.OperatorActor(), []byte(`{}`))
		if err != nil {
			return refusalError("room list", err)
		}
		if *asJSON {
			return json.NewEncoder(s.out).Encode(res)
		}
		tw := tabwriter.NewWriter(s.out, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "ID\tNAME\tTITLE\tPARENT\tARCHIVED\tTHREADS\tLAST ACTIVITY")
		for _, r := range res.Rooms {
			parent, last := "-", "-"
			if r.Parent != nil {
				parent = *r.Parent
			}
			if r.LastActivity != nil {
				last = r.LastActivity.Format(time.RFC3339)
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%v\t%d\t%s\n", r.ID, r.Name, titleLine(r.Title), parent, r.Archived, r.Threads, last)
		}
		return tw.Flush()
	})
}

func runRoomArchive(ctx context.Context, s *stdio, c *command, args []string) error {
	f := newFlags(s, c)
	positional, err := f.parse(args)
	if err != nil {
		return err
	}
	if len(positional) != 1 {
		return usagef("room archive: give exactly one room (rm_N or its name; see parley room list)")
	}
	return withService(ctx, f, func(svc *protocol.Service) error {
		raw, _ := json.Marshal(map[string]any{"room": positional[0], "archived": true})
		res, err := svc.UpdateRoom(ctx, protocol.OperatorActor(), raw)
		if err != nil {
			return refusalError("room archive", err)
		}
		fmt.Fprintf(s.out, "archived room %s (%s)\n", res.Room.ID, res.Room.Name)
		return nil
	})
}

// withService opens the migrated database of the flags and runs fn with the operation
// layer over it.
func withService(ctx context.Context, f *cmdline, fn func(svc *protocol.Service) error) error {
	cfg, err := f.config()
	if err != nil {
		return err
	}
	db, err := openMigrated(ctx, cfg)
	if err != nil {
		return err
	}
	defer db.Close()
	return fn(protocol.New(db, protocol.Options{Realm: cfg.Realm}))
}

// refusalError is a refusal of the operation layer as one line.
func refusalError(command string, err error) error {
	if e, ok := protocol.AsError(err); ok {
		return fmt.Errorf("%s: %s", command, e.Message)
	}
	return fmt.Errorf("%s: %w", command, err)
}

// titleLine keeps a listing's row on one line, whatever a title holds.
func titleLine(s string) string {
	return strings.Map(func(r rune) rune {
		if r == '\n' || r == '\r' || r == '\t' {
			return ' '
		}
		return r
	}, s)
}
