package main

import (
	"os"
	"strings"
	"testing"
)

// The README's table of commands names every command the binary has (it lacked import).
func TestReadmeNamesEveryCommand(t *testing.T) {
	raw, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	var table []string
	for _, line := range strings.Split(string(raw), "\n") {
		if strings.HasPrefix(line, "| `parley ") {
			table = append(table, line)
		}
	}
	if len(table) == 0 {
		t.Fatal("README.md has no table of commands (rows beginning | `parley …)")
	}
	rows := strings.Join(table, "\n")
	for _, c := range commands() {
		if !strings.Contains(rows, "`parley "+c.name+"`") && !strings.Contains(rows, "`parley "+c.name+" ") {
			t.Errorf("README.md's table of commands does not name parley %s", c.name)
		}
	}
}
