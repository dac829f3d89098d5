package views

import (
	"os/exec"
	"testing"
)

// TestGeneratedCodeIsCurrent fails when a .templ file anywhere in the module was changed
// without running `make generate`: the committed *_templ.go would then be what the binary
// renders. templ's own check mode compares without writing, with the templ version pinned in
// go.mod.
func TestGeneratedCodeIsCurrent(t *testing.T) {
	goCmd, err := exec.LookPath("go")
	if err != nil {
		t.Fatalf("the go command is needed to run templ: %v", err)
	}
	// From the module's root, as make generate runs it: the generated code names its .templ
	// file by the path from there.
	cmd := exec.Command(goCmd, "tool", "templ", "generate", "-check", "-path", ".")
	cmd.Dir = ".."
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("generated templ code is stale, run make generate and commit the *_templ.go files: %v\n%s", err, out)
	}
}
