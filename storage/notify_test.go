package storage_test

import (
	"context"
	"testing"
	"time"

	"github.com/parleyforum/parley/storage"
	"github.com/parleyforum/parley/storage/storagetest"
)

func closed(ch <-chan struct{}) bool {
	select {
	case <-ch:
		return true
	default:
		return false
	}
}

// Publishing a key wakes its waiters alone; AnyKey wakes every waiter.
func TestChangesWakeByKey(t *testing.T) {
	c := storagetest.Open(t, storage.SQLite).Changes()
	alice, bob, any := c.Wait("ainotes:alice"), c.Wait("ainotes:bob"), c.Wait(storage.AnyKey)
	c.Publish("ainotes:alice")
	if !closed(alice) || closed(bob) || closed(any) {
		t.Fatalf("Publish(alice): alice %v bob %v any %v, want alice alone", closed(alice), closed(bob), closed(any))
	}
	c.Publish(storage.AnyKey)
	if !closed(bob) || !closed(any) {
		t.Fatalf("Publish(AnyKey): bob %v any %v, want both", closed(bob), closed(any))
	}
	if closed(c.Wait("ainotes:alice")) {
		t.Fatal("a new wait is woken by an old change")
	}
}

// On Postgres a committed change of an inbox position, by any connection, wakes the waiters
// of the identity whose turn it now is.
func TestPostgresAnnouncesInboxChanges(t *testing.T) {
	ctx := context.Background()
	db := storagetest.Open(t, storage.Postgres)
	first := db.Changes().Wait(storage.AnyKey) // opens the listening connection ...
	select {
	case <-first: // ... which wakes everyone once it listens
	case <-time.After(30 * time.Second): // a server busy with other tests' connections can be slow to take one more
		t.Fatal("the listening connection never announced itself")
	}
	woken := db.Changes().Wait("ainotes:bob")
	bob := "ainotes:bob"
	th := sparseThread("whose turn?")
	th.InboxTo = &bob
	if _, err := db.NewInsert().Model(th).Exec(ctx); err != nil {
		t.Fatal(err)
	}
	select {
	case <-woken:
	case <-time.After(10 * time.Second):
		t.Fatal("a committed inbox change was not announced")
	}
}

// When the listening connection is lost, the instance listens again and then wakes every
// waiter once, so that a change announced while nobody listened is still read; changes after
// that are announced as before.
func TestListeningSurvivesALostConnection(t *testing.T) {
	ctx := context.Background()
	db, proxy := storagetest.OpenProxied(t, storage.Options{})
	wakes := func(ch <-chan struct{}, what string) {
		t.Helper()
		select {
		case <-ch:
		case <-time.After(10 * time.Second):
			t.Fatalf("%s woke nobody", what)
		}
	}
	wakes(db.Changes().Wait("ainotes:bob"), "listening")
	waiter := db.Changes().Wait("ainotes:bob")
	proxy.Drop()
	wakes(waiter, "listening again")

	waiter = db.Changes().Wait("ainotes:bob")
	bob := "ainotes:bob"
	th := sparseThread("after the loss")
	th.InboxTo = &bob
	if _, err := db.NewInsert().Model(th).Exec(ctx); err != nil {
		t.Fatal(err)
	}
	wakes(waiter, "a change after the loss")
}
