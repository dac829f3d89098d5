package admission

import (
	"context"
	"errors"
	"testing"
	"time"
)

func TestCapacityFollowsTheMachine(t *testing.T) {
	const gib = 1 << 30
	cases := []struct {
		name   string
		memory int64
		cpus   int
		want   map[string]int
	}{
		{"small server", 512 << 20, 1, map[string]int{"read": 32, "write": 16, "password": 2, "export": 8, "drawing": 1, "import": 1}},
		{"default budget", DefaultMemoryBudget, 2, map[string]int{"read": 64, "write": 32, "password": 4, "export": 8, "drawing": 2, "import": 1}},
		{"large server", 64 * gib, 16, map[string]int{"read": 512, "write": 256, "password": 4, "export": 8, "drawing": 2, "import": 2}},
		{"tiny memory", 64 << 20, 2, map[string]int{"read": 64, "write": 32, "password": 1, "export": 2, "drawing": 1, "import": 1}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := Config{MemoryLimit: tc.memory, CPUs: tc.cpus}.Capacities()
			for name, want := range tc.want {
				if got[name] != want {
					t.Errorf("%s: %d slots, want %d", name, got[name], want)
				}
			}
		})
	}
	var cfg Config
	cfg.Capacity[Export] = 3
	if got := New(cfg).Capacity(Export); got != 3 {
		t.Errorf("an override of 3 export slots gave %d", got)
	}
}

func TestAcquireWaitsThenRefuses(t *testing.T) {
	var cfg Config
	cfg.Capacity[Drawing] = 1
	cfg.Wait = 20 * time.Millisecond
	g := New(cfg)
	ctx := context.Background()

	release, err := g.Acquire(ctx, Drawing, "ainotes:alice")
	if err != nil {
		t.Fatalf("first drawing: %v", err)
	}
	_, err = g.Acquire(ctx, Drawing, "ainotes:bob")
	var busy *Busy
	if !errors.As(err, &busy) || busy.HolderFull || busy.RetryAfter < 1 {
		t.Fatalf("second drawing with the only slot taken: %v, want a Busy of the class with a retry", err)
	}
	if g.Held("ainotes:bob") != 0 {
		t.Errorf("a refused holder still holds %d slots", g.Held("ainotes:bob"))
	}

	// A waiter gets the slot given back within its wait.
	got := make(chan error, 1)
	go func() {
		g2release, err := g.Acquire(ctx, Drawing, "ainotes:bob")
		if err == nil {
			g2release()
		}
		got <- err
	}()
	release()
	release() // twice is harmless
	if err := <-got; err != nil && !errors.As(err, &busy) {
		t.Fatalf("waiter: %v", err)
	}
	if g.InUse(Drawing) != 0 || g.Held("ainotes:alice") != 0 {
		t.Errorf("after release: %d in use, alice holds %d", g.InUse(Drawing), g.Held("ainotes:alice"))
	}
}

func TestOneHolderHoldsItsShareOnly(t *testing.T) {
	g := New(Config{MemoryLimit: 16 << 30, Wait: time.Millisecond})
	ctx := context.Background()
	var releases []func()
	for _, c := range []Class{Export, Password} {
		release, err := g.Acquire(ctx, c, "ainotes:alice")
		if err != nil {
			t.Fatalf("%s: %v", c, err)
		}
		releases = append(releases, release)
	}
	_, err := g.Acquire(ctx, Export, "ainotes:alice")
	var busy *Busy
	if !errors.As(err, &busy) || !busy.HolderFull {
		t.Fatalf("a third heavy slot for one holder: %v, want HolderFull", err)
	}
	if release, err := g.Acquire(ctx, Export, "ainotes:bob"); err != nil {
		t.Fatalf("another holder: %v", err)
	} else {
		release()
	}
	// Light work is not counted against the share.
	if release, err := g.Acquire(ctx, Read, "ainotes:alice"); err != nil {
		t.Fatalf("a read beside two heavy slots: %v", err)
	} else {
		release()
	}
	releases[0]()
	if release, err := g.Acquire(ctx, Export, "ainotes:alice"); err != nil {
		t.Fatalf("after giving one back: %v", err)
	} else {
		release()
	}
	releases[1]()
	if g.Held("ainotes:alice") != 0 {
		t.Errorf("alice holds %d after giving every slot back", g.Held("ainotes:alice"))
	}
}

func TestAcquireEndsWithItsContext(t *testing.T) {
	var cfg Config
	cfg.Capacity[Import] = 1
	cfg.Wait = time.Hour
	g := New(cfg)
	release, err := g.Acquire(context.Background(), Import, "")
	if err != nil {
		t.Fatal(err)
	}
	defer release()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := g.Acquire(ctx, Import, "ainotes:alice"); !errors.Is(err, context.Canceled) {
		t.Fatalf("with an ended context: %v", err)
	}
	if g.Held("ainotes:alice") != 0 {
		t.Errorf("the holder's share was not given back")
	}
}

func TestClassNames(t *testing.T) {
	for _, c := range Classes() {
		back, ok := ClassByName(c.String())
		if !ok || back != c {
			t.Errorf("%s does not name itself", c)
		}
	}
	if _, ok := ClassByName("bogus"); ok {
		t.Error("bogus is a class")
	}
}

// A heavy class's slots hold at most the quarter of the memory they are sized from, each
// what SlotBytes says one piece of its work may hold; the light classes hold no such share.
func TestSlotBytesSizeTheHeavySlots(t *testing.T) {
	cfg := Config{MemoryLimit: 16 << 30, CPUs: 2}
	for _, c := range Classes() {
		if !c.Heavy() {
			if c.SlotBytes() != 0 {
				t.Errorf("%s is light but has %d bytes a slot", c, c.SlotBytes())
			}
			continue
		}
		slots := int64(cfg.Capacities()[c.String()])
		if c.SlotBytes() <= 0 || slots*c.SlotBytes() > cfg.MemoryLimit/4 {
			t.Errorf("%s: %d slots of %d bytes, over a quarter of %d", c, slots, c.SlotBytes(), cfg.MemoryLimit)
		}
	}
}

// The zero Class is no class: what a route that declared none would have.
func TestTheZeroClassIsUndeclared(t *testing.T) {
	var none Class
	if none.Declared() || none.Gated() {
		t.Errorf("the zero class is declared (%v) or gated (%v)", none.Declared(), none.Gated())
	}
	for _, c := range Classes() {
		if !c.Declared() {
			t.Errorf("%s is not declared", c)
		}
	}
}

// A listener takes no slot: its waits are bounded by their own counts.
func TestListenersTakeNoSlot(t *testing.T) {
	var cfg Config
	cfg.Wait = time.Millisecond
	g := New(cfg)
	for range 3 * g.Capacity(Read) {
		if _, err := g.Acquire(context.Background(), Listen, "ainotes:alice"); err != nil {
			t.Fatalf("a listener was refused: %v", err)
		}
	}
	if g.Held("ainotes:alice") != 0 {
		t.Errorf("listeners hold %d heavy slots", g.Held("ainotes:alice"))
	}
	if _, listed := cfg.Capacities()["listen"]; listed {
		t.Error("listeners have a capacity")
	}
}
